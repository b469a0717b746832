package loadgen

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/internal/connset"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/quickfixgo/tag"
)

// Echo bounds.
const (
	// echoWriteBytesMax bounds the answers an echo connection batches into
	// one write: one read of orders is answered with one write.
	echoWriteBytesMax = 256 << 10
	// echoConnectionsMax bounds the connections an Echo serves at once.
	echoConnectionsMax = 1024
)

// Echo is a trivial raw-FIX venue that answers every NewOrderSingle with an
// ExecutionReport (New) and every OrderCancelRequest with an
// ExecutionReport (Canceled), with no matching, no journal and no store. It
// exists to calibrate the lab: run against it, the load generator measures
// itself and the loopback, which is the floor under every venue figure.
// It answers Logon (with ResetSeqNumFlag), TestRequest and Logout; any other
// message is read and ignored.
//
// A durable Echo (NewDurableEcho) journals every order and cancel, as it
// arrived, and answers only once the journal has made it durable: the floor
// under any venue that, like fixvenue, tells no client of a command before
// it is on disk.
type Echo struct {
	ln           net.Listener
	senderCompID string
	journal      *echoJournal   // nil: answers at once
	wg           sync.WaitGroup // the accept loop
	conns        *connset.Set
}

// NewEcho serves on ln as senderCompID until Close.
func NewEcho(ln net.Listener, senderCompID string) *Echo {
	return newEcho(ln, senderCompID, nil)
}

// NewDurableEcho is NewEcho with every order and cancel appended to w (its
// raw FIX bytes, one record each) and answered only after w has made it
// durable. w's PayloadBytesMax must hold a whole message; a record it
// refuses, or a failed journal, closes the connection. The Echo owns w
// from here on and closes it in Close.
func NewDurableEcho(ln net.Listener, senderCompID string, w *journal.Writer) *Echo {
	return newEcho(ln, senderCompID, newEchoJournal(w))
}

func newEcho(ln net.Listener, senderCompID string, j *echoJournal) *Echo {
	e := &Echo{ln: ln, senderCompID: senderCompID, journal: j, conns: connset.New(echoConnectionsMax)}
	e.wg.Add(1)
	go e.accept()
	return e
}

// Addr is the address clients connect to.
func (e *Echo) Addr() string { return e.ln.Addr().String() }

// Close stops accepting, closes every connection and waits for them.
func (e *Echo) Close() error {
	err := e.ln.Close()
	e.conns.Close()
	e.wg.Wait()
	e.conns.Wait()
	if e.journal != nil {
		err = errors.Join(err, e.journal.close())
	}
	return err
}

func (e *Echo) accept() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		e.conns.Serve(c, func(c net.Conn) { (&echoConn{e: e, c: c}).serve() })
	}
}

// echoConn is one client connection of an Echo.
type echoConn struct {
	e       *Echo
	c       net.Conn
	target  []byte // the client's CompID
	nextOut uint64
	execID  uint64
	in      inbound
	w       *fixWriter
	out     []byte
	clock   wallClock
	origID  []byte
	durable echoJournalReq // the orders of the current read, for a durable Echo
}

var errEchoLogout = errors.New("loadgen: echo: logged out")

func (ec *echoConn) serve() {
	ec.nextOut = 1
	ec.durable.done = make(chan error, 1)
	ec.w = newFixWriter(adminBytesMax)
	ec.out = make([]byte, 0, echoWriteBytesMax)
	buf := make([]byte, readBufferBytes)
	have := 0
	for {
		k, err := ec.c.Read(buf[have:])
		have += k
		off := 0
		ts := ec.clock.stamp(time.Now())
		for off < have {
			n, ferr := frameLength(buf[off:have])
			if ferr != nil {
				return
			}
			if n == 0 {
				break
			}
			if herr := ec.handle(buf[off:off+n], ts); herr != nil {
				ec.flush()
				return
			}
			off += n
			if len(ec.out) > echoWriteBytesMax-templateBytesMax {
				if ec.flush() != nil {
					return
				}
			}
		}
		// The orders journaled by flush are slices of buf: flush before
		// the unread rest moves to the front.
		if ec.flush() != nil {
			return
		}
		have = copy(buf, buf[off:have])
		if err != nil {
			return
		}
	}
}

// flush writes the answers collected so far; for a durable Echo, once the
// orders they answer are durable.
func (ec *echoConn) flush() error {
	if len(ec.durable.msgs) > 0 {
		err := ec.e.journal.commit(&ec.durable)
		ec.durable.msgs = ec.durable.msgs[:0]
		if err != nil {
			return err
		}
	}
	if len(ec.out) == 0 {
		return nil
	}
	_, err := ec.c.Write(ec.out)
	ec.out = ec.out[:0]
	return err
}

// handle answers one message; the answer is appended to out.
func (ec *echoConn) handle(msg []byte, ts *[timestampBytes]byte) error {
	m := &ec.in
	if err := m.parse(msg); err != nil {
		return err
	}
	if ec.e.journal != nil && (string(m.msgType) == "D" || string(m.msgType) == "F") {
		ec.durable.msgs = append(ec.durable.msgs, msg)
	}
	switch string(m.msgType) {
	case "A":
		ec.target = append(ec.target[:0], m.sender...)
		ec.nextOut = 1
		ec.begin("A", ts)
		ec.w.str(tag.EncryptMethod, "0")
		ec.w.str(tag.HeartBtInt, "30")
		ec.w.str(tag.ResetSeqNumFlag, "Y")
	case "1":
		ec.begin("0", ts)
		if len(m.testReqID) > 0 {
			ec.w.field(tag.TestReqID, m.testReqID)
		}
	case "5":
		ec.begin("5", ts)
		ec.finish()
		return errEchoLogout
	case "D":
		ec.report(m, "0", ts) // New
	case "F":
		ec.report(m, "4", ts) // Canceled
	default:
		return nil
	}
	ec.finish()
	return nil
}

// report begins the ExecutionReport answering m, with ExecType and
// OrdStatus both status.
func (ec *echoConn) report(m *inbound, status string, ts *[timestampBytes]byte) {
	ec.begin("8", ts)
	ec.execID++
	ec.w.uint(tag.OrderID, ec.execID)
	ec.w.uint(tag.ExecID, ec.execID)
	ec.w.field(tag.ClOrdID, m.clOrdID)
	ec.w.str(tag.ExecType, status)
	ec.w.str(tag.OrdStatus, status)
}

func (ec *echoConn) begin(msgType string, ts *[timestampBytes]byte) {
	w := ec.w
	w.reset()
	w.str(tag.MsgType, msgType)
	w.str(tag.SenderCompID, ec.e.senderCompID)
	w.field(tag.TargetCompID, ec.target)
	w.uint(tag.MsgSeqNum, ec.nextOut)
	w.field(tag.SendingTime, ts[:])
	ec.nextOut++
}

func (ec *echoConn) finish() {
	msg, _ := ec.w.finish()
	ec.out = append(ec.out, msg...)
}
