package feedclient

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// Defaults and bounds of Config.
const (
	FeedAddrDefault           = "127.0.0.1:9500"
	RecoveryAddrDefault       = "127.0.0.1:9501"
	ChannelDefault            = 1
	InstrumentsMaxDefault     = 4096
	LevelsMaxDefault          = 1 << 16
	ReorderPacketsMaxDefault  = 1024
	GapTimeoutDefault         = 20 * time.Millisecond
	RecoveryTimeoutDefault    = 5 * time.Second
	RetransmitCountMaxDefault = 10000
	SeqAheadMaxDefault        = 1 << 20
	ReceiveBufferBytesDefault = 4 << 20
	resyncBackoffDefault      = 200 * time.Millisecond
	// rateLimitedWait is how long a gap waits after the recovery service
	// refused its retransmission for its rate limit: about the time its
	// token bucket takes to refill one request at the service's default
	// rate (marketdata.RecoveryRequestsPerSecDefault, 10 a second).
	rateLimitedWait            = 100 * time.Millisecond
	snapshotAttemptsPerSyncMax = 3
)

// Config configures a Client. Zero values take the defaults.
type Config struct {
	// FeedAddr is where to receive the feed: a local unicast address, or a
	// multicast group and port, joined on MulticastInterface (an interface
	// name or one of its IPs; "" lets the system choose).
	FeedAddr           string
	MulticastInterface string
	// FeedBAddr, when set, is the feed's B line (the venue's
	// marketdata.feed_b_addr), received beside FeedAddr: whichever line
	// brings a message first is applied, the other's copy is a duplicate,
	// and a datagram one line lost is taken from the other before any
	// recovery ("A and B lines" in the package documentation). Its
	// multicast group is joined on MulticastInterfaceB ("": as
	// MulticastInterface).
	FeedBAddr           string
	MulticastInterfaceB string
	RecoveryAddr        string // the feed's TCP recovery service; a comma-separated list is tried in turn (NewTCPRecoverer)
	Channel             uint16 // packets of other channels are ignored

	InstrumentsMax int // books kept; messages for more instruments are an error
	LevelsMax      int // levels per side per book
	// ReorderPacketsMax bounds packets held ahead of a gap.
	ReorderPacketsMax int
	// GapTimeout is how long a gap may wait for late (reordered) packets
	// before the client asks for a retransmission.
	GapTimeout time.Duration
	// RecoveryTimeout bounds one retransmission or snapshot exchange.
	RecoveryTimeout time.Duration
	// RetransmitCountMax: larger gaps go straight to a snapshot. Keep it at
	// or below the service's RetransmitCountMax.
	RetransmitCountMax int
	// SeqAheadMax: a packet further than this beyond the next expected
	// sequence is treated as garbage, not as a gap.
	SeqAheadMax        uint64
	ReceiveBufferBytes int // SO_RCVBUF of the feed socket

	// Conn, if set, is the feed socket to read instead of listening on
	// FeedAddr (Run closes it); ConnB likewise for FeedBAddr, and sets a B
	// line without it.
	Conn  *net.UDPConn
	ConnB *net.UDPConn

	Callbacks Callbacks
	// Recoverer replaces the TCP recovery client (tests, other transports).
	Recoverer Recoverer
	// Clock drives gap timers; nil means time.Now.
	Clock func() time.Time
}

