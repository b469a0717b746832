package edge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// readyQueueMax bounds connections that passed the Logon gate and wait
	// for QuickFIX/Go's Accept; a connection waits at most until its logon
	// deadline.
	readyQueueMax = 64
	// refusalLingerMax bounds how long a refused connection is drained
	// after its Logout, so that the Logout is not lost to a TCP reset.
	refusalLingerMax = 250 * time.Millisecond
	// acceptRetryMax bounds the pause after a temporary accept error.
	acceptRetryMax = time.Second
)

// Listener is the venue's FIX listener: a net.Listener whose Accept returns
// only connections that have logged on through the gate. Give it to
// QuickFIX/Go with Acceptor.SetNewListenerCallback(l.NewListenerCallback()).
type Listener struct {
	cfg   Config
	tcp   *net.TCPListener
	stats Stats
	epoch time.Time

	ready     chan *Conn
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	// released: Release took the socket (the accept loop ends, Close
	// leaves it open); acceptDone is closed when the accept loop returns.
	released   atomic.Bool
	acceptDone chan struct{}

	mu           sync.Mutex
	conns        int
	sources      sourceTable
	compIDs      compIDTable
	acceptBucket tokenBucket
	sessions     map[SessionKey]*Conn
	handshaking  map[*net.TCPConn]struct{}
	given        bool
}

// Listen starts listening on cfg.Address and accepting connections.
func Listen(cfg Config) (*Listener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	tcp := cfg.Socket
	if tcp == nil {
		ln, err := net.Listen("tcp", cfg.Address)
		if err != nil {
			return nil, fmt.Errorf("edge: %w", err)
		}
		tcp = ln.(*net.TCPListener)
	}
	l := &Listener{
		cfg:         cfg,
		tcp:         tcp,
		epoch:       time.Now(),
		ready:       make(chan *Conn, readyQueueMax),
		done:        make(chan struct{}),
		acceptDone:  make(chan struct{}),
		sources:     newSourceTable(cfg.SourcesMax, cfg.LogonsPerSource, cfg.AcceptsPerSource),
		compIDs:     newCompIDTable(cfg.CompIDsMax),
		sessions:    make(map[SessionKey]*Conn),
		handshaking: make(map[*net.TCPConn]struct{}),
	}
	l.acceptBucket = newTokenBucket(cfg.Accepts, 0)
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// Release stops accepting and returns the listening socket, open, which
// Close then leaves open: the connections the kernel queued for it, and
// those that come, wait there for whoever takes the socket next (a cluster
// node's process after its re-execution, docs/ARCHITECTURE.md, "Losing
// leadership"). Connections accepted already are the Listener's as before.
// Nil when the socket is closed or released already.
func (l *Listener) Release() *net.TCPListener {
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		return nil
	default:
	}
	if l.released.Swap(true) {
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	// A deadline in the past ends the Accept under way; the loop sees
	// released and returns.
	_ = l.tcp.SetDeadline(time.Unix(1, 0))
	<-l.acceptDone
	_ = l.tcp.SetDeadline(time.Time{})
	return l.tcp
}

// nowNs is the listener's monotonic clock.
func (l *Listener) nowNs() int64 { return int64(time.Since(l.epoch)) }

// Accept returns the next connection that passed the Logon gate. Its first
// bytes are the Logon (without its password).
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting, closes connections that have not passed the gate
// yet and waits for the listener's goroutines. Connections already handed
// to QuickFIX/Go stay open: QuickFIX/Go logs them out and closes them.
// l.done is closed before the pass over l.handshaking under l.mu, so that
// a connection accepted meanwhile finds it closed in admit.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.mu.Lock()
		released := l.released.Load()
		l.mu.Unlock()
		if !released {
			_ = l.tcp.Close()
		}
		l.mu.Lock()
		for raw := range l.handshaking {
			_ = raw.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
		for {
			select {
			case c := <-l.ready:
				l.stats.add(ReasonListenerClosed)
				c.kill(ReasonListenerClosed)
				c.Close()
				continue
			default:
			}
			break
		}
	})
	return nil
}

