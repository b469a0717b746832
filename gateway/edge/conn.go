package edge

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Errors a Conn returns.
var (
	// ErrOutboundFull is returned by Write when the client does not read
	// fast enough; the connection is closed.
	ErrOutboundFull = errors.New("edge: outbound buffer full, connection closed")
	// ErrFatalFrame is returned by Read when the client sent a message the
	// edge cannot skip (an oversize BodyLength); the connection is closed.
	ErrFatalFrame = errors.New("edge: unframeable input, connection closed")
	// ErrLogonInSession is returned by Read when a Logon inside the session
	// carries a HeartBtInt outside 1 to HeartBtIntMax, or, when the
	// application does not log the session out (Config.LogOut),
	// ResetSeqNumFlag Y with a MsgSeqNum other than 1; the connection is
	// closed.
	ErrLogonInSession = errors.New("edge: malformed Logon inside the session, connection closed")
	// ErrMissingMsgSeqNum is returned by Read when a message inside the
	// session has no MsgSeqNum and the application did not log the session
	// out (Config.LogOut); the connection is closed.
	ErrMissingMsgSeqNum = errors.New("edge: message without MsgSeqNum inside the session, connection closed")
	// ErrAheadOfGap is returned by Read when a session sent more than
	// Config.AheadBytesMax ahead of a sequence gap and the application did
	// not log it out (Config.LogOut); the connection is closed.
	ErrAheadOfGap = errors.New("edge: too much sent ahead of a sequence gap, connection closed")
	// ErrRouteNotPrintable is returned by Read when a message inside the
	// session has a routing field holding a byte outside printable ASCII
	// and the session cannot be logged out (no Config.LogOut).
	ErrRouteNotPrintable = errors.New("edge: a routing field not printable ASCII inside the session, connection closed")
)

// initialOutboundBytes is the first capacity of each outbound buffer; they
// grow by doubling, never past Config.OutboundBytesMax.
const initialOutboundBytes = 4096

// Conn is a client connection that passed the Logon gate. QuickFIX/Go reads
// only whole, checked messages from it, and its writes never block: they
// are copied into a bounded buffer that a goroutine of the Conn flushes
// with a write deadline.
//
// Read is called by one goroutine (QuickFIX/Go's reader), Write by one
// (QuickFIX/Go's writer); Close and the accessors may be called from any.
type Conn struct {
	l      *Listener
	nc     net.Conn // the TLS connection, or raw
	raw    *net.TCPConn
	source netip.Addr
	cert   *x509.Certificate
	key    SessionKey

	// Read side, owned by the reading goroutine.
	fr      *framer
	pending []byte // unread part of the current message
	readErr error
	// Messages ahead of a sequence gap (Config.NextTargetSeqNum).
	nextTarget   func() int
	targetLooked bool
	aheadBytes   int    // read ahead of the gap since it was last filled
	aheadSeqMax  uint64 // the highest MsgSeqNum counted in aheadBytes
	lastTarget   uint64
	// loggingOut: why the application was asked to log the session out
	// (logOut); what the client sends after is dropped.
	loggingOut Reason
	// stopTaking: the application is logging the session out for what
	// its client sent (StopTaking); set from any goroutine.
	stopTaking atomic.Bool

	// Write side.
	mu           sync.Mutex
	fill         []byte // bytes waiting for the writer goroutine
	fillWrites   int
	spare        []byte // the buffer the writer gives back
	queuedBytes  int    // fill plus what is being written
	queuedWrites int
	dead         bool   // the socket is closed
	closing      bool   // Close was called: flush, then close
	loggedOut    bool   // QuickFIX/Go wrote a Logout: the session ends the connection
	reason       Reason // why it was closed, first reason wins
	handed       bool   // QuickFIX/Go owns the Conn

	wake       chan struct{} // a write is waiting
	written    chan struct{} // see Written
	killed     chan struct{} // closed when the socket is closed
	writerDone chan struct{}
	closeOnce  sync.Once
}

