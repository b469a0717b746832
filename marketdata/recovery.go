package marketdata

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/internal/connset"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Defaults of RecoveryConfig.
const (
	RetransmitCountMaxDefault     = 10000
	RecoveryConnsMaxDefault       = 16
	RecoveryRequestsPerSecDefault = 10
	RecoveryRequestBurstDefault   = 20
	RecoveryIdleTimeoutDefault    = 30 * time.Second
	RecoveryWriteTimeoutDefault   = 5 * time.Second
	SnapshotsConcurrentMaxDefault = 2
	SnapshotBytesMaxDefault       = 256 << 20

	// requestFrameBytesMax bounds a request frame: requests are tiny.
	requestFrameBytesMax = 512
	// retransmitChunkBytes bounds what one connection copies out of the
	// window per lock: the window lock is held only for a short copy.
	retransmitChunkBytes = 64 << 10
	// snapshotPacketBytes sizes snapshot packets on TCP: large enough for
	// hundreds of orders per SnapshotEntries message.
	snapshotPacketBytes = 16 << 10
)

// RecoveryConfig configures the TCP recovery service. Zero values take the
// defaults.
type RecoveryConfig struct {
	Addr string // listen address; default RecoveryAddrDefault
	// WindowPackets is how many recent packets are kept for retransmission.
	WindowPackets int
	// RetransmitCountMax is the most messages one request may ask for;
	// larger requests are refused with TooMany (take a snapshot instead).
	RetransmitCountMax int
	// ConnsMax bounds simultaneous connections: at the bound the one that has
	// waited longest for a request is closed to admit a new one, and with none
	// waiting the new one is closed at once.
	ConnsMax int
	// RequestsPerSecond and RequestBurst limit each connection's requests;
	// beyond them requests are refused with RateLimited.
	RequestsPerSecond int
	RequestBurst      int
	IdleTimeout       time.Duration // a connection with no request for this long is closed
	WriteTimeout      time.Duration // one response must be written within this
	// SnapshotsConcurrentMax bounds snapshots being encoded or written at once
	// (each holds its encoded bytes); extra requests wait their turn.
	SnapshotsConcurrentMax int
	// SnapshotBytesMax bounds one encoded snapshot; a larger one is refused
	// with TooLarge (ask for one instrument at a time).
	SnapshotBytesMax int
}

func (c *RecoveryConfig) fill() error {
	c.Addr = cmp.Or(c.Addr, RecoveryAddrDefault)
	c.WindowPackets = cmp.Or(c.WindowPackets, WindowPacketsDefault)
	c.RetransmitCountMax = cmp.Or(c.RetransmitCountMax, RetransmitCountMaxDefault)
	c.ConnsMax = cmp.Or(c.ConnsMax, RecoveryConnsMaxDefault)
	c.RequestsPerSecond = cmp.Or(c.RequestsPerSecond, RecoveryRequestsPerSecDefault)
	c.RequestBurst = cmp.Or(c.RequestBurst, RecoveryRequestBurstDefault)
	c.SnapshotsConcurrentMax = cmp.Or(c.SnapshotsConcurrentMax, SnapshotsConcurrentMaxDefault)
	c.SnapshotBytesMax = cmp.Or(c.SnapshotBytesMax, SnapshotBytesMaxDefault)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, RecoveryIdleTimeoutDefault)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, RecoveryWriteTimeoutDefault)
	if c.WindowPackets < 1 || c.RetransmitCountMax < 1 || c.ConnsMax < 1 || c.RequestsPerSecond < 1 ||
		c.RequestBurst < 1 || c.SnapshotsConcurrentMax < 1 || c.SnapshotBytesMax < snapshotPacketBytes {
		return errors.New("marketdata: recovery bounds must be positive (SnapshotBytesMax at least 16 KiB)")
	}
	return nil
}

// RecoveryStats counts the recovery service's work.
type RecoveryStats struct {
	ConnsAccepted       uint64
	ConnsRefused        uint64 // closed at once: ConnsMax reached, none idle
	ConnsEvicted        uint64 // idle ones closed to admit a new one at ConnsMax
	Retransmits         uint64 // requests answered in full
	RetransmitsRejected uint64
	Snapshots           uint64
	SnapshotsRejected   uint64
	ProtocolErrors      uint64 // connections closed for a malformed request
	StandbyRefused      uint64 // closed at once while the feed was a standby (Feed.RefuseRecovery)
	AcceptErrors        uint64 // accepts that failed (out of descriptors or the like), each tried again after a pause
}

type recoveryServer struct {
	f       *Feed
	cfg     RecoveryConfig
	ln      net.Listener
	conns   *connset.Set // bounded by ConnsMax
	snapSem chan struct{}

	retransmits, retransmitsRejected             atomic.Uint64
	snapshots, snapshotsRejected, protocolErrors atomic.Uint64
	standbyRefused                               atomic.Uint64 // closed at once by RefuseRecovery
	acceptErrors                                 atomic.Uint64
}

