package fixmd

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds of FIX market data.
const (
	// DepthMax is the most levels per side a request may ask for (264=0 means this many).
	DepthMax = 50
	// SubscriptionsMax bounds the subscriptions of one session.
	SubscriptionsMax = 64
)

// Sender queues a message for one session (*gateway.Gateway is one).
type Sender interface {
	Send(sessionIdx uint16, m *quickfix.Message)
}

// Backlog is what a Sender may also tell (*gateway.Gateway does): whether a
// session has so much waiting for its client that refreshes should wait
// for it (doc.go, "Slow readers").
type Backlog interface {
	MarketDataBacklogged(sessionIdx uint16) bool
}

// Lister is what a Sender may also tell (*gateway.Gateway does): whether
// the venue lists an instrument under a symbol. The gateway learns an
// instrument added while the venue runs before the feed has applied its
// addition, which is when the depth cache learns it; a request for such a
// symbol waits for the cache (listedWait at most) rather than being
// refused as unknown, as soon as the venue has told the session of the
// instrument (TradingSessionStatus 325=Y).
type Lister interface {
	ListsSymbol(symbol string) bool
}

// listedWait bounds how long a request waits for the depth cache to learn
// an instrument the venue lists (Lister): the feed applies the addition
// once it is durable, within a batch.
const listedWait = time.Second

// heldRetry is how often the refreshes held for a backlogged session are
// tried again while no change wakes Run.
const heldRetry = 10 * time.Millisecond

type mdSub struct {
	session     uint16
	reqID       string
	inst        marketdata.InstrumentDef
	tick        decimal.Tick
	depth       int
	incremental bool
	types       entryTypes
	prev        marketdata.Depth
}

// entryTypes are the MDEntryTypes a request asked for.
type entryTypes struct{ bids, offers, trade, imbalance, volume bool }

// Handler serves MarketDataRequests from a depth cache.
//
// The feed's goroutine calls notify, which must never wait for a session:
// it takes only pendMu. Messages are built under mu (subscriptions and
// their last depths) and sent under sendMu, which a builder takes before it
// lets go of mu (flushLocked), so each session gets its messages in the
// order they were built, and a session whose queue is full holds up only
// other sends, never the feed.
type Handler struct {
	out     Sender
	backlog Backlog // nil: out does not tell
	lister  Lister  // nil: out does not tell
	cache   *marketdata.DepthCache
	mu      sync.Mutex
	sendMu  sync.Mutex
	subs    map[marketdata.InstrumentID][]*mdSub
	nsubs   atomic.Int64  // subscriptions in subs
	refused atomic.Uint64 // subscriptions refused at SubscriptionsMax (Stats)
	pendMu  sync.Mutex
	pend    map[marketdata.InstrumentID]bool
	wake    chan struct{}
	stop    chan struct{}
	scratch marketdata.Depth
	runOut  []mdOut // Run's messages, reused
	// backlogged caches, for one pass of sendPending, whether each session
	// it met was backlogged (reused).
	backlogged map[uint16]bool
}

// mdOut is a message built for a session, to be sent by flushLocked.
type mdOut struct {
	session uint16
	m       *quickfix.Message
}

// New returns a handler for the instruments, with its depth cache. The
// cache is the feed's UpdateListener (marketdata.FeedConfig.Listener); call
// Attach before the handler serves a request or Run starts.
func New(defs []marketdata.InstrumentDef) (*Handler, error) {
	f := &Handler{subs: map[marketdata.InstrumentID][]*mdSub{}, pend: map[marketdata.InstrumentID]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), backlogged: map[uint16]bool{}}
	cache, err := marketdata.NewDepthCache(defs, DepthMax, f.notify)
	if err != nil {
		return nil, err
	}
	f.cache = cache
	return f, nil
}

// Stats are the handler's figures for the operator's metrics.
type Stats struct {
	Subscriptions int64  // open, of every session
	Refused       uint64 // subscription requests refused at a session's SubscriptionsMax
}

