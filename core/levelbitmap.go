package core

import "math/bits"

// levelBitmap records which price levels of one book side hold orders, so that
// the next best level is found by scanning words rather than levels.
//
// It has two tiers: words holds one bit per level, and summary holds one bit
// per word of words (set when that word is non-zero). Finding the next set bit
// looks at most at one word of words, then at summary words (each covering
// 4,096 levels), then at one more word of words. For the widest band allowed
// (LevelsPerSideMaxLimit levels) that is at most 2 + LevelsPerSideMaxLimit/4096
// word reads, and in a dense book it is one.
type levelBitmap struct {
	words   []uint64
	summary []uint64
	size    int32
}

func newLevelBitmap(levels int32) levelBitmap {
	wordCount := (int(levels) + 63) / 64
	return levelBitmap{
		words:   make([]uint64, wordCount),
		summary: make([]uint64, (wordCount+63)/64),
		size:    levels,
	}
}

func (b *levelBitmap) set(i int32) {
	w := i >> 6
	b.words[w] |= 1 << uint(i&63)
	b.summary[w>>6] |= 1 << uint(w&63)
}

func (b *levelBitmap) clear(i int32) {
	w := i >> 6
	b.words[w] &^= 1 << uint(i&63)
	if b.words[w] == 0 {
		b.summary[w>>6] &^= 1 << uint(w&63)
	}
}

func (b *levelBitmap) isSet(i int32) bool {
	return b.words[i>>6]&(1<<uint(i&63)) != 0
}

// nextAtOrAbove returns the lowest set level ≥ i, or -1.
func (b *levelBitmap) nextAtOrAbove(i int32) int32 {
	if i < 0 {
		i = 0
	}
	if i >= b.size {
		return -1
	}
	w := i >> 6
	if m := b.words[w] & (^uint64(0) << uint(i&63)); m != 0 {
		return w<<6 + int32(bits.TrailingZeros64(m))
	}
	w = b.nextWordAbove(w)
	if w < 0 {
		return -1
	}
	return w<<6 + int32(bits.TrailingZeros64(b.words[w]))
}

// nextWordAbove returns the lowest non-empty word index > w, or -1.
func (b *levelBitmap) nextWordAbove(w int32) int32 {
	w++
	if int(w) >= len(b.words) {
		return -1
	}
	s := w >> 6
	m := b.summary[s] & (^uint64(0) << uint(w&63))
	for m == 0 {
		s++
		if int(s) >= len(b.summary) {
			return -1
		}
		m = b.summary[s]
	}
	return s<<6 + int32(bits.TrailingZeros64(m))
}

// prevAtOrBelow returns the highest set level ≤ i, or -1.
func (b *levelBitmap) prevAtOrBelow(i int32) int32 {
	if i >= b.size {
		i = b.size - 1
	}
	if i < 0 {
		return -1
	}
	w := i >> 6
	if m := b.words[w] & (^uint64(0) >> uint(63-i&63)); m != 0 {
		return w<<6 + 63 - int32(bits.LeadingZeros64(m))
	}
	w = b.prevWordBelow(w)
	if w < 0 {
		return -1
	}
	return w<<6 + 63 - int32(bits.LeadingZeros64(b.words[w]))
}

// prevWordBelow returns the highest non-empty word index < w, or -1.
func (b *levelBitmap) prevWordBelow(w int32) int32 {
	w--
	if w < 0 {
		return -1
	}
	s := w >> 6
	m := b.summary[s] & (^uint64(0) >> uint(63-w&63))
	for m == 0 {
		s--
		if s < 0 {
			return -1
		}
		m = b.summary[s]
	}
	return s<<6 + 63 - int32(bits.LeadingZeros64(m))
}