func newConn(l *Listener, nc net.Conn, raw *net.TCPConn, source netip.Addr) *Conn {
	return &Conn{
		l:          l,
		nc:         nc,
		raw:        raw,
		source:     source,
		fr:         newFramer(l.cfg.MessageBytesMax, l.cfg.DropEmptyValues),
		wake:       make(chan struct{}, 1),
		written:    make(chan struct{}, 1),
		killed:     make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// Read returns bytes of whole messages that passed every check. Garbled
// messages are skipped and counted; an oversize BodyLength closes the
// connection.
func (c *Conn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		msg, err := c.nextMessage()
		if errors.Is(err, ErrFatalFrame) {
			c.l.stats.add(c.fr.reason)
			c.l.cfg.Logger.Info("edge: connection closed", "reason", c.fr.reason, "source", c.source, "session", c.key)
			c.kill(c.fr.reason)
		}
		if err != nil {
			return 0, err
		}
		if c.fr.unusable != ReasonNone {
			// Whole but unusable: dropped like a garbled message.
			c.l.stats.add(c.fr.unusable)
			c.l.cfg.Logger.Debug("edge: message dropped", "reason", c.fr.unusable, "source", c.source, "session", c.key)
			continue
		}
		if c.loggingOut != ReasonNone {
			// The application is logging the session out (logOut): what
			// the client sends meanwhile is not taken.
			c.l.stats.add(c.loggingOut)
			continue
		}
		if c.stopTaking.Load() {
			c.l.stats.add(ReasonSessionEnding)
			continue
		}
		if !c.fr.seqNum {
			// Dropped before QuickFIX/Go takes a sequence number for it
			// (doc.go, "Framing"); FIX ends the session.
			c.l.stats.add(ReasonMissingMsgSeqNum)
			if !c.logOut(ReasonMissingMsgSeqNum, MissingMsgSeqNumText) {
				return 0, ErrMissingMsgSeqNum
			}
			continue
		}
		if c.fr.routeTag != 0 {
			// QuickFIX/Go's Reject of it, for any fault, would carry the
			// field back, which a validating client refuses (doc.go,
			// "Framing").
			c.l.stats.add(ReasonRouteNotPrintable)
			if !c.logOut(ReasonRouteNotPrintable, RouteNotPrintableText(c.fr.routeTag)) {
				return 0, ErrRouteNotPrintable
			}
			continue
		}
		if c.aheadOfGap(stashCost(len(msg), c.fr.fields)) {
			c.l.stats.add(ReasonAheadOfGap)
			if !c.logOut(ReasonAheadOfGap, AheadOfGapText) {
				return 0, ErrAheadOfGap
			}
			continue
		}
		if mt := c.fr.msgType(); len(mt) == 1 && mt[0] == 'A' {
			// A Logon inside the session (a reset, 141=Y) is held to the
			// first Logon's rules: QuickFIX/Go takes any HeartBtInt from
			// it, and one of 2^32 seconds would turn off the heartbeats
			// that find a dead peer (and with them cancel-on-disconnect).
			// QuickFIX/Go answers its other faults (an empty field, a
			// missing one) with a Logout itself.
			if hb, ok := heartBtIntOf(msg); ok && len(hb) > 0 && !validHeartBtInt(hb) {
				c.l.stats.add(ReasonLogonMalformed)
				c.l.cfg.Logger.Info("edge: connection closed", "reason", ReasonLogonMalformed, "source", c.source, "session", c.key,
					"problem", fmt.Sprintf("Logon inside the session: tag 108 must be a heartbeat interval of 1 to %d seconds", HeartBtIntMax))
				c.kill(ReasonLogonMalformed)
				return 0, ErrLogonInSession
			}
			if c.fr.seqNumValue != 1 && resetSeqNumFlagOf(msg) {
				// A reset must start both sides again at 1, as the gate
				// requires of a first Logon. QuickFIX/Go reset both stores,
				// answered with a Logon and then a Logout without a Text.
				// Dropped, it moves no sequence number, and the Logout
				// says why.
				c.l.stats.add(ReasonLogonMalformed)
				if !c.logOut(ReasonLogonMalformed, ResetNotAtOneText) {
					return 0, ErrLogonInSession
				}
				continue
			}
			if c.fr.seqNumValue != 1 && c.l.cfg.ResetsOnLogon != nil && c.l.cfg.ResetsOnLogon(c.key) {
				// The same reset, by the session's ResetOnLogon rather
				// than the Logon's flag (Config.ResetsOnLogon).
				c.l.stats.add(ReasonLogonMalformed)
				if !c.logOut(ReasonLogonMalformed, ResetOnLogonNotAtOneText) {
					return 0, ErrLogonInSession
				}
				continue
			}
			// Its password must not reach QuickFIX/Go's logs either.
			msg = stripCredentials(msg)
		}
		c.pending = msg
		c.l.stats.MessagesIn.Add(1)
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// StopTaking drops every message the client sends on the connection from
// now on, as the edge does once it has asked the application to log the
// session out (Config.LogOut): the application is logging the session out
// for what the client sent (past its message rate) and takes nothing more
// of it, and QuickFIX/Go, which answers some messages itself (a Reject, a
// Heartbeat), would go on answering each until the connection closes. The
// messages it has read already (its InChanCapacity and the one it reads)
// are still handled. Safe to call from any goroutine.
func (c *Conn) StopTaking() { c.stopTaking.Store(true) }

// RouteNotPrintableText is the Text (58) of the Logout a session gets for a
// message whose routing field tag holds a byte outside printable ASCII
// (Config.LogOut).
func RouteNotPrintableText(tag int) string {
	return "tag " + strconv.Itoa(tag) + " holds a byte that is not printable ASCII: message not processed"
}

// MissingMsgSeqNumText is the Text (58) of the Logout a session gets for a
// message without MsgSeqNum (Config.LogOut).
const MissingMsgSeqNumText = "MsgSeqNum (34) missing: message not processed"

// ResetNotAtOneText is the Text (58) of the Logout a session gets for a
// Logon inside the session with ResetSeqNumFlag (141) Y and a MsgSeqNum
// other than 1; a first Logon so is refused with the same words.
const ResetNotAtOneText = "Malformed Logon: " + resetNotAtOneProblem

// ResetOnLogonNotAtOneText is the Text (58) of the Logout a session that
// resets its sequence numbers at every Logon (Config.ResetsOnLogon) gets for
// a Logon inside the session whose MsgSeqNum is not 1.
const ResetOnLogonNotAtOneText = "Malformed Logon: this session starts its sequence numbers again at every Logon, which must carry 34=1"

// AheadOfGapText is the Text (58) of the Logout a session gets for sending
// more than Config.AheadBytesMax ahead of a sequence gap.
const AheadOfGapText = "too much sent ahead of a sequence gap: fill the gap the ResendRequest asks for first"

// aheadSlack is added to Config.SessionInboundQueue: the messages that a
// session's expected MsgSeqNum may lag the one read besides those queued
// (the one QuickFIX/Go handles, the one read), and a margin.
const aheadSlack = 4

// stashMessageBytes and stashFieldBytes are what QuickFIX/Go v0.9.11's
// stash of a message read ahead of a gap holds besides its wire bytes: the
// parsed message (its buffer, three field maps) and each field's entry
// (TestStashCostCoversQuickFIX measures them). Counted as wire bytes
// alone, the bound held twenty times as much for the smallest messages: a
// client sending Heartbeats ahead of its gap had QuickFIX/Go keep some 350
// MiB before its 16 MiB of them were counted.
const (
	stashMessageBytes = 1536
	stashFieldBytes   = 160
)

// stashCost is what a message of n wire bytes and bodyFields fields after
// BodyLength (the framer's count, MsgType to the last before CheckSum)
// costs QuickFIX/Go's memory held ahead of a gap.
func stashCost(n, bodyFields int) int {
	return n + stashMessageBytes + (bodyFields+3)*stashFieldBytes
}

// aheadOfGap counts a message costing n bytes (stashCost) that is ahead of a sequence gap, and
// reports whether the messages counted since the gap was last filled exceed
// Config.AheadBytesMax. A message is ahead when its MsgSeqNum is above the
// session's expected one by more than the messages QuickFIX/Go may have read
// and not handled yet; the count starts again once the expected MsgSeqNum
// has reached the last message counted (the gap filled, QuickFIX/Go's stash
// of them handled) or went down (a sequence reset, which drops the stash).
// A SequenceReset that jumps forward is handled a few messages after it is
// read: the messages read meanwhile count, at most
// SessionInboundQueue+aheadSlack of them, well within the bound.
func (c *Conn) aheadOfGap(n int) bool {
	if !c.targetLooked {
		c.targetLooked = true
		if f := c.l.cfg.NextTargetSeqNum; f != nil {
			c.nextTarget = f(c.key)
		}
	}
	if c.nextTarget == nil {
		return false
	}
	next := uint64(max(c.nextTarget(), 0))
	// Every message counted is handled once the expected MsgSeqNum reaches
	// the last of them: QuickFIX/Go moves it on after the message's
	// handling, whose answer (a Heartbeat for a TestRequest) a client may
	// read, and send on, first; waiting for the number to pass it counted
	// the gap filled as still open, and a client that filled gap after gap
	// at once was logged out.
	if next >= c.aheadSeqMax || next < c.lastTarget {
		c.aheadBytes, c.aheadSeqMax = 0, 0
	}
	c.lastTarget = next
	if c.fr.seqNumValue <= next+uint64(c.l.cfg.SessionInboundQueue+aheadSlack) {
		return false
	}
	c.aheadBytes += n
	c.aheadSeqMax = max(c.aheadSeqMax, c.fr.seqNumValue)
	return c.aheadBytes > c.l.cfg.AheadBytesMax
}

// logOut has the application log the session out with text (Config.LogOut)
// for reason, or, when it does not, closes the connection; it reports
// whether the application does.
func (c *Conn) logOut(r Reason, text string) bool {
	c.loggingOut = r
	if on := c.l.cfg.LogOut; on != nil && on(c.key, text) {
		c.l.cfg.Logger.Info("edge: logging the session out", "reason", r, "source", c.source, "session", c.key)
		return true
	}
	c.l.cfg.Logger.Info("edge: connection closed", "reason", r, "source", c.source, "session", c.key)
	c.kill(r)
	return false
}

// nextMessage frames the next whole message, valid until the next call;
// c.fr.unusable says whether it must not reach QuickFIX/Go. Garbled messages
// are counted and skipped. ErrFatalFrame (c.fr.reason) is left to the
// caller to count, as are unusable messages: the Logon gate refuses them
// rather than dropping them.
func (c *Conn) nextMessage() ([]byte, error) {
	stats := &c.l.stats
	for {
		switch c.fr.next() {
		case frameOK, frameUnusable:
			return c.fr.message(), nil
		case frameDrop:
			stats.add(c.fr.reason)
			c.l.cfg.Logger.Debug("edge: message dropped", "reason", c.fr.reason, "source", c.source, "session", c.key)
			continue
		case frameFatal:
			return nil, ErrFatalFrame
		}
		if g := c.fr.takeGarbage(); g > 0 {
			stats.GarbageBytes.Add(uint64(g))
		}
		if c.readErr != nil {
			c.noteReason(c.readEndReason())
			return nil, c.readErr
		}
		n, err := c.nc.Read(c.fr.space())
		c.fr.wrote(n)
		c.readErr = err
	}
}

// Write copies p into the outbound buffer and returns at once. When the
// buffer is full (the client is not reading) the connection is closed and
// ErrOutboundFull returned.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if c.queuedBytes+len(p) > c.l.cfg.OutboundBytesMax || c.queuedWrites >= c.l.cfg.OutboundQueueMax {
		c.mu.Unlock()
		c.l.stats.add(ReasonOutboundFull)
		c.l.cfg.Logger.Info("edge: connection closed", "reason", ReasonOutboundFull, "source", c.source, "session", c.key)
		c.kill(ReasonOutboundFull)
		return 0, ErrOutboundFull
	}
	c.fill = append(c.fill, p...)
	c.fillWrites++
	c.loggedOut = c.loggedOut || isLogout(p)
	c.queuedBytes += len(p)
	c.queuedWrites++
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	c.l.stats.MessagesOut.Add(1)
	if c.l.cfg.OnWrite != nil {
		c.l.cfg.OnWrite(c.key, len(p))
	}
	select {
	case c.written <- struct{}{}:
	default:
	}
	return len(p), nil
}

// writeLoop flushes the outbound buffer until the connection dies.
func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.wake:
		case <-c.killed:
			return
		}
		c.mu.Lock()
		if len(c.fill) == 0 {
			closing := c.closing
			c.mu.Unlock()
			if closing {
				return
			}
			continue
		}
		buf, writes := c.fill, c.fillWrites
		c.fill, c.fillWrites = c.spare[:0], 0
		c.mu.Unlock()
		n, err := c.flush(buf)
		c.l.stats.BytesOut.Add(uint64(n))
		c.mu.Lock()
		c.queuedBytes -= len(buf)
		c.queuedWrites -= writes
		c.spare = buf[:0]
		more := len(c.fill) > 0 || c.closing
		c.mu.Unlock()
		if more && err == nil {
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
		if err != nil {
			r := ReasonPeerClosed
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				r = ReasonWriteTimeout
				c.l.stats.add(r)
				c.l.cfg.Logger.Info("edge: connection closed", "reason", r, "source", c.source, "session", c.key)
			}
			c.kill(r)
			return
		}
	}
}