// Stats returns the handler's figures; safe from any goroutine.
func (f *Handler) Stats() Stats {
	return Stats{Subscriptions: f.nsubs.Load(), Refused: f.refused.Load()}
}

// Cache is the depth cache the handler reads; the feed keeps it current.
func (f *Handler) Cache() *marketdata.DepthCache { return f.cache }

// Attach sets where answers go (and, when out is a Backlog, which sessions
// must wait for their refreshes; when it is a Lister, which symbols the
// venue lists before the cache has their books).
func (f *Handler) Attach(out Sender) {
	f.out = out
	f.backlog, _ = out.(Backlog)
	f.lister, _ = out.(Lister)
}

// Stop ends Run.
func (f *Handler) Stop() { close(f.stop) }

// notify runs on the feed goroutine: it only marks the instrument and wakes
// the sender, and waits for no session (see Handler).
func (f *Handler) notify(id marketdata.InstrumentID) {
	if f.nsubs.Load() == 0 {
		return
	}
	f.pendMu.Lock()
	f.pend[id] = true
	f.pendMu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Run sends refreshes for changed instruments until Stop is called; while
// refreshes are held for a backlogged session it tries them again every
// heldRetry.
func (f *Handler) Run() {
	retry := time.NewTimer(heldRetry)
	retry.Stop()
	for {
		select {
		case <-f.stop:
			retry.Stop()
			return
		case <-f.wake:
		case <-retry.C:
		}
		if f.sendPending() {
			retry.Reset(heldRetry)
		}
	}
}

// sendPending sends the refreshes of the instruments marked since the last
// call. A subscription whose session is backlogged gets none: it keeps the
// depth it was last sent, so its next refresh carries the net change since
// then, and its instrument stays marked; sendPending reports whether any
// was held so.
func (f *Handler) sendPending() (held bool) {
	f.pendMu.Lock()
	ids := make([]marketdata.InstrumentID, 0, len(f.pend))
	for id := range f.pend {
		ids = append(ids, id)
		delete(f.pend, id)
	}
	f.pendMu.Unlock()
	f.mu.Lock()
	out := f.runOut[:0]
	clear(f.backlogged)
	kept := ids[:0]
	for _, id := range ids {
		heldHere := false
		for _, sub := range f.subs[id] {
			if f.isBacklogged(sub.session) {
				heldHere = true
				continue
			}
			out = f.refresh(out, sub)
		}
		if heldHere {
			kept = append(kept, id)
		}
	}
	f.flushLocked(out)
	clear(out)
	f.runOut = out[:0]
	if len(kept) == 0 {
		return false
	}
	f.pendMu.Lock()
	for _, id := range kept {
		f.pend[id] = true
	}
	f.pendMu.Unlock()
	return true
}

// isBacklogged asks the Backlog once per session and pass (f.mu held).
func (f *Handler) isBacklogged(session uint16) bool {
	if f.backlog == nil {
		return false
	}
	b, ok := f.backlogged[session]
	if !ok {
		b = f.backlog.MarketDataBacklogged(session)
		f.backlogged[session] = b
	}
	return b
}

// flushLocked sends out, built under f.mu, which it releases once it holds
// sendMu (see Handler).
func (f *Handler) flushLocked(out []mdOut) {
	f.sendMu.Lock()
	f.mu.Unlock()
	defer f.sendMu.Unlock()
	for _, o := range out {
		f.out.Send(o.session, o.m)
	}
}

func (f *Handler) reject(idx uint16, reqID string, reason mdReqRejReason, text string) {
	f.out.Send(idx, rejectMsg(reqID, reason, text))
}

// rejectMsg builds a MarketDataRequestReject; reason "" leaves
// MDReqRejReason out, for a refusal FIX 4.4 has no reason for (the Text
// alone says why).
func rejectMsg(reqID string, reason mdReqRejReason, text string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "Y")
	m.Body.SetString(tag.MDReqID, reqID)
	if reason != "" {
		m.Body.SetString(tag.MDReqRejReason, string(reason))
	}
	m.Body.SetString(tag.Text, text)
	return m
}

