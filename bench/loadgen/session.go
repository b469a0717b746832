package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fixvenue/fixvenue/bench/hdrplot"
	"github.com/fixvenue/fixvenue/bench/pace"
	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/tag"
)

// Session bounds.
const (
	// readBufferBytes holds two of the largest messages, so a frame never
	// outgrows the buffer after compaction.
	readBufferBytes = 2 * messageBytesMax
	// adminBytesMax bounds one admin message (Logon, Heartbeat, gap fill).
	adminBytesMax = 512
	// testReqIDBytesMax bounds the TestReqID echoed in a Heartbeat.
	testReqIDBytesMax = 64
	// refRingSlots remembers the last messages sent per session, so a
	// session Reject (3) or BusinessMessageReject (j), which name the
	// refused message by RefSeqNum (45), can be tied to its order.
	refRingSlots = 1 << 14
	// rejectKindsMax bounds the distinct reject kinds kept per session;
	// later kinds are counted under rejectKindOther.
	rejectKindsMax = 32
	// rejectTextBytesMax is how much of Text (58) names a reject kind.
	rejectTextBytesMax = 60
	// writeTimeout bounds one write to the venue.
	writeTimeout    = 5 * time.Second
	rejectKindOther = "other"
)

// sentRef ties an outbound MsgSeqNum to the order or cancel it carried.
type sentRef struct {
	seq   uint64
	index int64
	kind  byte // kindOrder or kindCancel; 0 for an empty slot
}

// session is one FIX connection of a run. The sender goroutine and the
// receiver goroutine share only the connection's outbound side, under mu.
type session struct {
	r      *runner
	idx    int64 // 0-based
	compID string
	conn   net.Conn

	// mu orders everything written to the connection and guards the
	// outbound sequence number, buffers and the ref ring.
	mu      sync.Mutex
	nextOut uint64
	out     []byte
	admin   *fixWriter
	clock   wallClock
	refs    []sentRef
	orders  [orderKindCount]*template
	cancels [2]*template // by side: passiveBuy, passiveSell

	lastWriteNs atomic.Int64
	closing     atomic.Bool
	logoutSeen  chan struct{}
	logoutOnce  sync.Once

	// Receiver state, owned by the receiver goroutine once logged on.
	reader        *fixwire.Reader // over stampedConn
	readNs        int64
	in            inbound
	expectIn      uint64
	latency       *hdrhistogram.Histogram
	cancelLatency *hdrhistogram.Histogram
	rejects       map[string]*int64
	rejectKey     []byte
	recv          receiveStats

	// Sender state, owned by the sender goroutine.
	sendLag *hdrhistogram.Histogram
	sent    sendStats

	errMu sync.Mutex
	err   error
}

// receiveStats are counted by the receiver.
type receiveStats struct {
	ers            int64 // ExecutionReports
	ersMeasured    int64 // ... received after the warm-up
	lastERNs       int64
	lastAnswerNs   int64
	seqGaps        int64 // inbound MsgSeqNum jumps (messages missed)
	unknownAnswers int64 // answers whose ClOrdID is not one of this run's
	possDups       int64
	clamped        int64
	resendRequests int64
	testRequests   int64
}

// sendStats are counted by the sender.
type sendStats struct {
	ordersMeasured int64 // orders sent that are past the warm-up
	// lastSendNs is when the last write holding an order went out: the
	// cancels of the last orders, sent after them, are not orders sent,
	// and at a low rate they stretched the window the achieved rate is
	// measured over (10/s offered read as 4/s achieved, the run held).
	lastSendNs int64
}

