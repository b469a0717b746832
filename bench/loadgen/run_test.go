package loadgen

import (
	"context"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
)

// testConfig is a short run against addr.
func testConfig(addr string, rate float64, duration time.Duration) Config {
	c := DefaultConfig()
	c.Addr = addr
	c.Sessions = 1
	c.RatePerSecond = rate
	c.Duration = duration
	c.Warmup = 0
	c.Drain = 2 * time.Second
	c.LogonTimeout = 5 * time.Second
	return c
}

func runOK(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SessionErrors) > 0 {
		t.Fatalf("session errors: %v", res.SessionErrors)
	}
	return res
}

// countAtOrAbove counts recorded latencies of at least ns.
func countAtOrAbove(res *Result, ns int64) int64 {
	var n int64
	for _, b := range res.Histogram().Distribution() {
		if b.From >= ns {
			n += b.Count
		}
	}
	return n
}

// A responder that stops answering for 200 ms must show up in the figures
// for every order due during the stall: latency runs from each order's due
// time, not from when the previous answer arrived. A closed-loop client
// would record the stall once; an open-loop one about rate × stall times.
func TestStallShowsInEveryOrderDueDuringIt(t *testing.T) {
	const stall = 200 * time.Millisecond
	r := newResponder(t, func(r *responder) { r.stallAtOrder, r.stallFor = 400, stall })
	cfg := testConfig(r.addr(), 2000, time.Second)
	res := runOK(t, cfg)
	if res.LostOrders != 0 || res.LostCancels != 0 || res.OrdersSent != 2000 {
		t.Fatalf("sent %d, lost %d orders and %d cancels", res.OrdersSent, res.LostOrders, res.LostCancels)
	}
	if res.Latency.Count != 2000 {
		t.Fatalf("recorded %d latencies, want 2000", res.Latency.Count)
	}
	// The stalled order itself waits the whole stall.
	if res.Latency.MaxUs < float64(stall/time.Microsecond) {
		t.Errorf("max %.0fµs, want at least the %v stall", res.Latency.MaxUs, stall)
	}
	// Orders due in the first half of the stall (≈200 at 2000/s) are all
	// answered at least 100 ms after their due time, however the machine
	// schedules the client: lateness only adds.
	if n := countAtOrAbove(res, int64(stall/2)); n < 150 {
		t.Errorf("%d orders at ≥ %v, want ≥ 150: the stall is being omitted", n, stall/2)
	}
	if res.Latency.P90Us < float64(stall/2/time.Microsecond)/2 {
		t.Errorf("p90 %.0fµs does not reflect a stall covering a tenth of the orders", res.Latency.P90Us)
	}
}

func TestLostAnswersAreCounted(t *testing.T) {
	r := newResponder(t, func(r *responder) { r.dropEvery = 10 })
	cfg := testConfig(r.addr(), 1000, 500*time.Millisecond)
	cfg.Drain = 300 * time.Millisecond
	res := runOK(t, cfg)
	orders, dropped, _ := r.counts()
	if orders != 500 || dropped != 50 {
		t.Fatalf("responder saw %d orders and dropped %d", orders, dropped)
	}
	if res.LostOrders != int64(dropped) {
		t.Errorf("lost %d orders, the responder dropped %d", res.LostOrders, dropped)
	}
	if res.LostCancels != 0 {
		t.Errorf("lost %d cancels; every cancel was answered", res.LostCancels)
	}
	if res.Latency.Count != int64(orders-dropped) {
		t.Errorf("recorded %d latencies, want one per answered order (%d)", res.Latency.Count, orders-dropped)
	}
	if res.Lost() != int64(dropped) {
		t.Errorf("Lost() = %d", res.Lost())
	}
}

func TestResendRequestGapFillTestRequestAndSeqGap(t *testing.T) {
	r := newResponder(t, func(r *responder) {
		r.resendAfterLogon = true
		r.testRequest = "PING-7"
		r.skipSeqAtOrder = 20
	})
	res := runOK(t, testConfig(r.addr(), 400, 250*time.Millisecond))
	if res.ResendRequests != 1 {
		t.Errorf("resend requests %d, want 1", res.ResendRequests)
	}
	if res.SeqGaps != 1 {
		t.Errorf("inbound seq gaps %d, want 1 (the responder skipped one MsgSeqNum)", res.SeqGaps)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.gapFills) != 1 {
		t.Fatalf("responder got %d SequenceResets, want one gap fill", len(r.gapFills))
	}
	g := r.gapFills[0]
	next, _ := strconv.Atoi(g.Get(36))
	if g.Get(123) != "Y" || g.Get(43) != "Y" || g.SeqNum() != 1 || g.Get(122) == "" || next < 2 {
		t.Errorf("gap fill %s: want 34=1 43=Y 122 present 123=Y and NewSeqNo past the Logon", g)
	}
	echoed := false
	for _, h := range r.heartbeats {
		echoed = echoed || h.Get(112) == "PING-7"
	}
	if !echoed {
		t.Error("no Heartbeat echoed TestReqID PING-7")
	}
	if res.LostOrders != 0 || res.LostCancels != 0 {
		t.Errorf("lost %d orders and %d cancels", res.LostOrders, res.LostCancels)
	}
}

