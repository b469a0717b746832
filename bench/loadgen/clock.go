package loadgen

import "time"

// wallClock formats UTCTimestamps with milliseconds without allocating: the
// date and time of day are formatted once per second and only the
// milliseconds are written for every message.
type wallClock struct {
	sec  int64
	text [timestampBytes]byte
}

// stamp returns t as "YYYYMMDD-HH:MM:SS.sss" (UTC). The result is the
// clock's own buffer, valid until the next call.
func (c *wallClock) stamp(t time.Time) *[timestampBytes]byte {
	t = t.UTC()
	if sec := t.Unix(); sec != c.sec || c.text[0] == 0 {
		c.sec = sec
		y, mo, d := t.Date()
		h, mi, s := t.Clock()
		b := c.text[:]
		putDigits(b[0:4], uint64(y))
		putDigits(b[4:6], uint64(mo))
		putDigits(b[6:8], uint64(d))
		b[8] = '-'
		putDigits(b[9:11], uint64(h))
		b[11] = ':'
		putDigits(b[12:14], uint64(mi))
		b[14] = ':'
		putDigits(b[15:17], uint64(s))
		b[17] = '.'
	}
	putDigits(c.text[18:21], uint64(t.Nanosecond()/1e6))
	return &c.text
}