func newSession(r *runner, idx int64) (*session, error) {
	c := &r.cfg
	s := &session{
		r: r, idx: idx, compID: c.SenderPrefix + strconv.Itoa(c.FirstSession+int(idx)),
		nextOut: 1, out: make([]byte, sendBatchMax*2*templateBytesMax), admin: newFixWriter(adminBytesMax),
		refs: make([]sentRef, refRingSlots), logoutSeen: make(chan struct{}),
		expectIn: 1,
		latency:  hdrplot.NewHistogram(hdrplot.LowestNsFIX), cancelLatency: hdrplot.NewHistogram(hdrplot.LowestNsFIX),
		sendLag: hdrplot.NewHistogram(hdrplot.LowestNsFIX), rejects: make(map[string]*int64, rejectKindsMax+1),
		rejectKey: make([]byte, 0, 128),
	}
	s.reader = fixwire.NewReaderSize(stampedConn{s}, messageBytesMax, readBufferBytes)
	buyPx, sellPx, err := passivePrices(c.Price, c.Spread)
	if err != nil {
		return nil, err
	}
	w := newFixWriter(templateBytesMax)
	qty := strconv.FormatInt(c.Qty, 10)
	order := func(side, account, price string) []templateField {
		return []templateField{{tag.ClOrdID, placeholderOrderID}, {tag.Account, account}, {tag.Symbol, c.Symbol}, {tag.Side, side},
			{tag.TransactTime, placeholderTransactTime}, {tag.OrderQty, qty}, {tag.OrdType, "2"}, {tag.Price, price}, {tag.TimeInForce, "0"}}
	}
	cancel := func(side string) []templateField {
		return []templateField{{tag.ClOrdID, placeholderCancelID}, {tag.OrigClOrdID, placeholderOrderID}, {tag.Symbol, c.Symbol}, {tag.Side, side},
			{tag.TransactTime, placeholderTransactTime}, {tag.OrderQty, qty}}
	}
	specs := []struct {
		dst  **template
		typ  string
		body []templateField
	}{
		{&s.orders[passiveBuy], "D", order("1", "LOADP", buyPx)},
		{&s.orders[passiveSell], "D", order("2", "LOADP", sellPx)},
		{&s.orders[crossBuy], "D", order("1", "LOADB", c.Price)},
		{&s.orders[crossSell], "D", order("2", "LOADS", c.Price)},
		{&s.cancels[0], "F", cancel("1")},
		{&s.cancels[1], "F", cancel("2")},
	}
	for _, sp := range specs {
		t, err := newTemplate(w, sp.typ, s.compID, c.TargetCompID, r.runID, sp.body)
		if err != nil {
			return nil, fmt.Errorf("loadgen: cannot pre-encode %s for %s: %w", sp.typ, s.compID, err)
		}
		*sp.dst = t
	}
	return s, nil
}

// fail records the session's first error and closes its connection, which
// ends both of its goroutines.
func (s *session) fail(err error) {
	s.errMu.Lock()
	first := s.err == nil
	if first {
		s.err = fmt.Errorf("%s: %w", s.compID, err)
	}
	s.errMu.Unlock()
	if first {
		s.r.failed.Add(1)
	}
	s.closing.Store(true)
	if s.conn != nil {
		s.conn.Close()
	}
}

func (s *session) failure() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// write sends b; the caller holds mu.
func (s *session) write(b []byte) error {
	if err := s.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	_, err := s.conn.Write(b)
	s.lastWriteNs.Store(s.r.sinceStartNs())
	return err
}

// sendAdmin builds an admin message with the next sequence number and
// writes it. Extra body fields come from fill.
func (s *session) sendAdmin(msgType string, fill func(w *fixWriter)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.admin
	w.reset()
	w.header(msgType, s.compID, s.r.cfg.TargetCompID, s.nextOut, s.clock.stamp(time.Now())[:])
	if fill != nil {
		fill(w)
	}
	msg, _ := w.finish()
	s.nextOut++
	return s.write(msg)
}

func (s *session) sendHeartbeat(testReqID []byte) error {
	if len(testReqID) > testReqIDBytesMax {
		testReqID = testReqID[:testReqIDBytesMax]
	}
	return s.sendAdmin("0", func(w *fixWriter) {
		if len(testReqID) > 0 {
			w.field(tag.TestReqID, testReqID)
		}
	})
}

