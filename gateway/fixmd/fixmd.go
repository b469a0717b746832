package fixmd

import (
	"strconv"
	"sync"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/marketdata"
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

type mdSub struct {
	session     uint16
	reqID       string
	inst        marketdata.InstrumentDef
	tick        decimal.Tick
	depth       int
	incremental bool
	prev        marketdata.Depth
}

// Handler serves MarketDataRequests from a depth cache.
type Handler struct {
	out     Sender
	cache   *marketdata.DepthCache
	mu      sync.Mutex
	subs    map[marketdata.InstrumentID][]*mdSub
	pend    map[marketdata.InstrumentID]bool
	wake    chan struct{}
	stop    chan struct{}
	scratch marketdata.Depth
}

// New returns a handler for the instruments, with its depth cache. The
// cache is the feed's UpdateListener (marketdata.FeedConfig.Listener); call
// Attach before the handler serves a request or Run starts.
func New(defs []marketdata.InstrumentDef) (*Handler, error) {
	f := &Handler{subs: map[marketdata.InstrumentID][]*mdSub{}, pend: map[marketdata.InstrumentID]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	cache, err := marketdata.NewDepthCache(defs, DepthMax, f.notify)
	if err != nil {
		return nil, err
	}
	f.cache = cache
	return f, nil
}

// Cache is the depth cache the handler reads; the feed keeps it current.
func (f *Handler) Cache() *marketdata.DepthCache { return f.cache }

// Attach sets where answers go.
func (f *Handler) Attach(out Sender) { f.out = out }

// Stop ends Run.
func (f *Handler) Stop() { close(f.stop) }

// notify runs on the feed goroutine: it only marks the instrument and wakes the sender.
func (f *Handler) notify(id marketdata.InstrumentID) {
	f.mu.Lock()
	if len(f.subs[id]) > 0 {
		f.pend[id] = true
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Run sends refreshes for changed instruments until Stop is called.
func (f *Handler) Run() {
	for {
		select {
		case <-f.stop:
			return
		case <-f.wake:
		}
		f.mu.Lock()
		for id := range f.pend {
			delete(f.pend, id)
			for _, sub := range f.subs[id] {
				f.refresh(sub)
			}
		}
		f.mu.Unlock()
	}
}

func (f *Handler) reject(idx uint16, reqID string, reason int, text string) {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "Y")
	m.Body.SetString(tag.MDReqID, reqID)
	m.Body.SetString(tag.MDReqRejReason, strconv.Itoa(reason))
	m.Body.SetString(tag.Text, text)
	f.out.Send(idx, m)
}

// Handle is the gateway's handler for MarketDataRequest (V)
// (gateway.ExtraHandler).
func (f *Handler) Handle(idx uint16, req *quickfix.Message) quickfix.MessageRejectError {
	reqID, _ := req.Body.GetString(tag.MDReqID)
	subType, _ := req.Body.GetString(tag.SubscriptionRequestType)
	if subType == "2" {
		f.unsubscribe(idx, reqID)
		return nil
	}
	if subType != "0" && subType != "1" {
		f.reject(idx, reqID, 4, "SubscriptionRequestType "+subType+" is not supported")
		return nil
	}
	depth, _ := req.Body.GetInt(tag.MarketDepth)
	if depth == 0 {
		depth = DepthMax
	}
	if depth < 0 || depth > DepthMax {
		f.reject(idx, reqID, 5, "MarketDepth must be 0 (full, up to "+strconv.Itoa(DepthMax)+" levels) or 1 to "+strconv.Itoa(DepthMax))
		return nil
	}
	updType, _ := req.Body.GetString(tag.MDUpdateType)
	if subType == "1" && updType != "" && updType != "0" && updType != "1" {
		f.reject(idx, reqID, 6, "MDUpdateType "+updType+" is not supported")
		return nil
	}
	types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
	if err := req.Body.GetGroup(types); err == nil {
		for i := 0; i < types.Len(); i++ {
			if t, _ := types.Get(i).GetString(tag.MDEntryType); t != "0" && t != "1" {
				f.reject(idx, reqID, 8, "MDEntryType "+t+" is not supported (0 bid and 1 offer are)")
				return nil
			}
		}
	}
	syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
	if err := req.Body.GetGroup(syms); err != nil || syms.Len() == 0 {
		f.reject(idx, reqID, 0, "no symbol requested")
		return nil
	}
	var defs []marketdata.InstrumentDef
	for i := 0; i < syms.Len(); i++ {
		sym, _ := syms.Get(i).GetString(tag.Symbol)
		def, ok := f.cache.Lookup(sym)
		if !ok {
			f.reject(idx, reqID, 0, "unknown symbol "+sym)
			return nil
		}
		defs = append(defs, def)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if subType == "1" {
		n := 0
		for _, list := range f.subs {
			for _, s := range list {
				if s.session == idx {
					n++
					if s.reqID == reqID {
						f.reject(idx, reqID, 1, "duplicate MDReqID "+reqID)
						return nil
					}
				}
			}
		}
		if n+len(defs) > SubscriptionsMax {
			f.reject(idx, reqID, 0, "too many subscriptions on this session (at most "+strconv.Itoa(SubscriptionsMax)+")")
			return nil
		}
	}
	for _, def := range defs {
		sub := &mdSub{session: idx, reqID: reqID, inst: def, tick: decimal.Tick{Mantissa: def.TickMantissa, Scale: -int(def.TickExponent)}, depth: depth, incremental: updType == "1"}
		if err := f.cache.Depth(def.ID, depth, &sub.prev); err != nil {
			f.reject(idx, reqID, 0, err.Error())
			return nil
		}
		f.out.Send(idx, f.fullRefresh(sub, &sub.prev))
		if subType == "1" {
			f.subs[def.ID] = append(f.subs[def.ID], sub)
		}
	}
	return nil
}

func (f *Handler) unsubscribe(idx uint16, reqID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, list := range f.subs {
		kept := list[:0]
		for _, s := range list {
			if !(s.session == idx && s.reqID == reqID) {
				kept = append(kept, s)
			}
		}
		f.subs[id] = kept
	}
}

// SessionEnded drops a session's subscriptions.
func (f *Handler) SessionEnded(idx uint16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, list := range f.subs {
		kept := list[:0]
		for _, s := range list {
			if s.session != idx {
				kept = append(kept, s)
			}
		}
		f.subs[id] = kept
	}
}

func (f *Handler) entry(g *quickfix.RepeatingGroup, sub *mdSub, action string, typ string, l marketdata.Level) {
	row := g.Add()
	if action != "" {
		row.SetString(tag.MDUpdateAction, action)
	}
	row.SetString(tag.MDEntryType, typ)
	if action != "" {
		row.SetString(tag.Symbol, sub.inst.Symbol)
	}
	row.SetString(tag.MDEntryPx, string(decimal.FormatTicks(nil, l.PriceTicks, sub.tick)))
	if action != "2" {
		row.SetString(tag.MDEntrySize, strconv.FormatInt(l.Qty, 10))
		row.SetString(tag.NumberOfOrders, strconv.Itoa(l.OrderCount))
	}
}

func (f *Handler) fullRefresh(sub *mdSub, d *marketdata.Depth) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "W")
	m.Body.SetString(tag.MDReqID, sub.reqID)
	m.Body.SetString(tag.Symbol, sub.inst.Symbol)
	g := quickfix.NewRepeatingGroup(tag.NoMDEntries, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType),
		quickfix.GroupElement(tag.MDEntryPx), quickfix.GroupElement(tag.MDEntrySize), quickfix.GroupElement(tag.NumberOfOrders)})
	for _, l := range d.Bids {
		f.entry(g, sub, "", "0", l)
	}
	for _, l := range d.Asks {
		f.entry(g, sub, "", "1", l)
	}
	m.Body.SetGroup(g)
	return m
}

