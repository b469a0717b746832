package feedclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Recoverer fetches what the UDP feed lost. The client calls it from its own
// goroutine, one request at a time.
type Recoverer interface {
	// Retransmit asks for count messages from fromSeq and calls fn with each
	// sequenced packet received. It returns the reject reason when the
	// service refused (0 when it accepted), or an error when the exchange
	// failed.
	Retransmit(fromSeq uint64, count uint32, fn func(pkt []byte) error) (mdsbe.RetransmitRejectReason, error)
	// Snapshot asks for the books of one instrument (0: all) and calls fn
	// with each snapshot packet, the last one holding SnapshotEnd.
	Snapshot(instrumentID uint32, fn func(pkt []byte) error) (mdsbe.SnapshotRejectReason, error)
	// Close ends any connection.
	Close() error
}

// ErrRecoveryProtocol reports an answer the client cannot use.
var ErrRecoveryProtocol = errors.New("feedclient: unexpected answer from the recovery service")

// NotServingError is a recovery service that took a new connection and
// closed it without answering the request: a cluster's follower does so
// with every connection (only the leader serves market data), as does a
// service at its connection bound with none idle. The client tries the
// next address it was given at once.
type NotServingError struct {
	Addr string
	Err  error // what the read or write met: EOF, a reset
}

func (e *NotServingError) Error() string {
	return "the node at " + e.Addr + " is not serving market data (its recovery service closed the connection unanswered, " +
		"as a cluster's follower does, or a service at its connection bound)"
}

func (e *NotServingError) Unwrap() error { return e.Err }

// RecoveryAddrsError is a request that none of several recovery addresses
// took: Errs says why for each, in the order they were tried. Its message
// is theirs, each naming its address.
type RecoveryAddrsError struct{ Errs []error }

func (e *RecoveryAddrsError) Error() string {
	var b strings.Builder
	for i, err := range e.Errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *RecoveryAddrsError) Unwrap() []error { return e.Errs }

// NoneServing reports whether err, a Recoverer's, says that every address
// it was given is a recovery service that is not serving (each a
// NotServingError: a cluster with no leader yet, or with its leader's
// address missing from the list).
func NoneServing(err error) bool {
	var all *RecoveryAddrsError
	if errors.As(err, &all) {
		for _, e := range all.Errs {
			if !errors.As(e, new(*NotServingError)) {
				return false
			}
		}
		return len(all.Errs) > 0
	}
	return errors.As(err, new(*NotServingError))
}

// tcpRecoverer talks to the feed's TCP recovery service. It keeps one
// connection open between requests and redials after any failure.
type tcpRecoverer struct {
	addrs   []string // tried in turn: the next after each failure
	cur     int      // (mu)
	channel uint16
	timeout time.Duration
	// answered is whether the connection has carried an answer: one that
	// closes before any is a service that is not serving (NotServingError).
	answered bool
	// passedOver, when set, is told of the addresses a request that then
	// succeeded passed over, each with why (Client: Recovery.PassedOver).
	passedOver func(errs []error)

	mu     sync.Mutex // guards conn against Close from another goroutine
	conn   net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	frame  []byte
	reqBuf [packet.HeaderSize + packet.LengthPrefixSize + mdsbe.RetransmitRequestEncodedLength]byte
	reqID  uint64
	rd     packet.Reader
	closed bool
}

// NewTCPRecoverer returns a Recoverer for the service at addr, or at any of
// a comma-separated list of addresses (a cluster's nodes: the leader's
// serves), tried in turn after each failure. timeout bounds each request
// from dial to last byte.
func NewTCPRecoverer(addr string, channel uint16, timeout time.Duration) Recoverer {
	var addrs []string
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		addrs = []string{addr}
	}
	return &tcpRecoverer{addrs: addrs, channel: channel, timeout: timeout, frame: make([]byte, packet.FrameBytesMax)}
}

func (t *tcpRecoverer) connect() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return net.ErrClosed
	}
	if t.conn != nil {
		return t.conn.SetDeadline(time.Now().Add(t.timeout))
	}
	conn, err := net.DialTimeout("tcp", t.addrs[t.cur], t.timeout)
	if err != nil {
		t.cur = (t.cur + 1) % len(t.addrs)
		return err
	}
	t.conn, t.r, t.w = conn, bufio.NewReaderSize(conn, 64<<10), bufio.NewWriterSize(conn, 1024)
	t.answered = false
	return conn.SetDeadline(time.Now().Add(t.timeout))
}