// writeChunkMax is the most a flush writes under one deadline: a flush
// times out when no writeChunkMax bytes of it reach the socket within
// Config.WriteTimeout, whatever its length.
const writeChunkMax = 64 << 10

// flush writes buf to the socket in chunks of at most writeChunkMax, each
// with a deadline of Config.WriteTimeout, so that the timeout ends a
// client that stops reading, not one that reads steadily while a large
// flush (a resend, a replay) takes longer than the timeout as a whole.
// Most flushes are one chunk, one system call.
func (c *Conn) flush(buf []byte) (n int, err error) {
	for n < len(buf) && err == nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.l.cfg.WriteTimeout))
		var k int
		k, err = c.nc.Write(buf[n:min(len(buf), n+writeChunkMax)])
		n += k
	}
	return n, err
}

// kill closes the socket at once (so that the reader and writer stop) and
// records why. It closes the TCP socket itself, not the TLS layer, whose
// Close would try to send an alert to a client that may not be reading.
// It does not release the session: QuickFIX/Go does that by calling Close
// once it has seen the disconnect.
func (c *Conn) kill(r Reason) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead = true
	if c.reason == ReasonNone {
		c.reason = r
	}
	c.mu.Unlock()
	close(c.killed)
	_ = c.raw.Close()
}