// offText is the Text of Off's MarketDataRequestReject.
const offText = "market data is not served by this venue"

// Off is the gateway's handler for MarketDataRequest (V) at a venue whose
// market data is off: each request gets a MarketDataRequestReject naming
// its MDReqID, with Text and no MDReqRejReason (FIX 4.4 has none for a
// service that is off), where the gateway answered a type it does not
// take (BusinessMessageReject, 380=3) and a client's market data code saw
// no answer to its request.
func Off(out Sender) func(idx uint16, req *quickfix.Message) quickfix.MessageRejectError {
	return func(idx uint16, req *quickfix.Message) quickfix.MessageRejectError {
		reqID, _ := req.Body.GetString(tag.MDReqID)
		out.Send(idx, rejectMsg(reqID, "", offText))
		return nil
	}
}

// Handle is the gateway's handler for MarketDataRequest (V)
// (gateway.ExtraHandler).
func (f *Handler) Handle(idx uint16, req *quickfix.Message) quickfix.MessageRejectError {
	reqID, _ := req.Body.GetString(tag.MDReqID)
	subType, _ := req.Body.GetString(tag.SubscriptionRequestType)
	if subType == "2" {
		if !f.unsubscribe(idx, reqID) {
			// FIX 4.4 has no MDReqRejReason for it: Text alone says why.
			f.reject(idx, reqID, "", "no subscription "+reqID+" on this session to unsubscribe")
		}
		return nil
	}
	if subType != "0" && subType != "1" {
		f.reject(idx, reqID, mdRejUnsupportedSubType, "SubscriptionRequestType "+subType+" is not supported")
		return nil
	}
	// Parsed here: QuickFIX/Go's integer reader wraps a value past 64 bits
	// (18446744073709551617 read as 1), which would serve a depth never
	// asked for.
	raw, _ := req.Body.GetString(tag.MarketDepth)
	depth, err := 0, error(nil)
	if raw != "" {
		depth, err = strconv.Atoi(raw)
	}
	if depth == 0 && err == nil {
		depth = DepthMax
	}
	if err != nil || depth < 0 || depth > DepthMax {
		f.reject(idx, reqID, mdRejUnsupportedDepth, "MarketDepth must be 0 (full, up to "+strconv.Itoa(DepthMax)+" levels) or 1 to "+strconv.Itoa(DepthMax))
		return nil
	}
	updType, _ := req.Body.GetString(tag.MDUpdateType)
	if subType == "1" && updType != "" && updType != "0" && updType != "1" {
		f.reject(idx, reqID, mdRejUnsupportedUpdType, "MDUpdateType "+updType+" is not supported")
		return nil
	}
	// The venue serves price levels, each with its orders' total and count
	// (NumberOfOrders): a client asking for a book by order (AggregatedBook
	// N) would take each level for one order.
	if agg, err := req.Body.GetString(tag.AggregatedBook); err == nil && agg == "N" {
		f.reject(idx, reqID, mdRejUnsupportedAggBook, "AggregatedBook N (a book by order) is not supported: the venue serves price levels (AggregatedBook Y)")
		return nil
	}
	if reason, text := unsupportedScope(req); text != "" {
		f.reject(idx, reqID, reason, text)
		return nil
	}
	if text := unsupportedQueue(req); text != "" {
		// FIX 4.4 has no MDReqRejReason for it: Text alone says why.
		f.reject(idx, reqID, "", text)
		return nil
	}
	want := entryTypes{bids: true, offers: true}
	types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
	if err := req.Body.GetGroup(types); err == nil && types.Len() > 0 {
		want = entryTypes{}
		for i := 0; i < types.Len(); i++ {
			switch t, _ := types.Get(i).GetString(tag.MDEntryType); mdEntryType(t) {
			case mdEntryBid:
				want.bids = true
			case mdEntryOffer:
				want.offers = true
			case mdEntryTrade:
				want.trade = true
			case mdEntryImbalance:
				want.imbalance = true
			case mdEntryTradeVolume:
				want.volume = true
			default:
				f.reject(idx, reqID, mdRejUnsupportedEntry, "MDEntryType "+t+" is not supported (0 bid, 1 offer, 2 trade, A imbalance and B trade volume are)")
				return nil
			}
		}
	}
	syms, other := requestInstruments(req)
	if len(syms) == 0 {
		f.reject(idx, reqID, mdRejUnknownSymbol, "no symbol requested")
		return nil
	}
	if sfx := requestValues(req, tag.SymbolSfx); len(sfx) > 0 {
		// A suffix names another instrument than the symbol alone (when
		// issued, a share class): none the venue lists.
		f.reject(idx, reqID, mdRejUnknownSymbol, "unknown symbol: SymbolSfx (65) "+sfx[0]+" names none of the venue's instruments, which have no suffix")
		return nil
	}
	if other.Tag != 0 {
		f.reject(idx, reqID, mdRejUnknownSymbol, gateway.UnknownInstrumentText(other.sym, other.Tag, other.Value))
		return nil
	}
	// A symbol named twice is served once: a request gets at most one
	// answer (and makes at most one subscription) per instrument.
	var defs []marketdata.InstrumentDef
	for _, sym := range syms {
		def, ok := f.cache.Lookup(sym)
		if !ok && f.lister != nil && f.lister.ListsSymbol(sym) {
			def, ok = f.cache.AwaitLookup(sym, listedWait)
		}
		if !ok {
			f.reject(idx, reqID, mdRejUnknownSymbol, "unknown symbol "+sym)
			return nil
		}
		if !slices.ContainsFunc(defs, func(d marketdata.InstrumentDef) bool { return d.ID == def.ID }) {
			defs = append(defs, def)
		}
	}
	if text := unsupportedSessions(req, defs); text != "" {
		f.reject(idx, reqID, mdRejUnsupportedSession, text)
		return nil
	}
	f.mu.Lock()
	var out []mdOut
	defer func() { f.flushLocked(out) }()
	refuse := func(reason mdReqRejReason, text string) {
		out = append(out, mdOut{idx, rejectMsg(reqID, reason, text)})
	}
	if subType == "1" {
		n := 0
		for _, list := range f.subs {
			for _, s := range list {
				if s.session == idx {
					n++
					if s.reqID == reqID {
						refuse(mdRejDuplicateMDReqID, "duplicate MDReqID "+reqID)
						return nil
					}
				}
			}
		}
		if n+len(defs) > SubscriptionsMax {
			// Insufficient bandwidth, FIX's reason for a capacity: 0 told
			// the client its symbol was unknown.
			f.refused.Add(1)
			refuse(mdRejBandwidth, "too many subscriptions on this session: "+strconv.Itoa(n)+" open + "+strconv.Itoa(len(defs))+
				" asked, at most "+strconv.Itoa(SubscriptionsMax))
			return nil
		}
	}
	for _, def := range defs {
		sub := &mdSub{session: idx, reqID: reqID, inst: def, tick: decimal.Tick{Mantissa: def.TickMantissa, Scale: -int(def.TickExponent)}, depth: depth, incremental: updType == "1", types: want}
		if subType == "1" {
			// Counted before the book is read: notify marks nothing while
			// no subscription is counted, and a change between the read
			// and the count would reach the first subscriber only with
			// the next change. Marked now, it is sent once f.mu is free.
			f.nsubs.Add(1)
		}
		if err := f.cache.Depth(def.ID, depth, &sub.prev); err != nil {
			if subType == "1" {
				f.nsubs.Add(-1)
			}
			refuse(mdRejUnknownSymbol, err.Error())
			return nil
		}
		out = append(out, mdOut{idx, f.fullRefresh(sub, &sub.prev)})
		if subType == "1" {
			f.subs[def.ID] = append(f.subs[def.ID], sub)
		}
	}
	return nil
}