// ErrRecoveryListen is NewFeed's error when the recovery service cannot
// listen at RecoveryConfig.Addr, so that a caller can name its own key for
// the address.
var ErrRecoveryListen = errors.New("marketdata: recovery listener")

func newRecoveryServer(f *Feed) (*recoveryServer, error) {
	cfg := f.cfg.Recovery
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecoveryListen, err)
	}
	return &recoveryServer{f: f, cfg: cfg, ln: ln,
		conns:   connset.New(cfg.ConnsMax),
		snapSem: make(chan struct{}, cfg.SnapshotsConcurrentMax)}, nil
}

func (s *recoveryServer) stats() RecoveryStats {
	return RecoveryStats{ConnsAccepted: s.conns.Accepted(), ConnsRefused: s.conns.Refused(), ConnsEvicted: s.conns.Evicted(),
		Retransmits: s.retransmits.Load(), RetransmitsRejected: s.retransmitsRejected.Load(),
		Snapshots: s.snapshots.Load(), SnapshotsRejected: s.snapshotsRejected.Load(),
		ProtocolErrors: s.protocolErrors.Load(), StandbyRefused: s.standbyRefused.Load(), AcceptErrors: s.acceptErrors.Load()}
}

// Bounds of the pause after a failed accept (serve).
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

// serve accepts connections until ctx ends, then closes every connection
// and waits for their goroutines. An accept that fails (out of file
// descriptors, or the like) is counted (RecoveryStats.AcceptErrors) and
// tried again after a pause that doubles up to acceptPauseMax, as the FIX
// edge does: serve returned its error, and the feed served no recovery for
// the rest of the venue's run while its heartbeats went on.
func (s *recoveryServer) serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.ln.Close()
		s.conns.Close()
	})
	defer stop()
	defer s.conns.Wait()
	pause := acceptPauseMin
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			s.acceptErrors.Add(1)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pause):
			}
			pause = min(2*pause, acceptPauseMax)
			continue
		}
		pause = acceptPauseMin
		if ctx.Err() != nil {
			conn.Close()
			return nil
		}
		s.conns.Serve(conn, s.handle) // counts what it accepts and refuses
	}
}

// recoveryConn is one client connection: requests in, packets out.
type recoveryConn struct {
	s       *recoveryServer
	conn    net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	limiter tokenBucket
	reqBuf  [requestFrameBytesMax]byte
	chunk   []byte
	out     *packet.Builder // unsequenced control packets
	rd      packet.Reader
}

// WritePacket frames a control packet onto the connection.
func (c *recoveryConn) WritePacket(pkt []byte, _ uint64, _ int) error {
	return packet.WriteFrame(c.w, pkt)
}

func (s *recoveryServer) handle(conn net.Conn) {
	c := &recoveryConn{s: s, conn: conn, r: bufio.NewReaderSize(conn, requestFrameBytesMax),
		w: bufio.NewWriterSize(conn, 32<<10), chunk: make([]byte, 0, retransmitChunkBytes),
		limiter: newTokenBucket(s.cfg.RequestsPerSecond, s.cfg.RequestBurst, s.f.cfg.Clock().UnixNano())}
	out, err := packet.NewBuilder(packet.BuilderConfig{Channel: s.f.cfg.Channel, Sink: c})
	if err != nil {
		return
	}
	c.out = out
	for {
		_ = conn.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		s.conns.Waiting(conn, c.r.Buffered() == 0) // an idle one makes room for a new client at ConnsMax
		frame, err := packet.ReadFrame(c.r, c.reqBuf[:])
		s.conns.Waiting(conn, false)
		if err != nil {
			if errors.Is(err, packet.ErrFrameTooLarge) {
				s.protocolErrors.Add(1)
			}
			return
		}
		if err := c.serveFrame(frame); err != nil {
			return
		}
	}
}

var errProtocol = errors.New("marketdata: malformed recovery request")

// serveFrame answers the requests of one frame. A frame that is not an
// unsequenced packet of requests only, one at least, is answered not at
// all: checked whole before its first request is served, so that the
// requests before a malformed message are neither answered in part (what
// the write buffer let out before the connection closed) nor counted as
// served.
func (c *recoveryConn) serveFrame(frame []byte) error {
	if err := c.rd.Reset(frame); err != nil || c.rd.Seq != 0 || c.rd.Count == 0 || !requestsOnly(c.rd) {
		c.s.protocolErrors.Add(1)
		return errProtocol
	}
	for msg, ok := c.rd.Next(); ok; msg, ok = c.rd.Next() {
		_ = c.conn.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
		var err error
		if m, ok := mdsbe.DecodeRetransmitRequest(msg); ok {
			err = c.retransmit(m.RequestID(), m.FromSeq(), m.Count())
		} else if m, ok := mdsbe.DecodeSnapshotRequest(msg); ok {
			err = c.snapshot(m.RequestID(), m.InstrumentID())
		}
		if err != nil {
			return err
		}
	}
	return c.w.Flush()
}

