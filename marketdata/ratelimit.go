package marketdata

import "time"

// tokenBucket limits requests to rate per second with bursts of burst. It
// is owned by one recovery connection and is not safe for concurrent use.
type tokenBucket struct {
	tokensNano int64 // tokens × 1e9, so refill is exact in integers
	burstNano  int64
	ratePerSec int64
	lastNs     int64
}

func newTokenBucket(ratePerSec, burst int, nowNs int64) tokenBucket {
	return tokenBucket{tokensNano: int64(burst) * 1e9, burstNano: int64(burst) * 1e9,
		ratePerSec: int64(ratePerSec), lastNs: nowNs}
}

// take spends one token if there is one.
func (b *tokenBucket) take(now time.Time) bool {
	ns := now.UnixNano()
	if ns > b.lastNs {
		elapsed := ns - b.lastNs
		if elapsed > b.burstNano { // cap before multiplying: no overflow
			elapsed = b.burstNano
		}
		b.tokensNano += elapsed * b.ratePerSec
		if b.tokensNano > b.burstNano {
			b.tokensNano = b.burstNano
		}
		b.lastNs = ns
	}
	if b.tokensNano < 1e9 {
		return false
	}
	b.tokensNano -= 1e9
	return true
}