// venueTradingSession is the venue-wide trading session (gateway's
// TradingSessionStatus names it so); each instrument is the trading session
// named after its symbol.
const venueTradingSession = "ALL"

// unsupportedScope returns the reject of a request for data the venue does
// not have, else "": a Scope (546) other than 1 (local market: the venue
// serves its own book, not a national or global one), or any
// OpenCloseSettlFlag (286), which qualifies opening, closing and
// settlement prices, none of which the venue serves (MDEntryType 0, 1, 2,
// A and B only). MDImplicitDelete (547) is taken either way: a level that leaves
// the requested depth is always deleted explicitly (279=2), before the
// level that takes its place is added (marketdata.AppendLevelChanges), so
// a client that deletes such levels itself finds every delete consistent.
func unsupportedScope(req *quickfix.Message) (mdReqRejReason, string) {
	if scope, err := req.Body.GetString(tag.Scope); err == nil {
		for _, v := range strings.Fields(scope) {
			if v != "1" {
				return mdRejUnsupportedScope, "Scope (546) " + v + " is not supported: the venue serves its own book alone (1, local market)"
			}
		}
	}
	if flag, err := req.Body.GetString(tag.OpenCloseSettlFlag); err == nil {
		return mdRejUnsupportedOCSFlag, "OpenCloseSettlFlag (286) " + flag + " is not supported: the venue serves no opening, closing or settlement entries"
	}
	return "", ""
}

