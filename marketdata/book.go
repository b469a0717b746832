package marketdata

import "errors"

// ErrLevelsFull is returned when an order would open a price level beyond
// LevelsMax on one side of one instrument.
var ErrLevelsFull = errors.New("marketdata: price levels full (raise LevelsMax)")

// sideIdx indexes the two sides of a book.
type sideIdx uint8

const (
	bidSide sideIdx = 0
	askSide sideIdx = 1
)

// level is one price of one side: its aggregate and the intrusive list of
// its orders in time priority (head first).
type level struct {
	priceTicks int64
	qty        int64
	orderCount int32
	head, tail orderIdx
}

// bookSide holds one side's levels sorted from worst to best, so the best
// level is last. Most activity happens near the best price, where inserting
// or removing a level moves only the few entries behind it.
type bookSide struct {
	levels []level // len = live levels, cap = LevelsMax
	bid    bool
}

// better reports whether price a is better than price b on this side.
func (s *bookSide) better(a, b int64) bool {
	if s.bid {
		return a > b
	}
	return a < b
}

// search returns the index of the first level not worse than priceTicks and
// whether that level has exactly this price.
func (s *bookSide) search(priceTicks int64) (int, bool) {
	lo, hi := 0, len(s.levels)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.better(priceTicks, s.levels[mid].priceTicks) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.levels) && s.levels[lo].priceTicks == priceTicks
}

// levelNum is the 1-based rank from the best of the level at index i.
func (s *bookSide) levelNum(i int) int { return len(s.levels) - i }

// insert opens an empty level at index i for priceTicks.
func (s *bookSide) insert(i int, priceTicks int64) error {
	n := len(s.levels)
	if n == cap(s.levels) {
		return ErrLevelsFull
	}
	s.levels = s.levels[:n+1]
	copy(s.levels[i+1:], s.levels[i:n])
	s.levels[i] = level{priceTicks: priceTicks, head: noOrder, tail: noOrder}
	return nil
}

// remove deletes the level at index i.
func (s *bookSide) remove(i int) {
	n := len(s.levels)
	copy(s.levels[i:], s.levels[i+1:n])
	s.levels = s.levels[:n-1]
}

// best returns the best level, or nil when the side is empty.
func (s *bookSide) best() *level {
	if len(s.levels) == 0 {
		return nil
	}
	return &s.levels[len(s.levels)-1]
}

// crossedBy reports whether an order at priceTicks on the opposite side would
// trade against this side's best level.
func (s *bookSide) crossedBy(priceTicks int64) bool {
	b := s.best()
	if b == nil {
		return false
	}
	if s.bid {
		return priceTicks <= b.priceTicks
	}
	return priceTicks >= b.priceTicks
}