// readEndReason is why a connection whose read failed ends: the client
// closed it, unless QuickFIX/Go had written a Logout or called Close
// before. A client that reads the session's Logout (its answer to the
// client's, say) may close at once, and its end then reaches the reader
// before QuickFIX/Go's Close does: the session still ended that connection,
// and the reason no longer depends on which goroutine runs first.
func (c *Conn) readEndReason() Reason {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.loggedOut {
		return ReasonClosedBySession
	}
	return ReasonPeerClosed
}

// isLogout reports whether msg, one whole message QuickFIX/Go writes, is a
// Logout: its MsgType (35) follows BeginString and BodyLength.
func isLogout(msg []byte) bool {
	const head = 32 // "8=FIX.4.4|9=" and a BodyLength of up to 7 digits, then "|35=5|"
	return bytes.Contains(msg[:min(len(msg), head)], []byte("\x0135=5\x01"))
}

// ended reports whether the connection has ended: a reason is recorded once
// its read fails, a write fails, or it is closed.
func (c *Conn) ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason != ReasonNone
}

// noteReason records why the connection ends without closing it (the
// socket already failed); the first reason recorded wins.
func (c *Conn) noteReason(r Reason) {
	c.mu.Lock()
	if c.reason == ReasonNone {
		c.reason = r
	}
	c.mu.Unlock()
}

