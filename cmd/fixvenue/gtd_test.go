package main

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestGTDExpiryBeforeNanosecondTimeIsPast: a GTD order's expiry before the
// earliest time int64 Unix nanoseconds hold (1677) has long passed, and is
// refused as every past expiry is; its nanoseconds wrapped round into the
// 22nd century, and the order was taken, echoing that as its ExpireTime.
func TestGTDExpiryBeforeNanosecondTimeIsPast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := startVenue(t, writeVenueConfig(t, dir, `[marketdata]
enabled = false
[[session]]
comp_id = "CLIENT1"
`))
	c := logOn(t, v.fixAddr, "CLIENT1")
	defer c.Close()
	for _, o := range []struct {
		id     string
		expiry fixclient.Field
	}{
		{"date-1000", fixclient.F(432, "10000101")},
		{"date-0001", fixclient.F(432, "00010101")},
		{"time-1600", fixclient.F(126, "16000101-00:00:00")},
	} {
		if err := c.Send("D", fixclient.F(11, o.id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
			fixclient.F(44, "95.00"), fixclient.F(59, "6"), o.expiry); err != nil {
			t.Fatal(err)
		}
		m, err := c.Expect(10*time.Second, "8", map[int]string{11: o.id})
		if err != nil {
			t.Fatal(err)
		}
		if m.Get(150) != "8" || m.Get(58) != "expire time is in the past" {
			t.Errorf("GTD order %s with expiry %d=%s: answered %s", o.id, o.expiry.Tag, o.expiry.Value, m)
		}
	}
}
