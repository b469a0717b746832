package server

import (
	"strconv"
	"sync"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/marketdata"
)

// FIX market data on the order sessions: MarketDataRequest (V) answered with
// MarketDataSnapshotFullRefresh (W), then MarketDataIncrementalRefresh (X) or
// further W messages while subscribed, and MarketDataRequestReject (Y) for what
// the venue cannot serve. Books come from the market-data tracker's depth cache,
// never from the engine.

// Bounds of FIX market data.
const (
	fixMDDepthMax            = 50  // levels per side a request may ask for (264=0 means this many)
	fixMDSubscriptionsMax    = 64  // subscriptions per session
	fixMDNotifyQueueInstrMax = 256 // pending instrument changes before the oldest are merged
)

// FIX tags of market data.
const (
	tagMDReqID          quickfix.Tag = 262
	tagSubscriptionType quickfix.Tag = 263
	tagMarketDepth      quickfix.Tag = 264
	tagMDUpdateType     quickfix.Tag = 265
	tagNoMDEntryTypes   quickfix.Tag = 267
	tagNoMDEntries      quickfix.Tag = 268
	tagMDEntryType      quickfix.Tag = 269
	tagMDEntryPx        quickfix.Tag = 270
	tagMDEntrySize      quickfix.Tag = 271
	tagMDUpdateAction   quickfix.Tag = 279
	tagMDReqRejReason   quickfix.Tag = 281
	tagNumberOfOrders   quickfix.Tag = 346
	tagNoRelatedSymMD   quickfix.Tag = 146
	tagSymbolMD         quickfix.Tag = 55
	tagTextMD           quickfix.Tag = 58
)

type mdSub struct {
	session     uint16
	reqID       string
	inst        marketdata.InstrumentDef
	tick        decimal.Tick
	depth       int
	incremental bool
	prev        marketdata.Depth
}

// fixMD serves MarketDataRequests from the depth cache.
type fixMD struct {
	s       *Server
	cache   *marketdata.DepthCache
	mu      sync.Mutex
	subs    map[marketdata.InstrumentID][]*mdSub
	pend    map[marketdata.InstrumentID]bool
	wake    chan struct{}
	stop    chan struct{}
	ticks   map[marketdata.InstrumentID]decimal.Tick
	scratch marketdata.Depth
}

func newFixMD(s *Server, defs []marketdata.InstrumentDef) (*fixMD, error) {
	f := &fixMD{s: s, subs: map[marketdata.InstrumentID][]*mdSub{}, pend: map[marketdata.InstrumentID]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), ticks: map[marketdata.InstrumentID]decimal.Tick{}}
	for _, in := range s.cfg.Instruments {
		f.ticks[marketdata.InstrumentID(in.ID)] = in.Tick
	}
	cache, err := marketdata.NewDepthCache(defs, fixMDDepthMax, f.notify)
	if err != nil {
		return nil, err
	}
	f.cache = cache
	return f, nil
}

// notify runs on the feed goroutine: it only marks the instrument and wakes the sender.
func (f *fixMD) notify(id marketdata.InstrumentID) {
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

// run sends refreshes for changed instruments until stop is closed.
func (f *fixMD) run() {
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

func (f *fixMD) reject(idx uint16, reqID string, reason int, text string) {
	m := quickfix.NewMessage()
	m.Header.SetString(35, "Y")
	m.Body.SetString(tagMDReqID, reqID)
	m.Body.SetString(tagMDReqRejReason, strconv.Itoa(reason))
	m.Body.SetString(tagTextMD, text)
	f.s.gw.Send(idx, m)
}

// handle is the gateway's handler for MarketDataRequest (V).
func (f *fixMD) handle(idx uint16, req *quickfix.Message) quickfix.MessageRejectError {
	reqID, _ := req.Body.GetString(tagMDReqID)
	subType, _ := req.Body.GetString(tagSubscriptionType)
	if subType == "2" {
		f.unsubscribe(idx, reqID)
		return nil
	}
	if subType != "0" && subType != "1" {
		f.reject(idx, reqID, 4, "SubscriptionRequestType "+subType+" is not supported")
		return nil
	}
	depth, _ := req.Body.GetInt(tagMarketDepth)
	if depth == 0 {
		depth = fixMDDepthMax
	}
	if depth < 0 || depth > fixMDDepthMax {
		f.reject(idx, reqID, 5, "MarketDepth must be 0 (full, up to "+strconv.Itoa(fixMDDepthMax)+" levels) or 1 to "+strconv.Itoa(fixMDDepthMax))
		return nil
	}
	updType, _ := req.Body.GetString(tagMDUpdateType)
	if subType == "1" && updType != "" && updType != "0" && updType != "1" {
		f.reject(idx, reqID, 6, "MDUpdateType "+updType+" is not supported")
		return nil
	}
	types := quickfix.NewRepeatingGroup(tagNoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tagMDEntryType)})
	if err := req.Body.GetGroup(types); err == nil {
		for i := 0; i < types.Len(); i++ {
			if t, _ := types.Get(i).GetString(tagMDEntryType); t != "0" && t != "1" {
				f.reject(idx, reqID, 8, "MDEntryType "+t+" is not supported (0 bid and 1 offer are)")
				return nil
			}
		}
	}
	syms := quickfix.NewRepeatingGroup(tagNoRelatedSymMD, quickfix.GroupTemplate{quickfix.GroupElement(tagSymbolMD)})
	if err := req.Body.GetGroup(syms); err != nil || syms.Len() == 0 {
		f.reject(idx, reqID, 0, "no symbol requested")
		return nil
	}
	var defs []marketdata.InstrumentDef
	for i := 0; i < syms.Len(); i++ {
		sym, _ := syms.Get(i).GetString(tagSymbolMD)
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
		if n+len(defs) > fixMDSubscriptionsMax {
			f.reject(idx, reqID, 0, "too many subscriptions on this session (at most "+strconv.Itoa(fixMDSubscriptionsMax)+")")
			return nil
		}
	}
	for _, def := range defs {
		sub := &mdSub{session: idx, reqID: reqID, inst: def, tick: f.ticks[def.ID], depth: depth, incremental: updType == "1"}
		if err := f.cache.Depth(def.ID, depth, &sub.prev); err != nil {
			f.reject(idx, reqID, 0, err.Error())
			return nil
		}
		f.s.gw.Send(idx, f.fullRefresh(sub, &sub.prev))
		if subType == "1" {
			f.subs[def.ID] = append(f.subs[def.ID], sub)
		}
	}
	return nil
}