// sendGapFill answers a ResendRequest: the load generator keeps no store and
// never replays orders (their due times have passed), so the whole range
// from BeginSeqNo up to the next sequence number is skipped with one
// SequenceReset-GapFill, sent as a possible duplicate with the sequence
// number the venue asked for.
func (s *session) sendGapFill(beginSeq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if beginSeq == 0 || beginSeq >= s.nextOut {
		beginSeq = s.nextOut // nothing we sent is missing: reset from here
	}
	now := s.clock.stamp(time.Now())[:]
	w := s.admin
	w.reset()
	w.header("4", s.compID, s.r.cfg.TargetCompID, beginSeq, now)
	w.str(tag.PossDupFlag, "Y")
	w.field(tag.OrigSendingTime, now)
	w.str(tag.GapFillFlag, "Y")
	w.uint(tag.NewSeqNo, s.nextOut)
	msg, _ := w.finish()
	return s.write(msg)
}

// logon connects and logs on with ResetSeqNumFlag, so both sides start at 1.
func (s *session) logon(ctx context.Context) error {
	c := &s.r.cfg
	d := net.Dialer{Timeout: c.LogonTimeout}
	conn, err := d.DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("%s: %w", s.compID, err)
	}
	s.conn = conn
	err = s.sendAdmin("A", func(w *fixWriter) {
		w.str(tag.EncryptMethod, "0")
		w.uint(tag.HeartBtInt, uint64(c.HeartBtIntS))
		w.str(tag.ResetSeqNumFlag, "Y")
		if c.Password != "" {
			w.str(tag.Password, c.Password)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: logon: %w", s.compID, err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(c.LogonTimeout)); err != nil {
		return err
	}
	// The wait for the Logon ends with ctx (a Ctrl-C), not LogonTimeout
	// later.
	defer context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })()
	for {
		msg, err := s.nextFrame()
		if errors.Is(err, io.EOF) {
			// A venue closes some Logons without a word (a CompID it does
			// not configure, a SendingTime too far from its clock): say
			// what to look at.
			return fmt.Errorf("%s: waiting for Logon: the venue closed the connection without an answer "+
				"(is %s one of its sessions? is this machine's clock right? its log says why): %w", s.compID, s.compID, err)
		}
		if err != nil {
			return fmt.Errorf("%s: waiting for Logon: %w", s.compID, err)
		}
		if err := s.in.parse(msg); err != nil {
			return fmt.Errorf("%s: waiting for Logon: %w", s.compID, err)
		}
		switch {
		case is(s.in.msgType, "A"):
			s.expectIn = s.in.seq + 1
			return conn.SetReadDeadline(time.Time{})
		case is(s.in.msgType, "5"):
			return fmt.Errorf("%s: logon refused: %q", s.compID, s.in.text)
		case is(s.in.msgType, "3"):
			return fmt.Errorf("%s: logon rejected: %q", s.compID, s.in.text)
		}
	}
}

// nextFrame returns the next complete message from the connection. The
// result aliases the read buffer and is valid until the next call; readNs
// is when the read that completed it returned.
func (s *session) nextFrame() ([]byte, error) { return s.reader.Next() }

// stampedConn records when each read returns, for the latencies.
type stampedConn struct{ s *session }

func (c stampedConn) Read(p []byte) (int, error) {
	n, err := c.s.conn.Read(p)
	c.s.readNs = c.s.r.sinceStartNs()
	return n, err
}

// runReceiver reads until the connection closes.
func (s *session) runReceiver() {
	for {
		msg, err := s.nextFrame()
		if err != nil {
			if !s.closing.Load() {
				s.fail(fmt.Errorf("read: %w", err))
			}
			return
		}
		if err := s.handle(msg, s.readNs); err != nil {
			s.fail(err)
			return
		}
	}
}

