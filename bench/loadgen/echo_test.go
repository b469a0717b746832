package loadgen

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
)

// The echo venue answers every order and cancel, over real TCP, for every
// mix and several sessions.
func TestEchoAnswersEverything(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := NewEcho(ln, "VENUE")
	defer e.Close()
	for _, mix := range []loadmix.Mix{loadmix.Passive, loadmix.Cross, loadmix.Mixed} {
		cfg := testConfig(e.Addr(), 4000, 250*time.Millisecond)
		cfg.Sessions, cfg.Mix = 3, mix
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.SessionErrors) > 0 || res.Lost() != 0 || res.RejectsTotal != 0 {
			t.Fatalf("%s: errors %v, lost %d, rejects %d", mix, res.SessionErrors, res.Lost(), res.RejectsTotal)
		}
		if res.OrdersSent != 1000 || res.ERs != res.OrdersSent+res.CancelsSent || res.Latency.Count != 1000 {
			t.Fatalf("%s: sent %d orders and %d cancels, got %d ERs, recorded %d", mix, res.OrdersSent, res.CancelsSent, res.ERs, res.Latency.Count)
		}
	}
}