// refresh sends what changed for one subscription (f.mu held).
func (f *Handler) refresh(sub *mdSub) {
	if err := f.cache.Depth(sub.inst.ID, sub.depth, &f.scratch); err != nil {
		return
	}
	if !sub.incremental {
		f.out.Send(sub.session, f.fullRefresh(sub, &f.scratch))
	} else {
		bids := marketdata.AppendLevelChanges(nil, true, sub.prev.Bids, f.scratch.Bids)
		asks := marketdata.AppendLevelChanges(nil, false, sub.prev.Asks, f.scratch.Asks)
		if len(bids)+len(asks) > 0 {
			m := quickfix.NewMessage()
			m.Header.SetString(tag.MsgType, "X")
			m.Body.SetString(tag.MDReqID, sub.reqID)
			g := quickfix.NewRepeatingGroup(tag.NoMDEntries, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDUpdateAction),
				quickfix.GroupElement(tag.MDEntryType), quickfix.GroupElement(tag.Symbol), quickfix.GroupElement(tag.MDEntryPx),
				quickfix.GroupElement(tag.MDEntrySize), quickfix.GroupElement(tag.NumberOfOrders)})
			for _, c := range bids {
				f.entry(g, sub, strconv.Itoa(int(c.Action)), "0", c.Level)
			}
			for _, c := range asks {
				f.entry(g, sub, strconv.Itoa(int(c.Action)), "1", c.Level)
			}
			m.Body.SetGroup(g)
			f.out.Send(sub.session, m)
		}
	}
	sub.prev.Bids = append(sub.prev.Bids[:0], f.scratch.Bids...)
	sub.prev.Asks = append(sub.prev.Asks[:0], f.scratch.Asks...)
}
