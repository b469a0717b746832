package loadgen

import (
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
)

func TestPlanKinds(t *testing.T) {
	cases := []struct {
		mix  loadmix.Mix
		want []orderKind
	}{
		{loadmix.Passive, []orderKind{passiveBuy, passiveSell, passiveBuy, passiveSell, passiveBuy, passiveSell, passiveBuy, passiveSell}},
		{loadmix.Cross, []orderKind{crossBuy, crossSell, crossBuy, crossSell, crossBuy, crossSell, crossBuy, crossSell}},
		{loadmix.Mixed, []orderKind{crossBuy, crossSell, passiveBuy, passiveSell, crossBuy, crossSell, passiveBuy, passiveSell}},
	}
	for _, c := range cases {
		p := plan{mix: c.mix, sessions: 3}
		for i, want := range c.want {
			if got := p.kind(int64(i)); got != want {
				t.Errorf("%s: kind(%d) = %d, want %d", c.mix, i, got, want)
			}
		}
	}
}

// Every order is sent by exactly one session, every passive order is
// cancelled exactly once, by its own session, after it was sent, and the
// number of cancels is passiveOrders.
func TestPlanCoversEveryOrderOnce(t *testing.T) {
	for _, mix := range []loadmix.Mix{loadmix.Passive, loadmix.Cross, loadmix.Mixed} {
		for _, sessions := range []int{1, 3, 16} {
			for _, total := range []int64{0, 1, 5, 99, 1000} {
				cfg := DefaultConfig()
				cfg.Mix, cfg.Sessions, cfg.RatePerSecond, cfg.Warmup, cfg.Duration = mix, sessions, float64(total), 0, time.Second
				p := newPlan(&cfg)
				if p.totalOrders != total {
					t.Fatalf("total %d, want %d", p.totalOrders, total)
				}
				sent := make([]int, total)
				cancelled := make([]int, total)
				for s := int64(0); s < p.sessions; s++ {
					for k := int64(0); k < p.sessionSlots(s); k++ {
						if k < p.sessionOrders(s) {
							i := p.global(s, k)
							if i%p.sessions != s {
								t.Fatalf("order %d on session %d", i, s)
							}
							sent[i]++
						}
						if i, ok := p.cancelTarget(s, k); ok {
							if sent[i] != 1 || i%p.sessions != s || !p.kind(i).passive() {
								t.Fatalf("%s: slot %d of session %d cancels order %d before or without sending it", mix, k, s, i)
							}
							if due := p.cancelDueNs(i); due != p.dueNs(p.global(s, k)) {
								t.Fatalf("cancel of %d due %d, its slot is due %d", i, due, p.dueNs(p.global(s, k)))
							}
							cancelled[i]++
						}
					}
				}
				var cancels int64
				for i := range sent {
					if sent[i] != 1 {
						t.Fatalf("%s/%d sessions/%d orders: order %d sent %d times", mix, sessions, total, i, sent[i])
					}
					want := 0
					if p.kind(int64(i)).passive() {
						want = 1
					}
					if cancelled[i] != want {
						t.Fatalf("%s: order %d cancelled %d times, want %d", mix, i, cancelled[i], want)
					}
					cancels += int64(cancelled[i])
				}
				if cancels != p.passiveOrders() {
					t.Fatalf("%s/%d orders: %d cancels, passiveOrders says %d", mix, total, cancels, p.passiveOrders())
				}
			}
		}
	}
}

func TestPlanDueTimes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RatePerSecond, cfg.Warmup, cfg.Duration = 4000, 500*time.Millisecond, time.Second
	p := newPlan(&cfg)
	if p.totalOrders != 6000 || p.warmupOrders != 2000 {
		t.Fatalf("plan %+v", p)
	}
	for _, c := range []struct{ i, ns int64 }{{0, 0}, {1, 250_000}, {4000, 1_000_000_000}, {5999, 1_499_750_000}} {
		if got := p.dueNs(c.i); got != c.ns {
			t.Errorf("dueNs(%d) = %d, want %d", c.i, got, c.ns)
		}
	}
}

func TestPassivePrices(t *testing.T) {
	cases := []struct {
		price, spread, buy, sell string
		ok                       bool
	}{
		{"100.00", "0.50", "99.50", "100.50", true},
		{"100", "0.05", "99.95", "100.05", true},
		{"100.0", "1", "99.0", "101.0", true},
		{"2.500", "0.001", "2.499", "2.501", true},
		{"0.10", "0.05", "0.05", "0.15", true},
		{"100", "100", "", "", false},
		{"100", "0", "", "", false},
		{"1e2", "1", "", "", false},
		{"-5", "1", "", "", false},
		{"1.2.3", "1", "", "", false},
		{".", "1", "", "", false},
	}
	for _, c := range cases {
		buy, sell, err := passivePrices(c.price, c.spread)
		if (err == nil) != c.ok || buy != c.buy || sell != c.sell {
			t.Errorf("passivePrices(%q, %q) = %q, %q, %v", c.price, c.spread, buy, sell, err)
		}
	}
}

func TestMixNames(t *testing.T) {
	for _, m := range []loadmix.Mix{loadmix.Passive, loadmix.Cross, loadmix.Mixed} {
		got, err := loadmix.Parse(m.String())
		if err != nil || got != m {
			t.Errorf("loadmix.Parse(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := loadmix.Parse("aggressive"); err == nil {
		t.Error("unknown mix accepted")
	}
}

func TestRunIDs(t *testing.T) {
	a := newRunID(time.UnixMilli(1_000_000))
	b := newRunID(time.UnixMilli(1_000_001))
	if !validRunID(a) || !validRunID(b) || a == b {
		t.Errorf("run ids %q %q", a, b)
	}
}
