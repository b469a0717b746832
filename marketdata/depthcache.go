package marketdata

import (
	"errors"
	"sync"
	"time"
)

// UpdateListener hears of every instrument whose book, trades or status
// changed in a batch, once per batch, after the batch's packet was sent.
// OnUpdate runs on the feed goroutine while it holds the feed's lock: it
// must copy what it needs from the view and return quickly, never block.
type UpdateListener interface {
	OnUpdate(v BookView)
}

// BookView is a read-only view of one instrument's tracked book, valid only
// during OnUpdate.
type BookView struct {
	t       *Tracker
	id      InstrumentID
	nextSeq uint64
}

// InstrumentID names the instrument that changed.
func (v BookView) InstrumentID() InstrumentID { return v.id }

// NextSeq is the feed sequence number after the messages that the view
// reflects.
func (v BookView) NextSeq() uint64 { return v.nextSeq }

// TopOfBook fills bids and asks with up to depth levels per side (depth <= 0: all).
func (v BookView) TopOfBook(depth int, bids, asks []Level) ([]Level, []Level) {
	bids, asks, _ = v.t.TopOfBook(v.id, depth, bids, asks)
	return bids, asks
}

// State returns the instrument's status and trade summary.
func (v BookView) State() InstrumentState {
	st, _ := v.t.State(v.id)
	return st
}

// DepthCacheDepthMax bounds the levels per side a DepthCache keeps.
const DepthCacheDepthMax = 1024

// ErrDepthTooLarge is returned for a depth beyond the cache's.
var ErrDepthTooLarge = errors.New("marketdata: depth beyond the cache's DepthMax")

// DepthCache is the FIX gateway's window on the tracker: an UpdateListener
// that keeps a copy of the top DepthMax levels per side of every instrument,
// readable from any goroutine. The gateway answers a MarketDataRequest
// (snapshot, 35=W) from Depth and sends incremental refreshes (35=X) when
// Notify reports a change, using AppendLevelChanges against the levels it
// sent last. Copying under a per-instrument lock costs O(DepthMax) per
// changed instrument per batch on the feed goroutine.
type DepthCache struct {
	depthMax int
	// listMu guards the two maps: the feed goroutine adds the book of an
	// instrument listed while the venue runs (OnUpdate); readers are the
	// FIX sessions. A book, once in, is never removed.
	listMu   sync.RWMutex
	books    map[InstrumentID]*cachedBook
	bySymbol map[string]InstrumentID
	// added is closed, and replaced, when a book is added (under listMu),
	// which wakes AwaitLookup.
	added  chan struct{}
	notify func(InstrumentID)
}

type cachedBook struct {
	mu      sync.RWMutex
	def     InstrumentDef
	nextSeq uint64
	state   InstrumentState
	bids    []Level
	asks    []Level
}

// NewDepthCache prepares a cache for the feed's instruments. notify, if not
// nil, is called on the feed goroutine after an instrument's copy changed;
// it must not block (hand the id to a bounded queue, for example).
func NewDepthCache(instruments []InstrumentDef, depthMax int, notify func(InstrumentID)) (*DepthCache, error) {
	if depthMax < 1 || depthMax > DepthCacheDepthMax {
		return nil, ErrDepthTooLarge
	}
	c := &DepthCache{depthMax: depthMax, books: make(map[InstrumentID]*cachedBook, len(instruments)),
		bySymbol: make(map[string]InstrumentID, len(instruments)), added: make(chan struct{}), notify: notify}
	for _, d := range instruments {
		c.books[d.ID] = &cachedBook{def: d, state: InstrumentState{Def: d, Status: d.Status},
			bids: make([]Level, 0, depthMax), asks: make([]Level, 0, depthMax)}
		c.bySymbol[d.Symbol] = d.ID
	}
	return c, nil
}

// OnUpdate implements UpdateListener.
func (c *DepthCache) OnUpdate(v BookView) {
	b := c.book(v.id)
	if b == nil {
		b = c.add(v.State().Def)
	}
	b.mu.Lock()
	b.bids, b.asks = v.TopOfBook(c.depthMax, b.bids, b.asks)
	b.state = v.State()
	b.nextSeq = v.NextSeq()
	b.mu.Unlock()
	if c.notify != nil {
		c.notify(v.id)
	}
}

func (c *DepthCache) book(id InstrumentID) *cachedBook {
	c.listMu.RLock()
	b := c.books[id]
	c.listMu.RUnlock()
	return b
}