func (c *Config) fill() error {
	c.FeedAddr = cmp.Or(c.FeedAddr, FeedAddrDefault)
	c.RecoveryAddr = cmp.Or(c.RecoveryAddr, RecoveryAddrDefault)
	c.Channel = cmp.Or(c.Channel, ChannelDefault)
	c.InstrumentsMax = cmp.Or(c.InstrumentsMax, InstrumentsMaxDefault)
	c.LevelsMax = cmp.Or(c.LevelsMax, LevelsMaxDefault)
	c.ReorderPacketsMax = cmp.Or(c.ReorderPacketsMax, ReorderPacketsMaxDefault)
	c.RetransmitCountMax = cmp.Or(c.RetransmitCountMax, RetransmitCountMaxDefault)
	c.ReceiveBufferBytes = cmp.Or(c.ReceiveBufferBytes, ReceiveBufferBytesDefault)
	c.GapTimeout = cmp.Or(c.GapTimeout, GapTimeoutDefault)
	c.RecoveryTimeout = cmp.Or(c.RecoveryTimeout, RecoveryTimeoutDefault)
	c.SeqAheadMax = cmp.Or(c.SeqAheadMax, SeqAheadMaxDefault)
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.InstrumentsMax < 1 || c.LevelsMax < 1 || c.ReorderPacketsMax < 1 || c.RetransmitCountMax < 1 ||
		c.GapTimeout < 0 || c.RecoveryTimeout <= 0 {
		return errors.New("feedclient: bounds must be positive")
	}
	return nil
}

// Callbacks are called on the client's goroutine, in feed order. Each may
// be nil. They must not block for long: the feed queues in the socket
// buffer meanwhile.
type Callbacks struct {
	// OnMessage sees every sequenced message once, in sequence order,
	// after the client applied it (market-by-order users start here).
	OnMessage func(seq uint64, templateID uint16, msg []byte)
	// OnBook reports a book that changed, once per packet (or snapshot).
	OnBook func(b *Book)
	// OnTrade reports each trade.
	OnTrade func(b *Book, t Trade)
	// OnRecovery reports every gap or inconsistency and how it ended.
	OnRecovery func(r Recovery)
	// OnHeartbeat reports a heartbeat; inSync is true when the client has
	// every message the heartbeat announces (nothing lost at the tail).
	OnHeartbeat func(nextSeq uint64, inSync bool)
	// OnEndOfSession reports that the publisher stopped; nextSeq is the
	// number its next message will have. A venue restarted on the same
	// journal continues from there, so the client needs no action.
	OnEndOfSession func(nextSeq uint64)
	// OnIdle is called by Run when the socket has had nothing to read for a
	// poll interval: the client has applied everything that arrived.
	OnIdle func()
}

// Trade is one trade from the feed.
type Trade struct {
	Seq           uint64
	TradeID       uint64
	PriceTicks    int64
	Qty           int64
	AggressorSide mdsbe.Side
	// Auction: a trade of an auction's uncross, which has no aggressor
	// (AggressorSide is Buy then only by the feed's convention).
	Auction bool
	// BuyOrderID and SellOrderID are the ids the feed shows the orders
	// under: the OrderID, or for an iceberg's refilled slice a public id of
	// its own, from 2^62 (package marketdata, "Icebergs").
	BuyOrderID     uint64
	SellOrderID    uint64
	TransactTimeNs int64
}

// RecoveryCause says why the client recovered.
type RecoveryCause uint8

// The causes.
const (
	CauseJoin         RecoveryCause = iota + 1 // first synchronisation
	CauseGap                                   // sequence numbers skipped
	CauseInconsistent                          // a message disagreed with the book
)

// RecoveryOutcome says how a recovery ended.
type RecoveryOutcome uint8

// The outcomes.
const (
	Retransmitted RecoveryOutcome = iota + 1 // the missing messages were resent
	Snapshotted                              // the books were replaced by a snapshot
	Unrecovered                              // both failed: the books are stale until a later attempt works
)

func (o RecoveryOutcome) String() string {
	switch o {
	case Retransmitted:
		return "retransmitted"
	case Snapshotted:
		return "snapshot"
	case Unrecovered:
		return "unrecovered"
	}
	return "unknown"
}

