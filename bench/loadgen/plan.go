package loadgen

import "github.com/fixvenue/fixvenue/bench/loadmix"

// orderKind selects an order's template.
type orderKind uint8

const (
	passiveBuy orderKind = iota
	passiveSell
	crossBuy
	crossSell
	orderKindCount
)

func (k orderKind) passive() bool { return k == passiveBuy || k == passiveSell }

// plan is the open-loop schedule. Order i (0-based, over all sessions) is
// due at i/rate seconds after the start, goes to session i mod sessions, and
// is recorded when it is not part of the warm-up. The schedule is a pure
// function of the index, so the receiver of an answer knows the due time
// of the order it answers without any shared state.
type plan struct {
	sessions     int64
	totalOrders  int64
	warmupOrders int64
	intervalNs   float64
	mix          loadmix.Mix
}

func newPlan(c *Config) plan {
	return plan{
		sessions:     int64(c.Sessions),
		totalOrders:  c.totalOrders(),
		warmupOrders: c.warmupOrders(),
		intervalNs:   1e9 / c.RatePerSecond,
		mix:          c.Mix,
	}
}

// dueNs is when slot i is due, in nanoseconds after the start. Indexes past
// the last order continue the cadence (they carry the last cancels).
func (p *plan) dueNs(i int64) int64 { return int64(float64(i) * p.intervalNs) }

// kind is the template of order i. Crossing orders come in pairs (2j buys,
// 2j+1 sells at the same price), so every pair trades whether or not its two
// orders share a session.
func (p *plan) kind(i int64) orderKind {
	sell := i%2 == 1
	cross := p.mix == loadmix.Cross || p.mix == loadmix.Mixed && (i/2)%2 == 0
	switch {
	case cross && sell:
		return crossSell
	case cross:
		return crossBuy
	case sell:
		return passiveSell
	}
	return passiveBuy
}

// sessionOrders is the number of orders session s (0-based) sends.
func (p *plan) sessionOrders(s int64) int64 {
	if p.totalOrders <= s {
		return 0
	}
	return (p.totalOrders - s + p.sessions - 1) / p.sessions
}

// sessionSlots is the number of send slots of session s: its orders, then
// cancelLagSlots more to cancel its last passive orders.
func (p *plan) sessionSlots(s int64) int64 {
	n := p.sessionOrders(s)
	if p.mix != loadmix.Cross && n > 0 {
		n += cancelLagSlots
	}
	return n
}

// global is the schedule index of slot k of session s.
func (p *plan) global(s, k int64) int64 { return s + k*p.sessions }

// cancelTarget returns the order cancelled in slot k of session s, if any.
func (p *plan) cancelTarget(s, k int64) (int64, bool) {
	if p.mix == loadmix.Cross || k < cancelLagSlots {
		return 0, false
	}
	target := k - cancelLagSlots
	if target >= p.sessionOrders(s) {
		return 0, false
	}
	i := p.global(s, target)
	return i, p.kind(i).passive()
}

// cancelDueNs is the due time of the cancel of order i: the due time of the
// slot it is sent in.
func (p *plan) cancelDueNs(i int64) int64 { return p.dueNs(i + cancelLagSlots*p.sessions) }

// passiveOrders counts the passive orders, which is the number of cancels.
func (p *plan) passiveOrders() int64 {
	switch p.mix {
	case loadmix.Passive:
		return p.totalOrders
	case loadmix.Cross:
		return 0
	}
	// Mixed: indexes 4m+2 and 4m+3 are passive.
	n := p.totalOrders / 4 * 2
	if r := p.totalOrders % 4; r > 2 {
		n += r - 2
	}
	return n
}