// Addr returns the listening address.
func (l *Listener) Addr() net.Addr { return l.tcp.Addr() }

// Port returns the listening port: QuickFIX/Go's SocketAcceptPort must be
// set to it, because QuickFIX/Go refuses connections whose local port
// differs from the configured one.
func (l *Listener) Port() int { return l.tcp.Addr().(*net.TCPAddr).Port }

// Stats returns the listener's counters.
func (l *Listener) Stats() *Stats { return &l.stats }

// Session returns the connection logged on as key, if any.
func (l *Listener) Session(key SessionKey) (*Conn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.sessions[key]
	return c, ok
}

// NewListenerCallback returns the function to give to QuickFIX/Go's
// Acceptor.SetNewListenerCallback. It hands out this listener once; the
// edge terminates TLS itself, so QuickFIX/Go must have no TLS settings.
func (l *Listener) NewListenerCallback() func(address string, tlsConfig *tls.Config) (net.Listener, error) {
	return func(address string, tlsConfig *tls.Config) (net.Listener, error) {
		if tlsConfig != nil {
			return nil, errors.New("edge: QuickFIX/Go has TLS settings; TLS belongs to edge.Config")
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.given {
			return nil, fmt.Errorf("edge: listener already given to QuickFIX/Go; %s needs its own", address)
		}
		l.given = true
		return l, nil
	}
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	defer close(l.acceptDone)
	retry := 5 * time.Millisecond
	for {
		raw, err := l.tcp.AcceptTCP()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) || l.released.Load() {
				return
			}
			// Out of file descriptors or similar: wait, bounded, and retry.
			l.cfg.Logger.Warn("edge: accept failed", "err", err)
			select {
			case <-time.After(retry):
			case <-l.done:
				return
			}
			retry = min(2*retry, acceptRetryMax)
			continue
		}
		retry = 5 * time.Millisecond
		source := raw.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
		if r := l.admit(source, raw); r != ReasonNone {
			l.stats.add(r)
			l.cfg.Logger.Debug("edge: connection refused", "reason", r, "source", source)
			_ = raw.SetLinger(0) // reset: no TIME_WAIT for refused floods
			_ = raw.Close()
			continue
		}
		l.stats.Accepted.Add(1)
		l.stats.ConnectionsOpen.Add(1)
		l.wg.Add(1)
		go l.handshake(raw, source)
	}
}

// admit applies the connection limits and registers the connection. One
// accepted as Close ran, registered after its pass over the handshaking
// connections, would have been left open: refused here, the accept loop
// closes it, and Close does not wait out its Logon deadline (or take its
// Logon) in handshake.
func (l *Listener) admit(source netip.Addr, raw *net.TCPConn) Reason {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return ReasonListenerClosed
	default:
	}
	now := l.nowNs()
	s := l.sources.get(source, now)
	if s == nil {
		return ReasonSourcesTableFull
	}
	// The source's own rate first: one address connecting in a loop is
	// refused without spending the venue's accepts, which every other
	// client's connection needs.
	if !s.accepts.take(l.cfg.AcceptsPerSource, now) {
		return ReasonAcceptRate
	}
	if !l.acceptBucket.take(l.cfg.Accepts, now) {
		return ReasonAcceptRate
	}
	if l.conns >= l.cfg.ConnectionsMax {
		return ReasonConnectionsMax
	}
	if s.conns >= l.cfg.ConnectionsPerSourceMax {
		return ReasonConnectionsPerSourceMax
	}
	s.conns++
	l.conns++
	l.handshaking[raw] = struct{}{}
	return ReasonNone
}

// forget undoes admit when a connection closes.
func (l *Listener) forget(source netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns--
	if s, ok := l.sources.entries[source]; ok {
		s.conns--
	}
	l.sources.release(source, l.nowNs())
	l.stats.ConnectionsOpen.Add(-1)
}