// unsupportedQueue returns the Text of a reject for a request that sets how
// the venue is to handle its refreshes when they queue up, else "": the
// venue's own handling (doc.go, "Slow readers": a backlogged session gets
// the net change of the refreshes it skipped, never each of them) is
// ApplQueueAction (815) 2, overlay last, which is taken; another action,
// and an ApplQueueMax (812), which the venue's own bound on a session's
// queue stands in for, are refused, never ignored.
func unsupportedQueue(req *quickfix.Message) string {
	for _, a := range requestValues(req, tag.ApplQueueAction) {
		if a != "2" {
			return "ApplQueueAction (815) " + a + " is not supported: a slow reader's refreshes are overlaid by the latest (2)"
		}
	}
	if max := requestValues(req, tag.ApplQueueMax); len(max) > 0 {
		return "ApplQueueMax (812) " + max[0] + " is not supported: the venue bounds a session's queue itself and overlays a slow reader's refreshes"
	}
	return ""
}

// instrumentField is a field of a requested instrument other than its
// Symbol, and the Symbol it follows.
type instrumentField struct {
	fixwire.Field
	sym string
}

// requestInstruments returns the Symbols of the request's NoRelatedSym
// entries, in order, and the first field of their instruments that names
// one otherwise (gateway.NamesInstrument; SymbolSfx apart, refused on its
// own before), Tag 0 when none: the venue names its instruments by Symbol alone,
// so a SecurityID, SecurityExchange, maturity, underlying or leg would ask
// for an instrument it cannot tell apart, and is refused rather than
// served as if absent, as on an order; a field that only classifies the
// instrument (SecurityType, CFICode, Product) is taken. They are read from
// the request's bytes: in a MarketDataRequest these fields and Symbol
// occur only in NoRelatedSym's entries, each of which starts with its
// Symbol.
func requestInstruments(req *quickfix.Message) (syms []string, other instrumentField) {
	it := fixwire.NewIterator(req.Bytes())
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		switch {
		case f.Tag == tag.Symbol:
			syms = append(syms, string(f.Value))
		case other.Tag == 0 && len(syms) > 0 && gateway.NamesInstrument(f.Tag):
			other = instrumentField{f, syms[len(syms)-1]}
		}
	}
	return syms, other
}