// Recovery describes one gap (or inconsistency) and its outcome.
type Recovery struct {
	Cause   RecoveryCause
	FromSeq uint64 // first missing sequence
	Count   uint64 // missing messages (0 when unknown)
	Outcome RecoveryOutcome
	// RetransmitReject is the service's reason when it refused to resend.
	RetransmitReject mdsbe.RetransmitRejectReason
	Err              error // why the last attempt failed, for Unrecovered
	// PassedOver are the recovery addresses the recovery tried and passed
	// over before one answered, each with why: a NotServingError for a
	// cluster's follower, a dial's error for a node that is down.
	PassedOver []error
}

// Stats counts the client's work.
type Stats struct {
	Packets           uint64 // packets handled (feed and recovery)
	Messages          uint64 // sequenced messages applied
	Duplicates        uint64 // packets wholly seen before
	Reordered         uint64 // packets held ahead of a gap
	Malformed         uint64 // packets or messages that could not be decoded
	Overflows         uint64 // packets dropped because the reorder buffer stayed full
	OtherChannel      uint64
	Gaps              uint64
	Retransmissions   uint64
	Snapshots         uint64
	Unrecovered       uint64
	Inconsistencies   uint64
	RetransmitRejects uint64
	// StaleHeartbeats are heartbeats announcing a lower sequence than
	// expected that were sent before a packet already received (the
	// network reordered them), or that came on a line behind the other,
	// not taken for a feed numbering anew.
	StaleHeartbeats uint64
	// Lines counts what Run read on each line, A then B (B stays zero
	// without one).
	Lines [2]LineStats
}

// LineStats counts one line's datagrams.
type LineStats struct {
	Datagrams uint64 // datagrams read
	// Duplicates are sequenced packets whose messages had all come
	// before, on the other line (or by recovery): with both lines up,
	// about half of either's.
	Duplicates uint64
}

// Client keeps books from the feed. It is single-threaded: Run (or a
// caller of HandlePacket and Poll) owns it; other goroutines use Inspect
// while Run is running.
type Client struct {
	cfg   Config
	rec   Recoverer
	books map[uint32]*Book
	bySym map[string]*Book

	expected     uint64 // next sequence to apply; 0 until the first snapshot
	knownNextSeq uint64 // highest next sequence announced by a heartbeat or a packet
	// latestSeqTimeNs is the latest sending time of a sequenced packet
	// received or of the snapshot applied (its last event's time): a
	// heartbeat stamped before it is out of date.
	latestSeqTimeNs int64
	gapSinceNs      int64 // when the current gap was first seen; 0 when none
	resyncAfter     int64 // no automatic resync before this time (after a failure)
	// retransmitAfter: no retransmission is asked for before this time
	// (the service refused the last one for its rate limit).
	retransmitAfter int64
	reorder         reorderBuffer
	// lines is how many lines Run reads (1, or 2 with a B line), line the
	// one of the datagram being handled, and lineEnd the highest sequence
	// past a sequenced packet each line brought: a line delivers in order,
	// so one of its heartbeats is checked against what it brought.
	lines      int
	line       int
	lineEnd    [2]uint64
	scratch    []byte
	changed    []*Book       // books changed by the packet being applied
	rd         packet.Reader // the packet being applied
	srd        packet.Reader // the snapshot packet being applied
	recovering bool          // a Recoverer call is in progress
	needResync bool          // an inconsistency was found during a retransmission
	snap       snapState
	passedOver []error // recovery addresses passed over since the last report (Recovery.PassedOver)
	inspect    chan func(*Client)
	stats      Stats

	// Decoders, reused.
	mLevel   mdsbe.PriceLevelUpdate
	mTrade   mdsbe.Trade
	mStatus  mdsbe.InstrumentStatus
	mAuction mdsbe.AuctionUpdate
	mAdded   mdsbe.OrderAdded
	mChanged mdsbe.OrderModified
	mExec    mdsbe.OrderExecuted
	mDeleted mdsbe.OrderDeleted
}