func (t *tcpRecoverer) drop() {
	t.mu.Lock()
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.mu.Unlock()
}

// Close implements Recoverer; it also aborts a request in progress.
func (t *tcpRecoverer) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.drop()
	return nil
}

// failed drops the connection after a failed request and moves to the next
// address: with a cluster's nodes listed, a follower (which closes every
// connection at once) or a node that is down is passed over.
func (t *tcpRecoverer) failed() {
	t.drop()
	t.mu.Lock()
	t.cur = (t.cur + 1) % len(t.addrs)
	t.mu.Unlock()
}

// notServing is err as a NotServingError when the connection, new,
// was closed by the service before any answer (before failed moves on).
func (t *tcpRecoverer) notServing(err error) error {
	if t.answered || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		return err
	}
	t.mu.Lock()
	addr := t.addrs[t.cur]
	t.mu.Unlock()
	return &NotServingError{Addr: addr, Err: err}
}

// exchange runs one request (do, which says whether any answer arrived).
// One that fails before any answer on a connection kept from an earlier
// request is sent once more on a new connection: the service at the
// address may have moved (a cluster's new leader) or restarted since. One
// that fails before any answer on a new connection, the node refusing it
// (down) or not serving (a cluster's follower), goes to the next address at
// once, each address tried once: the addresses passed over are told to
// passedOver when one takes it, and are the error (RecoveryAddrsError)
// when none does. A timeout ends the request there: waiting as long again
// on each address would hold the client's goroutine that much longer.
func (t *tcpRecoverer) exchange(do func() (answered bool, err error)) error {
	retryKept := t.hasConn()
	var passed []error
	for {
		answered, err := do()
		switch {
		case err == nil:
			if len(passed) > 0 && t.passedOver != nil {
				t.passedOver(passed)
			}
			return nil
		case answered || t.isClosed():
			return err
		case retryKept:
			retryKept = false
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return joinPassed(passed, err)
		}
		passed = append(passed, err)
		if len(passed) >= len(t.addrs) {
			return joinPassed(passed[:len(passed)-1], err)
		}
	}
}

// joinPassed is a request's error err after it passed over addresses with
// the errors passed.
func joinPassed(passed []error, err error) error {
	if len(passed) == 0 {
		return err
	}
	return &RecoveryAddrsError{Errs: append(passed, err)}
}

// isClosed reports whether Close was called.
func (t *tcpRecoverer) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// request connects (or keeps the connection), numbers a new request and
// sends it, its message written by encode; on an error the connection is
// dropped.
func (t *tcpRecoverer) request(msgLen int, encode func(buf []byte, off int, reqID uint64)) (uint64, error) {
	if err := t.connect(); err != nil {
		return 0, err
	}
	t.reqID++
	reqID := t.reqID
	if err := t.send(msgLen, func(buf []byte, off int) { encode(buf, off, reqID) }); err != nil {
		err = t.notServing(err)
		t.failed()
		return 0, err
	}
	return reqID, nil
}

// readAnswer reads the next answer packet into t.rd; on an error the
// connection is dropped.
func (t *tcpRecoverer) readAnswer() ([]byte, error) {
	pkt, err := packet.ReadFrame(t.r, t.frame)
	if err == nil {
		t.answered = true
		err = t.rd.Reset(pkt)
	}
	if err != nil {
		err = t.notServing(err)
		t.failed()
	}
	return pkt, err
}

// send writes one request packet holding the message that encode writes.
func (t *tcpRecoverer) send(msgLen int, encode func(buf []byte, off int)) error {
	n := packet.HeaderSize + packet.LengthPrefixSize + msgLen
	buf := t.reqBuf[:n]
	clear(buf)
	var h mdsbe.PacketHeader
	_ = h.Wrap(buf, 0)
	h.SetChannel(t.channel)
	h.SetMessageCount(1)
	h.SetSendingTimeNs(time.Now().UnixNano())
	buf[packet.HeaderSize], buf[packet.HeaderSize+1] = byte(msgLen), byte(msgLen>>8)
	encode(buf, packet.HeaderSize+packet.LengthPrefixSize)
	if err := packet.WriteFrame(t.w, buf); err != nil {
		return err
	}
	return t.w.Flush()
}