// unsupportedSessions returns the Text of a reject for trading sessions
// (NoTradingSessions 386) the venue cannot restrict the instruments defs to,
// else "". The venue's trading sessions are ALL and each instrument's
// symbol (as in TradingSessionStatus): a request may name ALL or the
// symbols it asks for, and every instrument it asks for must be in one of
// them. A TradingSessionSubID (625) would ask for part of a session's
// data, which the venue does not split. The fields are read from the
// request's bytes (requestValues).
func unsupportedSessions(req *quickfix.Message, defs []marketdata.InstrumentDef) string {
	if sub := requestValues(req, tag.TradingSessionSubID); len(sub) > 0 {
		return "TradingSessionSubID (625) " + sub[0] + " is not supported: the venue does not split its market data by sub-session"
	}
	all := false
	var named []string
	for _, id := range requestValues(req, tag.TradingSessionID) {
		switch {
		case id == venueTradingSession:
			all = true
		case slices.ContainsFunc(defs, func(d marketdata.InstrumentDef) bool { return d.Symbol == id }):
			named = append(named, id)
		default:
			return "TradingSessionID (336) " + id + " is not supported: name " + venueTradingSession + " or the symbols requested (each instrument is the trading session of its symbol)"
		}
	}
	if all || len(named) == 0 {
		return ""
	}
	for _, d := range defs {
		if !slices.Contains(named, d.Symbol) {
			return "TradingSessionID (336) " + strings.Join(named, ", ") + " does not include " + d.Symbol + ": name " + venueTradingSession + " or each symbol requested"
		}
	}
	return ""
}

// requestValues returns the values of every field t in the request's bytes,
// in order. In a MarketDataRequest, TradingSessionID (336) and
// TradingSessionSubID (625) occur only in NoTradingSessions, and
// SymbolSfx (65) only in the Instrument of NoRelatedSym, so each value found
// is one of that group; ApplQueueAction (815) and ApplQueueMax (812) are
// fields of the message, once each (the session layer refuses one
// repeated).
func requestValues(req *quickfix.Message, t quickfix.Tag) []string {
	var vals []string
	it := fixwire.NewIterator(req.Bytes())
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag == t {
			vals = append(vals, string(f.Value))
		}
	}
	return vals
}

// unsubscribe drops the session's subscription reqID and reports whether
// there was one.
func (f *Handler) unsubscribe(idx uint16, reqID string) bool {
	return f.drop(func(s *mdSub) bool { return s.session == idx && s.reqID == reqID }) > 0
}

// SessionEnded drops a session's subscriptions.
func (f *Handler) SessionEnded(idx uint16) {
	f.drop(func(s *mdSub) bool { return s.session == idx })
}

// drop removes the subscriptions gone says are and returns how many.
func (f *Handler) drop(gone func(*mdSub) bool) (dropped int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, list := range f.subs {
		kept := list[:0]
		for _, s := range list {
			if !gone(s) {
				kept = append(kept, s)
			}
		}
		clear(list[len(kept):])
		f.nsubs.Add(int64(len(kept) - len(list)))
		dropped += len(list) - len(kept)
		f.subs[id] = kept
	}
	return dropped
}

// mdEntryGroup is the template of MDFullGrp (W) or, with the update
// action and symbol, MDIncGrp (X).
func mdEntryGroup(incremental bool) *quickfix.RepeatingGroup {
	var t quickfix.GroupTemplate
	if incremental {
		t = append(t, quickfix.GroupElement(tag.MDUpdateAction))
	}
	t = append(t, quickfix.GroupElement(tag.MDEntryType))
	if incremental {
		t = append(t, quickfix.GroupElement(tag.Symbol))
	}
	t = append(t, quickfix.GroupElement(tag.MDEntryPx), quickfix.GroupElement(tag.MDEntrySize),
		quickfix.GroupElement(tag.TradeCondition), quickfix.GroupElement(tag.NumberOfOrders), quickfix.GroupElement(tag.Text))
	return quickfix.NewRepeatingGroup(tag.NoMDEntries, t)
}

// row adds an entry: action is empty in a W.
func (f *Handler) row(g *quickfix.RepeatingGroup, sub *mdSub, action mdUpdateAction, typ mdEntryType) *quickfix.Group {
	row := g.Add()
	if action != "" {
		row.SetString(tag.MDUpdateAction, string(action))
	}
	row.SetString(tag.MDEntryType, string(typ))
	if action != "" {
		row.SetString(tag.Symbol, sub.inst.Symbol)
	}
	return row
}