// New returns a client; Run starts it. A nil cfg.Recoverer means the TCP
// recovery service at cfg.RecoveryAddr.
func New(cfg Config) (*Client, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, rec: cfg.Recoverer,
		books:   make(map[uint32]*Book),
		bySym:   make(map[string]*Book),
		reorder: newReorderBuffer(cfg.ReorderPacketsMax),
		scratch: make([]byte, packet.DatagramBytesMax),
		inspect: make(chan func(*Client), 1),
	}
	if c.rec == nil {
		t := NewTCPRecoverer(cfg.RecoveryAddr, cfg.Channel, cfg.RecoveryTimeout).(*tcpRecoverer)
		// Called on the client's goroutine, within the recovery that
		// reports them (report).
		t.passedOver = func(errs []error) { c.passedOver = append(c.passedOver, errs...) }
		c.rec = t
	}
	return c, nil
}

// Book returns the book of an instrument, or nil. Client goroutine only.
func (c *Client) Book(instrumentID uint32) *Book { return c.books[instrumentID] }

// BookBySymbol returns the book of a symbol once its definition arrived.
func (c *Client) BookBySymbol(symbol string) *Book { return c.bySym[symbol] }

// Books calls fn for every book. Client goroutine only.
func (c *Client) Books(fn func(b *Book)) {
	for _, b := range c.books {
		fn(b)
	}
}

// NextSeq is the next sequence the client expects (0 before it joined):
// its books reflect every message before it.
func (c *Client) NextSeq() uint64 { return c.expected }

// InSync reports whether the client has joined and no gap is pending.
func (c *Client) InSync() bool {
	return c.expected != 0 && c.gapSinceNs == 0 && c.knownNextSeq <= c.expected
}

// Stats returns the counters. Client goroutine only.
func (c *Client) Stats() Stats { return c.stats }

func (c *Client) book(id uint32) (*Book, error) {
	if b := c.books[id]; b != nil {
		return b, nil
	}
	if id == 0 || len(c.books) >= c.cfg.InstrumentsMax {
		return nil, ErrInconsistent
	}
	b := &Book{InstrumentID: id, levelsMax: c.cfg.LevelsMax}
	c.books[id] = b
	return b, nil
}

// HandlePacket processes one datagram of the feed. It may recover
// synchronously (through the Recoverer) before it returns. Arbitrary bytes
// are safe: what cannot be decoded is counted and dropped.
func (c *Client) HandlePacket(pkt []byte) {
	if err := c.rd.Reset(pkt); err != nil || len(pkt) > packet.DatagramBytesMax {
		c.stats.Malformed++
		return
	}
	if c.rd.Channel != c.cfg.Channel {
		c.stats.OtherChannel++
		return
	}
	c.stats.Packets++
	if c.rd.Seq == 0 {
		c.handleUnsequenced()
		return
	}
	seq, count := c.rd.Seq, c.rd.Count
	c.latestSeqTimeNs = max(c.latestSeqTimeNs, c.rd.SendingTimeNs)
	c.lineEnd[c.line] = max(c.lineEnd[c.line], seq+uint64(count))
	if c.expected == 0 {
		// Not joined yet: keep the packet for after the snapshot.
		if c.reorder.put(pkt, seq, count) {
			c.stats.Reordered++
		}
		c.join()
		return
	}
	c.handleSequenced(pkt, seq, count)
	c.Poll()
}