// handshake runs the TLS handshake and the Logon gate, then hands the
// connection to Accept.
func (l *Listener) handshake(raw *net.TCPConn, source netip.Addr) {
	defer l.wg.Done()
	deadline := time.Now().Add(l.cfg.LogonTimeout)
	_ = raw.SetDeadline(deadline)
	if l.cfg.SocketWriteBufferBytes > 0 {
		_ = raw.SetWriteBuffer(l.cfg.SocketWriteBufferBytes)
	}
	var nc net.Conn = raw
	c := newConn(l, nc, raw, source)
	if l.cfg.TLS != nil {
		tc := tls.Server(raw, l.cfg.TLS)
		if err := tc.Handshake(); err != nil {
			r := ReasonTLSHandshake
			switch {
			case isTimeout(err):
				r = ReasonLogonTimeout
			case errors.Is(err, io.EOF):
				// Closed before a byte of the handshake: a port probe
				// or a health check, counted as gate counts it on a
				// plain listener, not as a client failing TLS.
				r = ReasonClosedBeforeLogon
			}
			if plainFIX(err) {
				// A client configured without TLS: said at Info, as a
				// refused Logon is, so the operator can tell it why.
				l.cfg.Logger.Info("edge: plain FIX on the TLS listener: the client must connect with TLS", "source", source)
			}
			l.refuse(c, r, err)
			return
		}
		if chains := tc.ConnectionState().VerifiedChains; len(chains) > 0 {
			c.cert = chains[0][0]
		}
		c.nc = tc
	}
	logon, r, err := l.gate(c, deadline)
	if r != ReasonNone {
		l.refuse(c, r, err)
		return
	}
	_ = raw.SetDeadline(time.Time{})
	c.pending = logon
	c.fill = make([]byte, 0, initialOutboundBytes)
	c.spare = make([]byte, 0, initialOutboundBytes)
	c.handed = true
	go c.writeLoop()
	l.stats.LogonsPassed.Add(1)
	l.stats.MessagesIn.Add(1)
	l.stats.SessionsOpen.Add(1)
	l.mu.Lock()
	delete(l.handshaking, raw)
	l.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case l.ready <- c:
	case <-l.done:
		l.stats.add(ReasonListenerClosed)
		c.kill(ReasonListenerClosed)
		c.Close()
	case <-timer.C:
		// QuickFIX/Go is not accepting (not started, or stopping).
		l.stats.add(ReasonLogonTimeout)
		c.kill(ReasonLogonTimeout)
		c.Close()
	}
}

// refusal is a Logon the gate refused with a Logout, or, unanswered, by
// closing the connection, its reason logged for the operator
// (Config.CheckLogon).
type refusal struct {
	lf         logonFields
	text       string
	unanswered bool
}

func (r *refusal) Error() string { return r.text }