func (f *Handler) entry(g *quickfix.RepeatingGroup, sub *mdSub, action mdUpdateAction, typ mdEntryType, l marketdata.Level) {
	row := f.row(g, sub, action, typ)
	row.SetString(tag.MDEntryPx, string(decimal.FormatTicks(nil, l.PriceTicks, sub.tick)))
	if action != mdUpdateDelete {
		row.SetString(tag.MDEntrySize, strconv.FormatInt(l.Qty, 10))
		row.SetString(tag.NumberOfOrders, strconv.Itoa(l.OrderCount))
	}
}

// imbalanceEntry is a call's indicative uncross as an MDEntryType A entry
// ("Auctions" in doc.go): MDEntryPx the price (absent when nothing would
// trade), MDEntrySize the volume that would trade, TradeCondition P or Q
// the side left over, Text the imbalance quantity and the deciding rule.
// A deletion carries the last price it announced.
func (f *Handler) imbalanceEntry(g *quickfix.RepeatingGroup, sub *mdSub, action mdUpdateAction, ind marketdata.Indicative) {
	row := f.row(g, sub, action, mdEntryImbalance)
	if ind.Rule != venue.AuctionRuleNoCross {
		row.SetString(tag.MDEntryPx, string(decimal.FormatTicks(nil, ind.PriceTicks, sub.tick)))
	}
	if action == mdUpdateDelete {
		return
	}
	row.SetString(tag.MDEntrySize, strconv.FormatInt(ind.MatchedQty, 10))
	side := "none"
	switch ind.ImbalanceSide {
	case venue.ImbalanceSideBuy:
		row.SetString(tag.TradeCondition, string(tradeCondImbalanceMoreBuyers))
		side = "buy"
	case venue.ImbalanceSideSell:
		row.SetString(tag.TradeCondition, string(tradeCondImbalanceMoreSellers))
		side = "sell"
	}
	row.SetString(tag.Text, "imbalance "+side+" "+strconv.FormatInt(ind.ImbalanceQty, 10)+"; rule "+ind.Rule.String())
}

func (f *Handler) fullRefresh(sub *mdSub, d *marketdata.Depth) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "W")
	m.Body.SetString(tag.MDReqID, sub.reqID)
	m.Body.SetString(tag.Symbol, sub.inst.Symbol)
	g := mdEntryGroup(false)
	if sub.types.bids {
		for _, l := range d.Bids {
			f.entry(g, sub, "", mdEntryBid, l)
		}
	}
	if sub.types.offers {
		for _, l := range d.Asks {
			f.entry(g, sub, "", mdEntryOffer, l)
		}
	}
	if sub.types.trade && d.State.LastTradeQty > 0 {
		f.tradeEntry(g, sub, "", d.State)
	}
	if sub.types.imbalance && d.State.Indicative.Active {
		f.imbalanceEntry(g, sub, "", d.State.Indicative)
	}
	if sub.types.volume {
		f.volumeEntry(g, sub, "", d.State.Volume)
	}
	m.Body.SetGroup(g)
	return m
}

// tradeEntry is the instrument's last trade as an MDEntryType 2 entry
// ("Trades" in doc.go): MDEntryPx its price, MDEntrySize its quantity.
func (f *Handler) tradeEntry(g *quickfix.RepeatingGroup, sub *mdSub, action mdUpdateAction, st marketdata.InstrumentState) {
	row := f.row(g, sub, action, mdEntryTrade)
	row.SetString(tag.MDEntryPx, string(decimal.FormatTicks(nil, st.LastTradePriceTicks, sub.tick)))
	row.SetString(tag.MDEntrySize, strconv.FormatInt(st.LastTradeQty, 10))
}

// volumeEntry is the quantity the instrument has traded in the trading day
// as an MDEntryType B entry (MDEntrySize; "Trades" in doc.go).
func (f *Handler) volumeEntry(g *quickfix.RepeatingGroup, sub *mdSub, action mdUpdateAction, volume int64) {
	row := f.row(g, sub, action, mdEntryTradeVolume)
	row.SetString(tag.MDEntrySize, strconv.FormatInt(volume, 10))
}