// handleUnsequenced acts on the messages of an unsequenced packet: a
// Heartbeat, and EndOfSession, which comes after a Heartbeat in the
// publisher's last packet.
func (c *Client) handleUnsequenced() {
	var next uint64
	found, ended := false, false
	for msg, ok := c.rd.Next(); ok; msg, ok = c.rd.Next() {
		var hb mdsbe.Heartbeat
		switch tid, _ := mdsbe.TemplateIDOf(msg, 0); tid {
		case mdsbe.HeartbeatTemplateID:
			if hb.WrapDecode(msg, 0) == nil {
				next, found = hb.NextSeq(), true
			}
		case mdsbe.EndOfSessionTemplateID:
			ended = true
		}
	}
	if !found {
		return
	}
	if ended {
		if cb := c.cfg.Callbacks.OnEndOfSession; cb != nil {
			defer cb(next)
		}
	}
	if c.expected == 0 && !c.join() {
		return
	}
	switch {
	case next < c.expected && c.lines > 1 && c.lineBehind(next):
		c.stats.StaleHeartbeats++
	case next < c.expected && c.rd.SendingTimeNs < c.latestSeqTimeNs:
		// Sent before a sequenced packet this client already has (a
		// packet's time is its first event's, at or before its sending)
		// or before the last event of its snapshot, and overtaken on the
		// way or read after the join: what it announces is out of date
		// (marketdata doc, "Restarts").
		c.stats.StaleHeartbeats++
	case next < c.expected:
		// The publisher's next number is below what this client applied:
		// the feed numbers anew (a venue started on another data directory,
		// or on a copy from before), and its packets read as duplicates, so
		// the books would stay the old feed's for ever. A snapshot joins the
		// new numbering (marketdata doc, "Restarts"). The packets held
		// ahead of a gap are the old feed's.
		c.reorder.clear()
		c.resync(CauseInconsistent, next, fmt.Errorf("%w: a heartbeat announces seq %d, %d expected",
			ErrSeqWentBack, next, c.expected))
	}
	if next > c.expected && next-c.expected <= c.cfg.SeqAheadMax {
		if next > c.knownNextSeq {
			c.knownNextSeq = next
		}
		// Idle channel, yet messages are missing: the tail was lost.
		// Nothing can be in flight on this line, so recover at once; with
		// two lines the other may still bring it: a gap, which waits for
		// GapTimeout as one between packets does.
		switch {
		case c.lines > 1 && c.gapSinceNs == 0:
			c.gapSinceNs = c.cfg.Clock().UnixNano()
			c.stats.Gaps++
		case c.lines > 1:
		default:
			if c.gapSinceNs == 0 {
				c.stats.Gaps++
			}
			c.recover(CauseGap)
		}
	}
	if cb := c.cfg.Callbacks.OnHeartbeat; cb != nil {
		cb(next, c.InSync() && next <= c.expected)
	}
}

// lineBehind reports whether a heartbeat announcing next, less than the
// client expects, is of a line behind the other, in the same numbering: it
// announces no less than its own line brought, or its line has brought
// nothing yet while the other has (a reader that lags, as one on a loaded
// machine does, can take a heartbeat sent before the packets the other
// line brought after them). A feed that numbers anew is told by the other
// line's heartbeat, which announces less than that line brought.
func (c *Client) lineBehind(next uint64) bool {
	own, other := c.lineEnd[c.line], c.lineEnd[1-c.line]
	return (own != 0 && next >= own) || (own == 0 && other != 0)
}

// handleSequenced applies, buffers or drops a sequenced packet.
func (c *Client) handleSequenced(pkt []byte, seq uint64, count int) {
	end := seq + uint64(count)
	switch {
	case end <= c.expected:
		c.stats.Duplicates++
	case seq <= c.expected:
		c.applyPacket(pkt)
		c.drain()
	case seq-c.expected > c.cfg.SeqAheadMax:
		c.stats.Malformed++
	default:
		if end > c.knownNextSeq {
			c.knownNextSeq = end
		}
		if c.gapSinceNs == 0 {
			c.gapSinceNs = c.cfg.Clock().UnixNano()
			c.stats.Gaps++
		}
		if c.reorder.put(pkt, seq, count) {
			c.stats.Reordered++
			return
		}
		c.recover(CauseGap) // buffer full: recover now, then place the packet
		switch {
		case c.expected != 0 && end <= c.expected:
			c.stats.Duplicates++
		case c.expected != 0 && seq <= c.expected && c.rd.Reset(pkt) == nil:
			c.applyPacket(pkt)
			c.drain()
		case !c.reorder.put(pkt, seq, count):
			c.stats.Overflows++ // the recovery that follows covers it
		}
	}
}