// handle acts on one inbound message received at nowNs.
func (s *session) handle(msg []byte, nowNs int64) error {
	m := &s.in
	if err := m.parse(msg); err != nil {
		return err
	}
	switch {
	case m.seq > s.expectIn && !is(m.msgType, "4"):
		s.recv.seqGaps += int64(m.seq - s.expectIn)
		s.expectIn = m.seq + 1
	case m.seq >= s.expectIn:
		s.expectIn = m.seq + 1
	case m.possDup:
		s.recv.possDups++
	}
	switch string(m.msgType) {
	case "8":
		s.onExecutionReport(nowNs)
	case "9":
		s.onCancelReject(nowNs)
	case "0", "A":
	case "1":
		s.recv.testRequests++
		return s.sendHeartbeat(m.testReqID)
	case "2":
		s.recv.resendRequests++
		return s.sendGapFill(m.beginSeq)
	case "4":
		if m.newSeq > 0 {
			s.expectIn = m.newSeq
		}
	case "5":
		return s.onLogout()
	case "3":
		s.onRefReject("Reject 373=", nowNs)
	case "j":
		s.onRefReject("BusinessMessageReject 380=", nowNs)
	}
	return nil
}

func (s *session) onLogout() error {
	s.logoutOnce.Do(func() { close(s.logoutSeen) })
	if s.closing.Load() {
		return nil
	}
	text := string(s.in.text)
	_ = s.sendAdmin("5", nil)
	return fmt.Errorf("venue logged the session out: %q", text)
}

// clOrdIndex decodes one of this run's ClOrdIDs: kind letter and order index.
// A ClOrdID of another run or of another session's order is not ours.
func (s *session) clOrdIndex(id []byte) (byte, int64, bool) {
	if len(id) != clOrdIDBytes || string(id[:runIDBytes]) != s.r.runID {
		return 0, 0, false
	}
	kind := id[runIDBytes]
	v, ok := parseUint(id[runIDBytes+1:])
	i := int64(v)
	if !ok || kind != kindOrder && kind != kindCancel || i >= s.r.plan.totalOrders || i%s.r.plan.sessions != s.idx {
		return 0, 0, false
	}
	return kind, i, true
}

func (s *session) onExecutionReport(nowNs int64) {
	m := &s.in
	s.recv.ers++
	s.r.ers.Add(1)
	if nowNs >= s.r.warmupEndNs {
		s.recv.ersMeasured++
		s.recv.lastERNs = nowNs
	}
	kind, i, ok := s.clOrdIndex(m.clOrdID)
	if !ok {
		s.recv.unknownAnswers++
		return
	}
	if m.possDup {
		return // a resent copy is never a first answer
	}
	if is(m.execType, "8") {
		s.countReject("ExecutionReport 103=")
	}
	s.answer(kind, i, nowNs)
}

func (s *session) onCancelReject(nowNs int64) {
	kind, i, ok := s.clOrdIndex(s.in.clOrdID)
	if !ok {
		s.recv.unknownAnswers++
		return
	}
	if s.in.possDup {
		return
	}
	s.countReject("OrderCancelReject 102=")
	s.answer(kind, i, nowNs)
}

// onRefReject ties a session-level reject to the order or cancel it refused.
func (s *session) onRefReject(label string, nowNs int64) {
	s.countReject(label)
	ref := s.in.refSeq
	s.mu.Lock()
	e := s.refs[ref&(refRingSlots-1)]
	s.mu.Unlock()
	if ref == 0 || e.kind == 0 || e.seq != ref {
		return
	}
	s.answer(e.kind, e.index, nowNs)
}

// answer records the first answer to order or cancel i.
func (s *session) answer(kind byte, i int64, nowNs int64) {
	r := s.r
	flags, dueNs, hist := r.orderAnswered, r.plan.dueNs(i), s.latency
	counter := &r.ordersAnswered
	if kind == kindCancel {
		flags, dueNs, hist, counter = r.cancelAnswered, r.plan.cancelDueNs(i), s.cancelLatency, &r.cancelsAnswered
	}
	if flags[i] != 0 {
		return
	}
	flags[i] = 1
	counter.Add(1)
	s.recv.lastAnswerNs = nowNs
	if dueNs >= r.warmupEndNs && hdrplot.Record(hist, nowNs-dueNs) {
		s.recv.clamped++
	}
}

