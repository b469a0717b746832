package loadgen

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// responder is a tiny raw-FIX venue for tests: it logs sessions on, answers
// each NewOrderSingle and OrderCancelRequest with an ExecutionReport, and
// misbehaves on purpose as configured. It is written independently of the
// load generator's codec (fixclient builds and parses its messages).
type responder struct {
	t  *testing.T
	ln net.Listener

	stallAtOrder     int           // the n-th order (1-based) of a connection waits stallFor first
	stallFor         time.Duration //
	dropEvery        int           // never answer every dropEvery-th order
	rejectEvery      int           // answer every rejectEvery-th order with 150=8
	sessionRejectAt  int           // answer this order with a session Reject (35=3)
	resendAfterLogon bool          // send ResendRequest(1..0) right after Logon
	testRequest      string        // send TestRequest with this TestReqID after Logon
	skipSeqAtOrder   int           // skip one outbound MsgSeqNum before answering this order
	closeAtOrder     int           // close the connection, unanswered, on this order

	mu         sync.Mutex
	orders     int
	dropped    int
	rejected   int
	closed     int
	gapFills   []*fixclient.Message
	heartbeats []*fixclient.Message
	newOrders  []*fixclient.Message
	wg         sync.WaitGroup
}

func newResponder(t *testing.T, configure func(*responder)) *responder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{t: t, ln: ln}
	if configure != nil {
		configure(r)
	}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

func (r *responder) addr() string { return r.ln.Addr().String() }

func (r *responder) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.serve(c) }()
	}
}

type responderConn struct {
	c      net.Conn
	client string
	seq    int
}

func (rc *responderConn) send(msgType string, body ...fixclient.Field) error {
	fields := append([]fixclient.Field{fixclient.F(35, msgType), fixclient.F(49, "VENUE"), fixclient.F(56, rc.client),
		fixclient.F(34, strconv.Itoa(rc.seq)), fixclient.F(52, fixclient.Timestamp(time.Now()))}, body...)
	rc.seq++
	_, err := rc.c.Write(fixclient.Build(fields...))
	return err
}

func (r *responder) serve(c net.Conn) {
	defer c.Close()
	in := fixwire.NewReader(c, messageBytesMax)
	rc := &responderConn{c: c, seq: 1}
	nOrders := 0
	for {
		raw, err := in.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				r.t.Logf("responder read: %v", err)
			}
			return
		}
		m, err := fixclient.Parse(raw)
		if err != nil {
			r.t.Errorf("responder got an unparsable message: %v", err)
			return
		}
		switch m.Type() {
		case "A":
			rc.client = m.Get(49)
			if m.Get(141) != "Y" || m.SeqNum() != 1 {
				r.t.Errorf("Logon without reset or not at seq 1: %s", m)
			}
			rc.send("A", fixclient.F(98, "0"), fixclient.F(108, m.Get(108)), fixclient.F(141, "Y"))
			if r.resendAfterLogon {
				rc.send("2", fixclient.F(7, "1"), fixclient.F(16, "0"))
			}
			if r.testRequest != "" {
				rc.send("1", fixclient.F(112, r.testRequest))
			}
		case "4":
			r.mu.Lock()
			r.gapFills = append(r.gapFills, m)
			r.mu.Unlock()
		case "0":
			r.mu.Lock()
			r.heartbeats = append(r.heartbeats, m)
			r.mu.Unlock()
		case "5":
			rc.send("5")
			return
		case "D":
			nOrders++
			if nOrders == r.closeAtOrder {
				r.mu.Lock()
				r.closed++
				r.mu.Unlock()
				return
			}
			if err := r.onOrder(rc, m, nOrders); err != nil {
				return
			}
		case "F":
			if err := rc.send("8", fixclient.F(37, "X"), fixclient.F(17, "E"+m.Get(11)), fixclient.F(11, m.Get(11)), fixclient.F(41, m.Get(41)),
				fixclient.F(150, "4"), fixclient.F(39, "4"), fixclient.F(55, m.Get(55)), fixclient.F(54, m.Get(54))); err != nil {
				return
			}
		}
	}
}

func (r *responder) onOrder(rc *responderConn, m *fixclient.Message, n int) error {
	r.mu.Lock()
	r.orders++
	r.newOrders = append(r.newOrders, m)
	drop := r.dropEvery > 0 && n%r.dropEvery == 0
	reject := !drop && r.rejectEvery > 0 && n%r.rejectEvery == 0
	if drop {
		r.dropped++
	}
	if reject {
		r.rejected++
	}
	r.mu.Unlock()
	if n == r.stallAtOrder {
		time.Sleep(r.stallFor)
	}
	if n == r.skipSeqAtOrder {
		rc.seq++
	}
	switch {
	case drop:
		return nil
	case n == r.sessionRejectAt:
		return rc.send("3", fixclient.F(45, strconv.Itoa(m.SeqNum())), fixclient.F(373, "5"), fixclient.F(58, "Value is incorrect"))
	case reject:
		return rc.send("8", fixclient.F(37, "NONE"), fixclient.F(17, "R"+m.Get(11)), fixclient.F(11, m.Get(11)), fixclient.F(150, "8"),
			fixclient.F(39, "8"), fixclient.F(103, "3"), fixclient.F(58, "price out of band"))
	}
	return rc.send("8", fixclient.F(37, strconv.Itoa(n)), fixclient.F(17, "E"+m.Get(11)), fixclient.F(11, m.Get(11)), fixclient.F(150, "0"),
		fixclient.F(39, "0"), fixclient.F(55, m.Get(55)), fixclient.F(54, m.Get(54)), fixclient.F(151, m.Get(38)))
}

func (r *responder) counts() (orders, dropped, rejected int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.orders, r.dropped, r.rejected
}