// Poll starts a recovery for a gap older than GapTimeout. Run calls it
// when the socket is quiet; HandlePacket calls it after each packet.
func (c *Client) Poll() {
	if c.expected == 0 {
		if c.cfg.Clock().UnixNano() >= c.resyncAfter {
			c.join()
		}
		return
	}
	if c.gapSinceNs != 0 && c.cfg.Clock().UnixNano()-c.gapSinceNs >= int64(c.cfg.GapTimeout) {
		c.recover(CauseGap)
	}
}

// drain applies held packets that have become contiguous.
func (c *Client) drain() {
	for c.expected != 0 {
		pkt, ok := c.reorder.takeNext(c.scratch, c.expected)
		if !ok {
			break
		}
		if c.rd.Reset(pkt) != nil {
			continue
		}
		c.applyPacket(pkt)
	}
	if c.expected != 0 && c.reorder.used == 0 && c.knownNextSeq <= c.expected {
		c.gapSinceNs = 0
	} else if c.gapSinceNs == 0 && c.expected != 0 {
		c.gapSinceNs = c.cfg.Clock().UnixNano()
		c.stats.Gaps++
	}
}

// applyPacket applies the messages of the packet in c.rd from c.expected
// on. The packet must start at or before c.expected.
func (c *Client) applyPacket(pkt []byte) {
	seq := c.rd.Seq
	c.changed = c.changed[:0]
	for msg, ok := c.rd.Next(); ok; msg, ok = c.rd.Next() {
		if seq < c.expected {
			seq++
			continue
		}
		if err := c.applyMessage(seq, msg); err != nil {
			c.stats.Inconsistencies++
			c.notifyBooks()
			c.resync(CauseInconsistent, seq, err)
			return
		}
		seq++
		c.expected = seq
		c.stats.Messages++
	}
	c.notifyBooks()
}

func (c *Client) notifyBooks() {
	if cb := c.cfg.Callbacks.OnBook; cb != nil {
		for _, b := range c.changed {
			cb(b)
		}
	}
	c.changed = c.changed[:0]
}

func (c *Client) markChanged(b *Book) {
	for _, x := range c.changed {
		if x == b {
			return
		}
	}
	c.changed = append(c.changed, b)
}

// instrumentMessage checks and advances a book's rptSeq.
func (c *Client) instrumentMessage(id uint32, rptSeq uint64) (*Book, error) {
	b, err := c.book(id)
	if err != nil {
		return nil, err
	}
	if rptSeq != b.RptSeq+1 {
		return nil, fmt.Errorf("%w: instrument %d rptSeq %d after %d", ErrInconsistent, id, rptSeq, b.RptSeq)
	}
	b.RptSeq = rptSeq
	c.markChanged(b)
	return b, nil
}

// instrumentMsg is a sequenced message about one instrument.
type instrumentMsg interface {
	WrapDecode(buf []byte, off int) error
	InstrumentID() uint32
	RptSeq() uint64
}

// decodeFor decodes msg into m and returns the book of its instrument, its
// rptSeq checked and advanced (instrumentMessage).
func (c *Client) decodeFor(m instrumentMsg, msg []byte) (*Book, error) {
	if err := m.WrapDecode(msg, 0); err != nil {
		return nil, err
	}
	return c.instrumentMessage(m.InstrumentID(), m.RptSeq())
}