// countReject counts a reject under "label<code>: <text>".
func (s *session) countReject(label string) {
	s.r.rejects.Add(1)
	k := append(s.rejectKey[:0], label...)
	k = append(k, s.in.rejectCode...)
	if text := s.in.text; len(text) > 0 {
		if len(text) > rejectTextBytesMax {
			text = text[:rejectTextBytesMax]
		}
		k = append(k, ": "...)
		k = append(k, text...)
	}
	s.rejectKey = k
	if n, ok := s.rejects[string(k)]; ok {
		*n++
		return
	}
	key := string(k)
	if len(s.rejects) >= rejectKindsMax {
		key = rejectKindOther
		if n, ok := s.rejects[key]; ok {
			*n++
			return
		}
	}
	one := int64(1)
	s.rejects[key] = &one
}

// runSender sends the session's orders and cancels at their due times.
func (s *session) runSender() {
	p := &s.r.plan
	slots := p.sessionSlots(s.idx)
	for k := int64(0); k < slots; {
		if s.r.stopping.Load() || s.closing.Load() {
			return
		}
		now := s.r.sinceStartNs()
		if due := p.dueNs(p.global(s.idx, k)); due > now {
			pace.Sleep(time.Duration(due - now))
			continue
		}
		next, err := s.sendDue(k, slots, now)
		if err != nil {
			s.fail(fmt.Errorf("write: %w", err))
			return
		}
		k = next
	}
}

// sendDue writes every slot from k that is due at nowNs (at most
// sendBatchMax) in one write, and returns the next slot.
func (s *session) sendDue(k, slots, nowNs int64) (int64, error) {
	p := &s.r.plan
	orders := p.sessionOrders(s.idx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nextOut+2*sendBatchMax > seqMax {
		return k, errors.New("MsgSeqNum bound reached")
	}
	ts := s.clock.stamp(time.Now())
	n := 0
	var sentOrders, sentCancels, lagMax int64
	for batch := 0; k < slots && batch < sendBatchMax; batch++ {
		i := p.global(s.idx, k)
		due := p.dueNs(i)
		if due > nowNs {
			break
		}
		if k < orders {
			n += s.encode(s.out[n:], s.orders[p.kind(i)], ts, i, kindOrder)
			sentOrders++
			if i >= p.warmupOrders {
				s.sent.ordersMeasured++
			}
		}
		if target, ok := p.cancelTarget(s.idx, k); ok {
			side := 0
			if p.kind(target) == passiveSell {
				side = 1
			}
			n += s.encode(s.out[n:], s.cancels[side], ts, target, kindCancel)
			sentCancels++
		}
		lag := nowNs - due
		hdrplot.Record(s.sendLag, lag)
		lagMax = max(lagMax, lag)
		k++
	}
	err := s.write(s.out[:n])
	if sentOrders > 0 {
		s.sent.lastSendNs = s.r.sinceStartNs()
	}
	s.r.ordersSent.Add(sentOrders)
	s.r.cancelsSent.Add(sentCancels)
	s.r.noteLag(lagMax)
	return k, err
}

// encode patches template t for order (or cancel of order) i, remembers
// which message carries it, and returns the bytes written.
func (s *session) encode(dst []byte, t *template, ts *[timestampBytes]byte, i int64, kind byte) int {
	seq := s.nextOut
	s.nextOut++
	s.refs[seq&(refRingSlots-1)] = sentRef{seq: seq, index: i, kind: kind}
	return t.encode(dst, seq, ts, uint64(i))
}

// logout sends Logout, waits for the venue's (bounded), and closes.
func (s *session) logout(timeout time.Duration) {
	if s.failure() == nil {
		s.closing.Store(true)
		if err := s.sendAdmin("5", nil); err == nil {
			select {
			case <-s.logoutSeen:
			case <-time.After(timeout):
			}
		}
	}
	s.closing.Store(true)
	s.conn.Close()
}
