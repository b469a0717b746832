package edge

import (
	"net/netip"
	"time"
)

// Rate is a token bucket's bound: PerSecond tokens are added each second up
// to Burst. A zero Rate in Config takes the documented default.
type Rate struct {
	PerSecond float64
	Burst     int
}

func (r Rate) orDefault(d Rate) Rate {
	if r.PerSecond == 0 && r.Burst == 0 {
		return d
	}
	return r
}

// tokenBucket holds tokens as of lastNs (nanoseconds on the listener's
// monotonic clock). A new bucket is full.
type tokenBucket struct {
	tokens float64
	lastNs int64
}

func newTokenBucket(r Rate, nowNs int64) tokenBucket {
	return tokenBucket{tokens: float64(r.Burst), lastNs: nowNs}
}

func (b *tokenBucket) refill(r Rate, nowNs int64) {
	if nowNs > b.lastNs {
		b.tokens += r.PerSecond * float64(nowNs-b.lastNs) / float64(time.Second)
		b.lastNs = nowNs
	}
	if b.tokens > float64(r.Burst) {
		b.tokens = float64(r.Burst)
	}
}

// take removes one token if there is one.
func (b *tokenBucket) take(r Rate, nowNs int64) bool {
	b.refill(r, nowNs)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// full reports whether the bucket is back to its burst: forgetting it then
// changes nothing.
func (b *tokenBucket) full(r Rate, nowNs int64) bool {
	b.refill(r, nowNs)
	return b.tokens >= float64(r.Burst)
}

// source is what the listener tracks per client address.
type source struct {
	conns   int
	logons  tokenBucket
	accepts tokenBucket
}

// sourceTable tracks at most max addresses. An address is forgotten when it
// has no connection and its logon and accept buckets are full again, so an
// entry never outlives what it limits.
type sourceTable struct {
	max                   int
	logonRate, acceptRate Rate
	entries               map[netip.Addr]*source
}

func newSourceTable(max int, logonRate, acceptRate Rate) sourceTable {
	return sourceTable{max: max, logonRate: logonRate, acceptRate: acceptRate,
		entries: make(map[netip.Addr]*source, min(max, 1024))}
}

// get returns the entry of addr, creating it (with full buckets) if there
// is room; nil when the table is full.
func (t *sourceTable) get(addr netip.Addr, nowNs int64) *source {
	if s, ok := t.entries[addr]; ok {
		return s
	}
	if len(t.entries) >= t.max {
		t.sweep(nowNs)
		if len(t.entries) >= t.max {
			return nil
		}
	}
	s := &source{logons: newTokenBucket(t.logonRate, nowNs), accepts: newTokenBucket(t.acceptRate, nowNs)}
	t.entries[addr] = s
	return s
}

// idle reports whether nothing about s needs remembering.
func (t *sourceTable) idle(s *source, nowNs int64) bool {
	return s.conns == 0 && s.logons.full(t.logonRate, nowNs) && s.accepts.full(t.acceptRate, nowNs)
}

// release forgets addr when nothing about it needs remembering.
func (t *sourceTable) release(addr netip.Addr, nowNs int64) {
	if s, ok := t.entries[addr]; ok && t.idle(s, nowNs) {
		delete(t.entries, addr)
	}
}

func (t *sourceTable) sweep(nowNs int64) {
	for addr, s := range t.entries {
		if t.idle(s, nowNs) {
			delete(t.entries, addr)
		}
	}
}

// compIDTable holds the logon bucket of at most max CompIDs; full buckets
// are forgotten when room is needed.
type compIDTable struct {
	max     int
	entries map[string]*tokenBucket
}

func newCompIDTable(max int) compIDTable {
	return compIDTable{max: max, entries: make(map[string]*tokenBucket, min(max, 1024))}
}

// take takes a logon token for compID. ok is false when the bucket is
// empty; tracked is false when the table is full of CompIDs that all
// still have attempts to remember.
func (t *compIDTable) take(compID []byte, r Rate, nowNs int64) (ok, tracked bool) {
	b, found := t.entries[string(compID)]
	if !found {
		if len(t.entries) >= t.max {
			for id, e := range t.entries {
				if e.full(r, nowNs) {
					delete(t.entries, id)
				}
			}
			if len(t.entries) >= t.max {
				return false, false
			}
		}
		nb := newTokenBucket(r, nowNs)
		b = &nb
		t.entries[string(compID)] = b
	}
	return b.take(r, nowNs), true
}