// gate reads the first message and decides on it. On success it returns
// the Logon to hand to QuickFIX/Go, and the session is claimed.
func (l *Listener) gate(c *Conn, deadline time.Time) ([]byte, Reason, error) {
	msg, err := c.nextMessage()
	if err != nil {
		if errors.Is(err, ErrFatalFrame) {
			return nil, c.fr.reason, err
		}
		if isTimeout(err) {
			return nil, ReasonLogonTimeout, err
		}
		if errors.Is(err, io.EOF) {
			return nil, ReasonClosedBeforeLogon, err
		}
		return nil, ReasonReadError, err
	}
	if string(c.fr.msgType()) != "A" {
		return nil, ReasonNotLogon, errors.New("first message is not a Logon")
	}
	lf, problem := parseLogon(msg)
	if problem == "" && c.fr.unusable != ReasonNone {
		problem = "unusable " + c.fr.unusable.String()
	}
	if problem != "" {
		return nil, ReasonLogonMalformed, &refusal{lf: lf, text: "Malformed Logon: " + problem}
	}
	// Refusals that the FIX session rules answer by disconnecting without
	// a word (QuickFIX's acceptance scripts 1b, 1c, 1d and AlreadyLoggedOn):
	// a BeginString or CompID the venue does not serve, or a second Logon.
	// Credentials that fail get a Logout that says only "Logon refused";
	// an Authenticator may say more (Told) once they passed.
	if !slices.Contains(l.cfg.BeginStrings, lf.key.BeginString) {
		return nil, ReasonWrongBeginString, errors.New("unsupported BeginString")
	}
	if l.cfg.Serving != nil && !l.cfg.Serving() {
		// Not charged: a client retrying while the venue starts would
		// otherwise have spent its logon rate by the time it serves.
		return nil, ReasonNotServing, &refusal{lf: lf, text: "the venue is starting: try again in a few seconds"}
	}
	if l.cfg.Refusing != nil {
		if text := l.cfg.Refusing(); text != "" {
			return nil, ReasonNotServing, &refusal{lf: lf, text: text}
		}
	}
	if r := l.takeSourceToken(c.source); r != ReasonNone {
		return nil, r, &refusal{lf: lf, text: "Too many logon attempts"}
	}
	req := LogonRequest{Key: lf.key, Password: lf.password, NewPassword: lf.newPassword, Source: c.source, Certificate: c.cert}
	authErr := l.cfg.Authenticator.Authenticate(&req)
	if r := l.takeCompIDToken(lf.key.ClientCompID, c.source, authErr == nil); r != ReasonNone {
		return nil, r, &refusal{lf: lf, text: "Too many logon attempts"}
	}
	if err := authErr; err != nil {
		l.cfg.Logger.Info("edge: logon refused", "session", lf.key, "source", c.source, "err", err)
		if errors.Is(err, ErrUnknownCompID) || errors.Is(err, ErrWrongVenueCompID) {
			return nil, ReasonLogonRefused, err
		}
		if told := (*Told)(nil); errors.As(err, &told) {
			return nil, ReasonLogonRefused, &refusal{lf: lf, text: told.Text}
		}
		return nil, ReasonLogonRefused, &refusal{lf: lf, text: "Logon refused"}
	}
	// The framer's buffer may still hold bytes the client sent after the
	// Logon; QuickFIX/Go reads the Logon first, then those. The copy keeps
	// the Logon valid while the buffer moves.
	logon := bytes.Clone(stripCredentials(msg))
	if l.cfg.CheckLogon != nil {
		// After the credentials: only the client learns what was wrong.
		if problem, answer := l.cfg.CheckLogon(lf.key, logon); problem != "" {
			return nil, ReasonLogonMalformed, &refusal{lf: lf, text: "Malformed Logon: " + problem, unanswered: !answer}
		}
	}
	if l.cfg.CheckSeqNums != nil {
		if text := l.cfg.CheckSeqNums(lf.key, lf.reset, lf.seqNum); text != "" {
			l.cfg.Logger.Info("edge: logon refused: the session cannot go on from its sequence numbers",
				"session", lf.key, "source", c.source, "msg_seq_num", lf.seqNum, "text", text)
			return nil, ReasonLogonSeqNums, &refusal{lf: lf, text: text}
		}
	}
	c.key = lf.key
	if !l.claimWaiting(c, deadline) {
		return nil, ReasonLogonDuplicate, errors.New("session already logged on")
	}
	return logon, ReasonNone, nil
}

// takeSourceToken charges one Logon attempt to its source address.
func (l *Listener) takeSourceToken(source netip.Addr) Reason {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sources.entries[source] // present while the connection is open
	if s != nil && !s.logons.take(l.cfg.LogonsPerSource, l.nowNs()) {
		return ReasonLogonRateLimit
	}
	return ReasonNone
}