// applyMessage applies one sequenced message.
func (c *Client) applyMessage(seq uint64, msg []byte) error {
	tid, err := mdsbe.TemplateIDOf(msg, 0)
	if err != nil {
		return err
	}
	switch tid {
	case mdsbe.PriceLevelUpdateTemplateID:
		m := &c.mLevel
		b, err := c.decodeFor(m, msg)
		if err != nil {
			return err
		}
		if err := b.applyLevel(m); err != nil {
			return err
		}
	case mdsbe.TradeTemplateID:
		m := &c.mTrade
		b, err := c.decodeFor(m, msg)
		if err != nil {
			return err
		}
		b.LastTradePriceTicks, b.LastTradeQty, b.Volume = m.PriceTicks(), m.Qty(), m.Volume()
		if cb := c.cfg.Callbacks.OnTrade; cb != nil {
			cb(b, Trade{Seq: seq, TradeID: m.TradeID(), PriceTicks: m.PriceTicks(), Qty: m.Qty(),
				AggressorSide: m.AggressorSide(), Auction: m.Auction() == mdsbe.BooleanTypeTrue, BuyOrderID: m.BuyOrderID(), SellOrderID: m.SellOrderID(),
				TransactTimeNs: m.TransactTimeNs()})
		}
	case mdsbe.InstrumentStatusTemplateID:
		m := &c.mStatus
		b, err := c.decodeFor(m, msg)
		if err != nil {
			return err
		}
		b.Status, b.StatusReason = m.Status(), m.Reason()
		if m.Reason() == mdsbe.StatusReasonEndOfDay {
			b.Volume = 0 // the volume is the day's: a new day starts
		}
	case mdsbe.InstrumentDefinitionTemplateID:
		// An instrument listed while the venue runs: its definition comes
		// in the sequenced stream, its InstrumentStatus (rptSeq 1) next.
		b, err := c.define(msg)
		if err != nil {
			return err
		}
		c.markChanged(b)
	case mdsbe.AuctionUpdateTemplateID:
		m := &c.mAuction
		b, err := c.decodeFor(m, msg)
		if err != nil {
			return err
		}
		b.Auction = Auction{Kind: m.Kind(), PriceTicks: m.PriceTicks(), MatchedQty: m.MatchedQty(),
			ImbalanceSide: m.ImbalanceSide(), ImbalanceQty: m.ImbalanceQty(), Rule: m.Rule()}
	case mdsbe.OrderAddedTemplateID, mdsbe.OrderModifiedTemplateID, mdsbe.OrderExecutedTemplateID, mdsbe.OrderDeletedTemplateID:
		if _, err := c.decodeFor(c.mboMessage(tid), msg); err != nil {
			return err
		}
	default:
		// A sequenced template this client does not know: it still takes
		// its sequence number, so skipping it keeps the stream aligned.
	}
	if cb := c.cfg.Callbacks.OnMessage; cb != nil {
		cb(seq, tid, msg)
	}
	return nil
}

// mboMessage returns the decoder of a market-by-order message (OrderAdded,
// OrderModified, OrderExecuted or OrderDeleted). The client keeps books by
// price; it checks these messages' rptSeq so that the per-instrument
// numbering stays verified (decodeFor, which reads no field of a message
// that does not decode), and hands them to OnMessage.
func (c *Client) mboMessage(tid uint16) instrumentMsg {
	switch tid {
	case mdsbe.OrderAddedTemplateID:
		return &c.mAdded
	case mdsbe.OrderModifiedTemplateID:
		return &c.mChanged
	case mdsbe.OrderExecutedTemplateID:
		return &c.mExec
	default:
		return &c.mDeleted
	}
}

// define applies an InstrumentDefinition, from a snapshot or from the
// sequenced stream (an instrument added while the venue runs).
func (c *Client) define(msg []byte) (*Book, error) {
	var m mdsbe.InstrumentDefinition
	if err := m.WrapDecode(msg, 0); err != nil {
		return nil, err
	}
	b, err := c.book(m.InstrumentID())
	if err != nil {
		return nil, err
	}
	if sym := m.Symbol(); string(sym) != b.Symbol {
		delete(c.bySym, b.Symbol)
		b.Symbol = string(sym)
	}
	c.bySym[b.Symbol] = b
	b.TickMantissa, b.TickExponent, b.LotSize = m.TickMantissa(), m.TickExponent(), m.LotSize()
	b.Status, b.Defined = m.Status(), true
	return b, nil
}