func TestRejectsByKind(t *testing.T) {
	r := newResponder(t, func(r *responder) { r.rejectEvery, r.sessionRejectAt = 5, 7 })
	res := runOK(t, testConfig(r.addr(), 500, 200*time.Millisecond))
	_, _, rejected := r.counts()
	if got := res.Rejects["ExecutionReport 103=3: price out of band"]; got != int64(rejected) || rejected == 0 {
		t.Errorf("103=3 rejects counted %d, responder sent %d; all kinds %v", got, rejected, res.Rejects)
	}
	if got := res.Rejects["Reject 373=5: Value is incorrect"]; got != 1 {
		t.Errorf("session rejects counted %d, want 1; all kinds %v", got, res.Rejects)
	}
	if res.RejectsTotal != int64(rejected)+1 {
		t.Errorf("rejects total %d, want %d", res.RejectsTotal, rejected+1)
	}
	// A reject answers the order: nothing is lost, the session Reject
	// included (it names the order by RefSeqNum).
	if res.LostOrders != 0 {
		t.Errorf("lost %d orders", res.LostOrders)
	}
}

func TestSessionsAndCrossMix(t *testing.T) {
	r := newResponder(t, nil)
	cfg := testConfig(r.addr(), 1000, 200*time.Millisecond)
	cfg.Sessions, cfg.Mix, cfg.FirstSession = 3, loadmix.Cross, 5
	res := runOK(t, cfg)
	if res.OrdersSent != 200 || res.CancelsSent != 0 || res.Lost() != 0 {
		t.Fatalf("sent %d orders, %d cancels, lost %d", res.OrdersSent, res.CancelsSent, res.Lost())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	senders := map[string]int{}
	sides := map[string]int{}
	for _, m := range r.newOrders {
		senders[m.Get(49)]++
		sides[m.Get(54)+"/"+m.Get(1)+"/"+m.Get(44)]++
	}
	if senders["CLIENT5"] == 0 || senders["CLIENT6"] == 0 || senders["CLIENT7"] == 0 || len(senders) != 3 {
		t.Errorf("orders by sender %v, want CLIENT5..7", senders)
	}
	if sides["1/LOADB/100.00"] != 100 || sides["2/LOADS/100.00"] != 100 {
		t.Errorf("cross orders by side/account/price %v, want 100 buys and 100 sells at 100.00", sides)
	}
}

func TestRampStopsAtFirstFailure(t *testing.T) {
	r := newResponder(t, func(r *responder) { r.dropEvery = 1000 })
	base := testConfig(r.addr(), 300, 200*time.Millisecond)
	base.Drain = 200 * time.Millisecond
	// The responder drops the 1000th order of a connection, so a step
	// passes while it sends fewer: 300/s and 3200/s × 0.2 s do (60 and 640
	// orders), 6100/s sends 1220 and loses one answer.
	rr, err := Ramp(context.Background(), RampConfig{Base: base, StepRate: 2900, MaxRate: 20000, P99MaxUs: 60e6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Steps) != 3 {
		t.Fatalf("%d steps, want 3 (300, 3200 pass; 6100 loses an answer and stops the ramp)", len(rr.Steps))
	}
	if rr.HeldRate != 3200 || rr.Steps[2].Passed || !strings.Contains(rr.Steps[2].Why, "lost") {
		t.Errorf("held %v; last step %+v", rr.HeldRate, rr.Steps[2].Why)
	}
}

// TestRampRefusesAStepBeyondTheBounds: a ramp whose highest step is a run
// no Config takes (a rate over RateMax) is refused before its first step:
// the steps below it ran, loading the venue, before it failed.
func TestRampRefusesAStepBeyondTheBounds(t *testing.T) {
	r := newResponder(t, nil)
	base := testConfig(r.addr(), 100, 200*time.Millisecond)
	rc := RampConfig{Base: base, StepRate: RateMax - 50, MaxRate: RateMax + 50, P99MaxUs: 60e6} // 100/s, then RateMax+50
	if err := rc.Validate(); err == nil || !strings.Contains(err.Error(), "ramp step 1000050/s: loadgen: rate 1.00005e+06 outside") {
		t.Fatalf("Validate: %v, want the rate of the last step refused", err)
	}
	rr, err := Ramp(context.Background(), rc, nil)
	if err == nil || rr != nil {
		t.Fatalf("Ramp: %+v, %v, want nothing run and the refusal", rr, err)
	}
	if orders, _, _ := r.counts(); orders != 0 {
		t.Errorf("the refused ramp sent %d orders", orders)
	}
	rc.MaxRate = 100 // its first step alone
	if err := rc.Validate(); err != nil {
		t.Errorf("Validate of a ramp within the bounds: %v", err)
	}
}

// TestConfigRefusals: each configuration no run can take is refused with
// its one reason: a rate past RateMax or centuries of warm-up overflowed
// the order count, which added "makes no order to measure: raise the rate".
func TestConfigRefusals(t *testing.T) {
	ok := testConfig("127.0.0.1:1", 100, time.Second)
	cases := map[string]struct {
		mutate func(*Config)
		want   string
	}{
		"no sessions":          {func(c *Config) { c.Sessions = 0 }, "sessions 0 outside"},
		"too many sessions":    {func(c *Config) { c.Sessions = SessionsMax + 1 }, "sessions 257 outside"},
		"zero rate":            {func(c *Config) { c.RatePerSecond = 0 }, "rate 0 outside"},
		"rate over the max":    {func(c *Config) { c.RatePerSecond = RateMax + 1 }, "rate 1.000001e+06 outside"},
		"absurd rate":          {func(c *Config) { c.RatePerSecond = 1e20 }, "rate 1e+20 outside"},
		"infinite rate":        {func(c *Config) { c.RatePerSecond = math.Inf(1) }, "rate +Inf outside"},
		"NaN rate":             {func(c *Config) { c.RatePerSecond = math.NaN() }, "rate NaN outside"},
		"too many orders":      {func(c *Config) { c.RatePerSecond, c.Duration = RateMax, time.Hour }, "3600000000 orders in the run, more than"},
		"centuries of warm-up": {func(c *Config) { c.Duration, c.Warmup = 2e6*time.Hour, 2e6*time.Hour }, "1440000000000 orders in the run, more than"},
		"spread over price":    {func(c *Config) { c.Spread = "200" }, "spread"},
		"zero spread":          {func(c *Config) { c.Spread = "0.00" }, "spread"},
		"bad price":            {func(c *Config) { c.Price = "1O0" }, "price"},
		"bad run id":           {func(c *Config) { c.RunID = "abc" }, "run id"},
		"empty symbol":         {func(c *Config) { c.Symbol = "" }, "symbol must be"},
		"zero qty":             {func(c *Config) { c.Qty = 0 }, "qty must be positive"},
		"negative warm-up":     {func(c *Config) { c.Warmup = -time.Second }, "duration must be positive"},
		"negative drain":       {func(c *Config) { c.Drain = -time.Second }, "duration must be positive"},
		"no heartbeat":         {func(c *Config) { c.HeartBtIntS = 0 }, "heartbeat"},
		"mix out of range":     {func(c *Config) { c.Mix = 9 }, "unknown mix 9"},
		"no address":           {func(c *Config) { c.Addr = "" }, "address is empty"},
		"zero duration":        {func(c *Config) { c.Duration = 0 }, "duration must be positive"},
		"no order measured":    {func(c *Config) { c.Duration = 9 * time.Millisecond }, "makes no order to measure"}, // one order every 10 ms
		"symbol with an SOH":   {func(c *Config) { c.Symbol = "A\x01B" }, "symbol must be"},
	}
	for name, tc := range cases {
		c := ok
		tc.mutate(&c)
		err := c.Validate()
		switch {
		case err == nil:
			t.Errorf("%s: accepted", name)
		case !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: %q, want the one reason %q", name, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("the base config is refused: %v", err)
	}
}

func TestRunFailsWhenNobodyListens(t *testing.T) {
	r := newResponder(t, nil)
	addr := r.addr()
	r.ln.Close()
	cfg := testConfig(addr, 100, 100*time.Millisecond)
	cfg.LogonTimeout = time.Second
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("Run against a closed port succeeded")
	}
}

// TestAchievedRateCountsOrdersOnly: the achieved send rate is the orders
// sent over the time they took, measured as the offered rate is. The
// cancels of the last passive orders go out after them, a few slots later
// per session; counted in that window, a run at a low rate that sent every
// order on time read as far below its offered rate (10/s offered, 4/s
// achieved, the verdict held). Nor may it read above the offered rate: no
// order is written before it is due, and a window from the first order's
// due time to the last's write, one interval short, read 11/s.
func TestAchievedRateCountsOrdersOnly(t *testing.T) {
	r := newResponder(t, nil)
	cfg := testConfig(r.addr(), 10, time.Second)
	cfg.Sessions = 2
	res := runOK(t, cfg)
	if res.OrdersSent != 10 || res.CancelsSent == 0 {
		t.Fatalf("sent %d orders, %d cancels, want 10 orders and their cancels", res.OrdersSent, res.CancelsSent)
	}
	// Each order holds one interval: the window is the schedule's second,
	// plus at most the run's largest send lag (the last write given a
	// quarter of a second more), bounded by the lag the run measured, not
	// by a fixed share of the rate, which a loaded machine sending the last
	// order late missed. A window that ran to the cancels, most of a second
	// after the last order here, read far lower.
	schedule := float64(res.OrdersSent) / cfg.RatePerSecond
	low := float64(res.OrdersSent) / (schedule + res.SendLag.MaxUs/1e6 + 0.25)
	if high := cfg.RatePerSecond; res.SendRate < low || res.SendRate > high*1.001 {
		t.Fatalf("achieved %.2f orders/s, want %.2f to %.2f (offered): %d orders over a schedule of %.1f s, send lag max %s",
			res.SendRate, low, high, res.OrdersSent, schedule, time.Duration(res.SendLag.MaxUs*1e3))
	}
}

// TestInterruptedRunLosesNoUnsentOrder: a run whose context ends stops
// sending, logs out and says it was interrupted; the orders it did not
// send are not answers lost (Lost), which made an interrupted ramp step
// fail with "answers lost".
func TestInterruptedRunLosesNoUnsentOrder(t *testing.T) {
	r := newResponder(t, nil)
	cfg := testConfig(r.addr(), 100, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; i < 1000; i++ {
			if orders, _, _ := r.counts(); orders >= 5 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.OrdersSent < 5 || res.OrdersUnsent == 0 || res.Lost() != 0 {
		t.Fatalf("interrupted %v: sent %d, unsent %d, lost %d, want interrupted, the orders sent answered and none lost",
			res.Interrupted, res.OrdersSent, res.OrdersUnsent, res.Lost())
	}
}

// TestRunInterruptedWhileLoggingOn: a run whose context ends while its
// sessions wait for their Logons' answers (a Ctrl-C, which reaches a venue
// run beside the load too) is an interrupted run with nothing sent, at
// once: it was an error, as a run that could not start is, and left no
// figures (bench-fix.sh's result file was empty), after the logon timeout.
func TestRunInterruptedWhileLoggingOn(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := testConfig(silent.Addr().String(), 100, 100*time.Millisecond)
	cfg.LogonTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := Run(ctx, cfg)
	if err != nil || res == nil || !res.Interrupted || res.OrdersSent != 0 {
		t.Fatalf("a run interrupted while logging on: %+v, %v; want an interrupted result with nothing sent", res, err)
	}
}

// TestRunStoppedAsItsVenueGoesAway: a Ctrl-C at a terminal reaches a venue
// run beside the load too, and the venue closing the sessions as it stops
// can reach the load before its own signal handler ends its context. A
// context ending within signalGrace of the venue going away is an
// interrupted run, whether the venue refused the Logons (the run was an
// error, as one that could not start is, and bench-fix.sh's result file was
// left empty) or closed every session after them (the run read as failed,
// its sessions lost).
func TestRunStoppedAsItsVenueGoesAway(t *testing.T) {
	t.Run("logon refused", func(t *testing.T) {
		closing, err := net.Listen("tcp", "127.0.0.1:0") // reads the Logon, closes
		if err != nil {
			t.Fatal(err)
		}
		defer closing.Close()
		closed := make(chan struct{}, 1)
		go func() {
			for {
				c, err := closing.Accept()
				if err != nil {
					return
				}
				c.Read(make([]byte, 512))
				c.Close()
				closed <- struct{}{}
			}
		}()
		cfg := testConfig(closing.Addr().String(), 100, 100*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-closed; time.Sleep(50 * time.Millisecond); cancel() }()
		res, err := Run(ctx, cfg)
		if err != nil || res == nil || !res.Interrupted || res.OrdersSent != 0 {
			t.Fatalf("a run whose Logon a stopping venue refused: %+v, %v; want an interrupted result with nothing sent", res, err)
		}
	})
	t.Run("sessions closed", func(t *testing.T) {
		r := newResponder(t, func(r *responder) { r.closeAtOrder = 3 })
		cfg := testConfig(r.addr(), 100, 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for i := 0; i < 2000; i++ {
				r.mu.Lock()
				closed := r.closed
				r.mu.Unlock()
				if closed > 0 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			cancel()
		}()
		res, err := Run(ctx, cfg)
		if err != nil || !res.Interrupted || len(res.SessionErrors) != 1 {
			t.Fatalf("a run whose sessions a stopping venue closed: %+v, %v; want an interrupted result with its session's error", res, err)
		}
	})
}