// Close flushes what QuickFIX/Go wrote (its Logout, typically), each write
// bounded by Config.WriteTimeout, closes the connection and releases its
// session: another Logon for it may then pass the gate. OnClose is called
// once, with the first reason the connection was closed for.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.drain()
		// Release before the socket closes: a client that logs on again as
		// soon as it sees the close must not find the session still taken.
		c.noteReason(ReasonClosedBySession)
		c.l.release(c)
		c.kill(ReasonClosedBySession)
	})
	return nil
}

// Disconnect ends the connection for the application's own reasons (a
// client that does not read its answers, an operator's logout): it flushes
// what QuickFIX/Go wrote, as Close does, and closes the socket, but the
// session stays taken until QuickFIX/Go, having seen the disconnect, calls
// Close; a Logon for it meanwhile waits for that (duplicateLogonWait).
// Released at once, a client's Logon made as soon as it saw the close
// reached QuickFIX/Go while its session was still connected there, and
// QuickFIX/Go closed the new connection with no answer.
func (c *Conn) Disconnect() {
	c.drain()
	c.noteReason(ReasonClosedBySession)
	c.kill(ReasonClosedBySession)
}

// drain has the writer write what QuickFIX/Go wrote, each write bounded by
// Config.WriteTimeout, and stop.
func (c *Conn) drain() {
	c.mu.Lock()
	c.closing = true
	writer := c.handed
	c.mu.Unlock()
	if writer {
		select {
		case c.wake <- struct{}{}:
		default:
		}
		<-c.writerDone
	}
}