// tradeChanged reports whether the last trade differs between two states:
// a trade at the last one's price and quantity moves the day's volume (an
// end of day sets the volume to 0 and keeps the last trade).
func tradeChanged(was, now marketdata.InstrumentState) bool {
	return was.LastTradePriceTicks != now.LastTradePriceTicks || was.LastTradeQty != now.LastTradeQty ||
		now.Volume > was.Volume
}

// updateAction is the MDUpdateAction of a level change.
func updateAction(k marketdata.UpdateActionKind) mdUpdateAction {
	switch k {
	case marketdata.UpdateNew:
		return mdUpdateNew
	case marketdata.UpdateChange:
		return mdUpdateChange
	}
	return mdUpdateDelete
}

// changedFor reports whether what sub shows (its entry types) differs
// between its last refresh and f.scratch: a change to the other side of the
// book, or to the imbalance of a subscription that shows none, sends it no
// full refresh that would repeat the last.
func (f *Handler) changedFor(sub *mdSub) bool {
	return sub.types.bids && !slices.Equal(sub.prev.Bids, f.scratch.Bids) ||
		sub.types.offers && !slices.Equal(sub.prev.Asks, f.scratch.Asks) ||
		sub.types.imbalance && sub.prev.State.Indicative != f.scratch.State.Indicative ||
		sub.types.trade && tradeChanged(sub.prev.State, f.scratch.State) ||
		sub.types.volume && sub.prev.State.Volume != f.scratch.State.Volume
}

// refresh appends to out what changed for one subscription (f.mu held).
func (f *Handler) refresh(out []mdOut, sub *mdSub) []mdOut {
	if err := f.cache.Depth(sub.inst.ID, sub.depth, &f.scratch); err != nil {
		return out
	}
	if !sub.incremental {
		if f.changedFor(sub) {
			out = append(out, mdOut{sub.session, f.fullRefresh(sub, &f.scratch)})
		}
	} else {
		var bids, asks []marketdata.LevelChange
		if sub.types.bids {
			bids = marketdata.AppendLevelChanges(nil, true, sub.prev.Bids, f.scratch.Bids)
		}
		if sub.types.offers {
			asks = marketdata.AppendLevelChanges(nil, false, sub.prev.Asks, f.scratch.Asks)
		}
		was, now := sub.prev.State.Indicative, f.scratch.State.Indicative
		imbalance := sub.types.imbalance && was != now
		trade := sub.types.trade && tradeChanged(sub.prev.State, f.scratch.State)
		volume := sub.types.volume && sub.prev.State.Volume != f.scratch.State.Volume
		if len(bids)+len(asks) > 0 || imbalance || trade || volume {
			m := quickfix.NewMessage()
			m.Header.SetString(tag.MsgType, "X")
			m.Body.SetString(tag.MDReqID, sub.reqID)
			g := mdEntryGroup(true)
			for _, c := range bids {
				f.entry(g, sub, updateAction(c.Action), mdEntryBid, c.Level)
			}
			for _, c := range asks {
				f.entry(g, sub, updateAction(c.Action), mdEntryOffer, c.Level)
			}
			if trade {
				// Each trade is a new entry, never a change of the last.
				f.tradeEntry(g, sub, mdUpdateNew, f.scratch.State)
			}
			if imbalance {
				switch {
				case !now.Active:
					f.imbalanceEntry(g, sub, mdUpdateDelete, was)
				case was.Active:
					f.imbalanceEntry(g, sub, mdUpdateChange, now)
				default:
					f.imbalanceEntry(g, sub, mdUpdateNew, now)
				}
			}
			if volume {
				f.volumeEntry(g, sub, mdUpdateChange, f.scratch.State.Volume)
			}
			m.Body.SetGroup(g)
			out = append(out, mdOut{sub.session, m})
		}
	}
	sub.prev.State = f.scratch.State
	sub.prev.Bids = append(sub.prev.Bids[:0], f.scratch.Bids...)
	sub.prev.Asks = append(sub.prev.Asks[:0], f.scratch.Asks...)
	return out
}