// Retransmit implements Recoverer, through exchange: a request that fails
// before any answer is sent once more on a new connection, or to the next
// address.
func (t *tcpRecoverer) Retransmit(fromSeq uint64, count uint32, fn func(pkt []byte) error) (mdsbe.RetransmitRejectReason, error) {
	var reason mdsbe.RetransmitRejectReason
	err := t.exchange(func() (answered bool, err error) {
		reason, answered, err = t.retransmit(fromSeq, count, fn)
		return answered, err
	})
	return reason, err
}

// hasConn reports whether a connection is kept from an earlier request.
func (t *tcpRecoverer) hasConn() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn != nil
}

func (t *tcpRecoverer) retransmit(fromSeq uint64, count uint32, fn func(pkt []byte) error) (reason mdsbe.RetransmitRejectReason, answered bool, err error) {
	reqID, err := t.request(mdsbe.RetransmitRequestEncodedLength, func(buf []byte, off int, reqID uint64) {
		var m mdsbe.RetransmitRequest
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(reqID)
		m.SetFromSeq(fromSeq)
		m.SetCount(count)
	})
	if err != nil {
		return 0, false, err
	}
	for {
		pkt, err := t.readAnswer()
		if err != nil {
			return 0, answered, err
		}
		answered = true
		if t.rd.Seq != 0 {
			if err := fn(pkt); err != nil {
				t.failed()
				return 0, answered, err
			}
			continue
		}
		for msg, ok := t.rd.Next(); ok; msg, ok = t.rd.Next() {
			tid, _ := mdsbe.TemplateIDOf(msg, 0)
			switch tid {
			case mdsbe.RetransmitEndTemplateID:
				var m mdsbe.RetransmitEnd
				if m.WrapDecode(msg, 0) == nil && m.RequestID() == reqID {
					return 0, true, nil
				}
			case mdsbe.RetransmitRejectTemplateID:
				var m mdsbe.RetransmitReject
				if m.WrapDecode(msg, 0) == nil && m.RequestID() == reqID {
					if !m.Reason().Valid() {
						t.failed()
						return 0, true, ErrRecoveryProtocol
					}
					return m.Reason(), true, nil
				}
			}
		}
	}
}

// Snapshot implements Recoverer. Like Retransmit, a request that fails
// before any answer is sent once more (exchange): on a kept connection, a
// venue restarted at the address (on another data directory, whose feed
// the client must join by snapshot) closed it.
func (t *tcpRecoverer) Snapshot(instrumentID uint32, fn func(pkt []byte) error) (mdsbe.SnapshotRejectReason, error) {
	var reason mdsbe.SnapshotRejectReason
	err := t.exchange(func() (answered bool, err error) {
		reason, answered, err = t.snapshot(instrumentID, fn)
		return answered, err
	})
	return reason, err
}

func (t *tcpRecoverer) snapshot(instrumentID uint32, fn func(pkt []byte) error) (reason mdsbe.SnapshotRejectReason, answered bool, err error) {
	reqID, err := t.request(mdsbe.SnapshotRequestEncodedLength, func(buf []byte, off int, reqID uint64) {
		var m mdsbe.SnapshotRequest
		_ = m.WrapEncode(buf, off)
		m.SetRequestID(reqID)
		m.SetInstrumentID(instrumentID)
	})
	if err != nil {
		return 0, false, err
	}
	for {
		pkt, err := t.readAnswer()
		if err != nil {
			return 0, answered, err
		}
		answered = true
		if t.rd.Seq != 0 {
			t.failed()
			return 0, true, fmt.Errorf("%w: sequenced packet in a snapshot", ErrRecoveryProtocol)
		}
		done := false
		for msg, ok := t.rd.Next(); ok; msg, ok = t.rd.Next() {
			tid, _ := mdsbe.TemplateIDOf(msg, 0)
			switch tid {
			case mdsbe.SnapshotEndTemplateID:
				var m mdsbe.SnapshotEnd
				done = m.WrapDecode(msg, 0) == nil && m.RequestID() == reqID
			case mdsbe.SnapshotRejectTemplateID:
				var m mdsbe.SnapshotReject
				if m.WrapDecode(msg, 0) == nil && m.RequestID() == reqID {
					if !m.Reason().Valid() {
						t.failed()
						return 0, true, ErrRecoveryProtocol
					}
					return m.Reason(), true, nil
				}
			}
		}
		if err := fn(pkt); err != nil {
			t.failed()
			return 0, true, err
		}
		if done {
			return 0, true, nil
		}
	}
}