// requestsOnly reports whether every message left in rd (a copy: the
// caller's reader stays where it is) is a RetransmitRequest or a
// SnapshotRequest.
func requestsOnly(rd packet.Reader) bool {
	for msg, ok := rd.Next(); ok; msg, ok = rd.Next() {
		if _, ok := mdsbe.DecodeRetransmitRequest(msg); ok {
			continue
		}
		if _, ok := mdsbe.DecodeSnapshotRequest(msg); !ok {
			return false
		}
	}
	return true
}

func (c *recoveryConn) retransmit(requestID, fromSeq uint64, count uint32) error {
	s := c.s
	oldest, nextSeq := s.f.win.bounds()
	reject := func(reason mdsbe.RetransmitRejectReason) error {
		s.retransmitsRejected.Add(1)
		return c.sendRetransmitReject(requestID, fromSeq, count, reason, oldest, nextSeq)
	}
	switch {
	case !c.limiter.take(s.f.cfg.Clock()):
		return reject(mdsbe.RetransmitRejectReasonRateLimited)
	case int64(count) > int64(s.cfg.RetransmitCountMax):
		return reject(mdsbe.RetransmitRejectReasonTooMany)
	case fromSeq == 0 || count == 0 || fromSeq+uint64(count) < fromSeq:
		return reject(mdsbe.RetransmitRejectReasonInvalidRange)
	}
	endSeq := fromSeq + uint64(count)
	for seq := fromSeq; seq < endSeq; {
		var err error
		c.chunk, seq, err = s.f.win.copyFrom(c.chunk[:0], seq, endSeq, retransmitChunkBytes)
		switch {
		case errors.Is(err, errWindowTooOld):
			oldest, nextSeq = s.f.win.bounds()
			return reject(mdsbe.RetransmitRejectReasonTooOld)
		case errors.Is(err, errWindowInvalid):
			return reject(mdsbe.RetransmitRejectReasonInvalidRange)
		}
		if _, err := c.w.Write(c.chunk); err != nil {
			return err
		}
	}
	s.retransmits.Add(1)
	return reply(c, mdsbe.RetransmitEndEncodedLength, requestID, func(m *mdsbe.RetransmitEnd) {
		m.SetFromSeq(fromSeq)
		m.SetCount(count)
	})
}

// reply sends one answer packet holding a message of type *M, msgLen
// bytes, answering request requestID; set writes the rest of it.
func reply[M any, P interface {
	*M
	WrapEncode(buf []byte, off int) error
	SetRequestID(uint64)
}](c *recoveryConn, msgLen int, requestID uint64, set func(P)) error {
	buf, off, err := c.out.Reserve(msgLen, c.s.f.cfg.Clock().UnixNano())
	if err != nil {
		return err
	}
	m := P(new(M))
	_ = m.WrapEncode(buf, off) // Reserve gave msgLen bytes
	m.SetRequestID(requestID)
	set(m)
	return c.out.Flush()
}

func (c *recoveryConn) sendRetransmitReject(requestID, fromSeq uint64, count uint32,
	reason mdsbe.RetransmitRejectReason, oldest, nextSeq uint64) error {
	return reply(c, mdsbe.RetransmitRejectEncodedLength, requestID, func(m *mdsbe.RetransmitReject) {
		m.SetFromSeq(fromSeq)
		m.SetCount(count)
		m.SetReason(reason)
		m.SetOldestSeq(oldest)
		m.SetNextSeq(nextSeq)
	})
}

func (c *recoveryConn) snapshot(requestID uint64, instrumentID uint32) error {
	s := c.s
	reject := func(reason mdsbe.SnapshotRejectReason) error {
		s.snapshotsRejected.Add(1)
		return reply(c, mdsbe.SnapshotRejectEncodedLength, requestID, func(m *mdsbe.SnapshotReject) {
			m.SetInstrumentID(instrumentID)
			m.SetReason(reason)
		})
	}
	if !c.limiter.take(s.f.cfg.Clock()) {
		return reject(mdsbe.SnapshotRejectReasonRateLimited)
	}
	s.snapSem <- struct{}{}
	defer func() { <-s.snapSem }()
	frames, err := s.f.encodeSnapshot(requestID, instrumentID, s.cfg.SnapshotBytesMax)
	switch {
	case errors.Is(err, ErrUnknownInstrument):
		return reject(mdsbe.SnapshotRejectReasonUnknownInstrument)
	case errors.Is(err, errSnapshotTooLarge):
		return reject(mdsbe.SnapshotRejectReasonTooLarge)
	case err != nil:
		return err
	}
	s.snapshots.Add(1)
	_ = c.conn.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout + time.Duration(len(frames)/(1<<20))*time.Second))
	_, err = c.w.Write(frames)
	return err
}