// add enters the book of an instrument the tracker added (feed goroutine).
func (c *DepthCache) add(d InstrumentDef) *cachedBook {
	b := &cachedBook{def: d, state: InstrumentState{Def: d, Status: d.Status},
		bids: make([]Level, 0, c.depthMax), asks: make([]Level, 0, c.depthMax)}
	c.listMu.Lock()
	c.books[d.ID] = b
	c.bySymbol[d.Symbol] = d.ID
	close(c.added)
	c.added = make(chan struct{})
	c.listMu.Unlock()
	return b
}

// Lookup finds an instrument by symbol.
func (c *DepthCache) Lookup(symbol string) (InstrumentDef, bool) {
	c.listMu.RLock()
	defer c.listMu.RUnlock()
	id, ok := c.bySymbol[symbol]
	if !ok {
		return InstrumentDef{}, false
	}
	return c.books[id].def, true
}

// AwaitLookup is Lookup that waits, at most timeout, for the book of an
// instrument the cache does not hold yet: one the venue has just listed,
// whose addition the feed has not yet applied (the cache learns it at its
// first update, after the feed's batch; the FIX gateway knows it earlier).
func (c *DepthCache) AwaitLookup(symbol string, timeout time.Duration) (InstrumentDef, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.listMu.RLock()
		id, ok := c.bySymbol[symbol]
		var def InstrumentDef
		if ok {
			def = c.books[id].def
		}
		added := c.added
		c.listMu.RUnlock()
		if ok {
			return def, true
		}
		select {
		case <-added:
		case <-deadline.C:
			return InstrumentDef{}, false
		}
	}
}

// Depth is a copy of the top of one instrument's book.
type Depth struct {
	State   InstrumentState
	NextSeq uint64 // feed sequence after the messages this copy reflects
	Bids    []Level
	Asks    []Level
}

// Depth copies up to depth levels per side (depth <= 0: all the cache
// holds) into dst, reusing its slices. Safe from any goroutine.
func (c *DepthCache) Depth(id InstrumentID, depth int, dst *Depth) error {
	if depth > c.depthMax {
		return ErrDepthTooLarge
	}
	if depth <= 0 {
		depth = c.depthMax
	}
	b := c.book(id)
	if b == nil {
		return ErrUnknownInstrument
	}
	b.mu.RLock()
	dst.State, dst.NextSeq = b.state, b.nextSeq
	dst.Bids = append(dst.Bids[:0], b.bids[:min(depth, len(b.bids))]...)
	dst.Asks = append(dst.Asks[:0], b.asks[:min(depth, len(b.asks))]...)
	b.mu.RUnlock()
	return nil
}

// LevelChange is one change between two copies of a side's top levels, in
// the terms of a FIX incremental refresh (MDUpdateAction New, Change,
// Delete at a price).
type LevelChange struct {
	Action UpdateActionKind
	Level  Level // for Delete only PriceTicks is meaningful
}

// UpdateActionKind mirrors MDUpdateAction (279): 0 New, 1 Change, 2 Delete.
type UpdateActionKind uint8

// The update actions.
const (
	UpdateNew    UpdateActionKind = 0
	UpdateChange UpdateActionKind = 1
	UpdateDelete UpdateActionKind = 2
)

// AppendLevelChanges appends to dst the changes that turn prev into cur,
// both best first on one side (bid: true for bids). Deletes come first, so a
// receiver that caps its depth never holds too many levels.
func AppendLevelChanges(dst []LevelChange, bid bool, prev, cur []Level) []LevelChange {
	dst = appendUnmatched(dst, bid, prev, cur, UpdateDelete, false)
	return appendUnmatched(dst, bid, cur, prev, UpdateNew, true)
}

// appendUnmatched walks a and b, both best first on one side, and appends,
// in a's order, a change of action unmatched for each level of a whose price
// b does not hold and, when changed is set, an UpdateChange for each level
// of a that b holds with another quantity or order count.
func appendUnmatched(dst []LevelChange, bid bool, a, b []Level, unmatched UpdateActionKind, changed bool) []LevelChange {
	for i, j := 0, 0; i < len(a); {
		switch {
		case j < len(b) && a[i].PriceTicks == b[j].PriceTicks:
			if changed && a[i] != b[j] {
				dst = append(dst, LevelChange{Action: UpdateChange, Level: a[i]})
			}
			i, j = i+1, j+1
		case j < len(b) && (b[j].PriceTicks > a[i].PriceTicks) == bid: // b[j] is better
			j++
		default:
			dst = append(dst, LevelChange{Action: unmatched, Level: a[i]})
			i++
		}
	}
	return dst
}