func (f *fixMD) unsubscribe(idx uint16, reqID string) {
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

// sessionEnded drops a session's subscriptions.
func (f *fixMD) sessionEnded(idx uint16) {
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

func (f *fixMD) entry(g *quickfix.RepeatingGroup, sub *mdSub, action string, typ string, l marketdata.Level) {
	row := g.Add()
	if action != "" {
		row.SetString(tagMDUpdateAction, action)
	}
	row.SetString(tagMDEntryType, typ)
	if action != "" {
		row.SetString(tagSymbolMD, sub.inst.Symbol)
	}
	row.SetString(tagMDEntryPx, string(decimal.FormatTicks(nil, l.PriceTicks, sub.tick)))
	if action != "2" {
		row.SetString(tagMDEntrySize, strconv.FormatInt(l.Qty, 10))
		row.SetString(tagNumberOfOrders, strconv.Itoa(l.OrderCount))
	}
}

func (f *fixMD) fullRefresh(sub *mdSub, d *marketdata.Depth) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(35, "W")
	m.Body.SetString(tagMDReqID, sub.reqID)
	m.Body.SetString(tagSymbolMD, sub.inst.Symbol)
	g := quickfix.NewRepeatingGroup(tagNoMDEntries, quickfix.GroupTemplate{quickfix.GroupElement(tagMDEntryType),
		quickfix.GroupElement(tagMDEntryPx), quickfix.GroupElement(tagMDEntrySize), quickfix.GroupElement(tagNumberOfOrders)})
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
func (f *fixMD) refresh(sub *mdSub) {
	if err := f.cache.Depth(sub.inst.ID, sub.depth, &f.scratch); err != nil {
		return
	}
	if !sub.incremental {
		f.s.gw.Send(sub.session, f.fullRefresh(sub, &f.scratch))
	} else {
		bids := marketdata.AppendLevelChanges(nil, true, sub.prev.Bids, f.scratch.Bids)
		asks := marketdata.AppendLevelChanges(nil, false, sub.prev.Asks, f.scratch.Asks)
		if len(bids)+len(asks) > 0 {
			m := quickfix.NewMessage()
			m.Header.SetString(35, "X")
			m.Body.SetString(tagMDReqID, sub.reqID)
			g := quickfix.NewRepeatingGroup(tagNoMDEntries, quickfix.GroupTemplate{quickfix.GroupElement(tagMDUpdateAction),
				quickfix.GroupElement(tagMDEntryType), quickfix.GroupElement(tagSymbolMD), quickfix.GroupElement(tagMDEntryPx),
				quickfix.GroupElement(tagMDEntrySize), quickfix.GroupElement(tagNumberOfOrders)})
			for _, c := range bids {
				f.entry(g, sub, strconv.Itoa(int(c.Action)), "0", c.Level)
			}
			for _, c := range asks {
				f.entry(g, sub, strconv.Itoa(int(c.Action)), "1", c.Level)
			}
			m.Body.SetGroup(g)
			f.s.gw.Send(sub.session, m)
		}
	}
	sub.prev.Bids = append(sub.prev.Bids[:0], f.scratch.Bids...)
	sub.prev.Asks = append(sub.prev.Asks[:0], f.scratch.Asks...)
}