// Written receives a value after each Write (values coalesce: one waiting
// value stands for any number of writes). An application that calls
// SendToTarget for a session's next message only after Written fires keeps
// at most one message queued inside QuickFIX/Go per session; see doc.go.
func (c *Conn) Written() <-chan struct{} { return c.written }

// Done is closed when the connection's socket is closed.
func (c *Conn) Done() <-chan struct{} { return c.killed }

// Key returns the session the connection logged on as.
func (c *Conn) Key() SessionKey { return c.key }

// Source returns the client's address.
func (c *Conn) Source() netip.Addr { return c.source }

// Certificate returns the client's verified TLS certificate, or nil.
func (c *Conn) Certificate() *x509.Certificate { return c.cert }

// LocalAddr returns the listening side's *net.TCPAddr (QuickFIX/Go checks
// its port against SocketAcceptPort).
func (c *Conn) LocalAddr() net.Addr { return c.raw.LocalAddr() }

// RemoteAddr returns the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// SetDeadline sets the read deadline only: writes have the edge's own
// deadline (Config.WriteTimeout) per chunk of a flush.
func (c *Conn) SetDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetReadDeadline sets the read deadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteDeadline does nothing: Write never blocks.
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }

var _ net.Conn = (*Conn)(nil)

// Backlogged reports whether the bytes or writes waiting for the client are
// past half their bounds (OutboundBytesMax, OutboundQueueMax). A producer
// that can wait (the gateway's mass status stream) waits while it is, so a
// client that reads, only slower than the venue writes, is paced instead of
// reaching the bounds that close its connection.
func (c *Conn) Backlogged() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A closed connection writes nothing more: no one is to wait for it.
	return !c.dead && (c.queuedBytes > c.l.cfg.OutboundBytesMax/2 || c.queuedWrites > c.l.cfg.OutboundQueueMax/2)
}