// takeCompIDToken charges one Logon attempt to its CompID: an attempt
// whose credentials passed to the CompID, one that failed to the CompID
// from its source only. Anyone may send Logons naming a client's CompID,
// and failures charged to the CompID alone locked its client out for as
// long as someone kept failing (the steps of a Logon in doc.go).
func (l *Listener) takeCompIDToken(compID string, source netip.Addr, authenticated bool) Reason {
	key := []byte(compID)
	if !authenticated {
		key = append(append(key, 0), source.String()...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, tracked := l.compIDs.take(key, l.cfg.LogonsPerCompID, l.nowNs())
	if !tracked {
		return ReasonCompIDsTableFull
	}
	if !ok {
		return ReasonLogonRateLimit
	}
	return ReasonNone
}

// duplicateLogonWait bounds how long a Logon waits for its session's
// previous connection to be released while that connection is still open:
// a client that closes and logs on again at once (within a millisecond)
// reaches the venue before the old connection's end has, and was refused
// as a duplicate. A previous connection that has ended (its read failed,
// its socket is closed, or the client closed or reset it: claim) is
// waited for up to the Logon's own deadline: it
// can no longer be a session logged on twice, and QuickFIX/Go releases it
// once its session goroutine is free to see the end (a resend or a mass
// status it is writing, which took longer than this bound).
const duplicateLogonWait = 250 * time.Millisecond

// claimWaiting is claim, retried until the previous connection is released
// or, while that one is open, Config.duplicateLogonWait passes; the Logon's
// deadline bounds both.
func (l *Listener) claimWaiting(c *Conn, deadline time.Time) bool {
	open := time.Now().Add(l.cfg.duplicateLogonWait)
	for {
		ok, ended := l.claim(c)
		if ok {
			return true
		}
		now := time.Now()
		if (!ended || deadline.IsZero()) && now.After(open) || !deadline.IsZero() && now.After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// claim registers c as its session's connection, unless one is logged on;
// ended then says whether that one has ended and waits only for
// QuickFIX/Go to release it. One the client has closed or reset has ended,
// though no one read it yet: QuickFIX/Go reads a connection only once its
// session goroutine has taken it, and until then (a Logon the client
// dropped before its answer, its session goroutine busy) a client that
// logged on again at once was refused as a duplicate.
func (l *Listener) claim(c *Conn) (ok, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if held, busy := l.sessions[c.key]; busy {
		if !held.ended() && held.peerGone() {
			held.noteReason(held.readEndReason())
		}
		return false, held.ended()
	}
	l.sessions[c.key] = c
	return true, false
}

// release undoes claim and admit when a handed connection is closed.
func (l *Listener) release(c *Conn) {
	l.mu.Lock()
	if l.sessions[c.key] == c {
		delete(l.sessions, c.key)
	}
	c.mu.Lock()
	reason := c.reason
	c.mu.Unlock()
	l.mu.Unlock()
	l.forget(c.source)
	l.stats.SessionsOpen.Add(-1)
	// Every Reason has its counter (doc.go, "Limits"): the edge's own
	// closes are counted where they happen, these two only here, where
	// every session's connection ends.
	if reason == ReasonPeerClosed || reason == ReasonClosedBySession {
		l.stats.add(reason)
	}
	if l.cfg.OnClose != nil {
		l.cfg.OnClose(c.key, reason)
	}
}

// refuse counts, logs and closes a connection that did not pass the gate;
// a refused Logon is answered with a Logout first.
func (l *Listener) refuse(c *Conn, r Reason, err error) {
	l.stats.add(r)
	l.mu.Lock()
	delete(l.handshaking, c.raw)
	l.mu.Unlock()
	var ref *refusal
	switch {
	case errors.As(err, &ref) && ref.unanswered:
		l.cfg.Logger.Info("edge: logon refused without an answer", "reason", r, "source", c.source, "session", ref.lf.key, "problem", ref.text)
	case ref != nil:
		l.cfg.Logger.Debug("edge: logon refused", "reason", r, "source", c.source, "session", ref.lf.key)
		logout := refusalLogout(ref.lf, ref.text, time.Now())
		linger := time.Now().Add(refusalLingerMax)
		_ = c.raw.SetDeadline(linger)
		if _, err := c.nc.Write(logout); err == nil {
			_ = c.raw.CloseWrite()
			// Read what the client still sends until it closes, so the
			// close is a FIN after the Logout rather than a reset.
			var sink [512]byte
			for {
				if _, err := c.raw.Read(sink[:]); err != nil {
					break
				}
			}
		}
	default:
		l.cfg.Logger.Debug("edge: connection closed", "reason", r, "source", c.source, "err", err)
	}
	_ = c.raw.Close()
	l.forget(c.source)
}

// plainFIX reports whether a failed TLS handshake met a FIX message
// instead: its first record header reads "8=FIX".
func plainFIX(err error) bool {
	var rh tls.RecordHeaderError
	return errors.As(err, &rh) && bytes.HasPrefix(rh.RecordHeader[:], []byte("8=FIX"))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
