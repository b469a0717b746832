package loadgen

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/bench/loadmix"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// testRunner is a runner with one session and no connection, for the codec
// and handler tests.
func testRunner(t testing.TB, mix loadmix.Mix, sessions int) (*runner, *session) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Sessions, cfg.Mix, cfg.RatePerSecond, cfg.Duration, cfg.Warmup = sessions, mix, 1000, time.Second, 0
	r := &runner{cfg: cfg, plan: newPlan(&cfg), runID: "RUN001", start: time.Now()}
	r.orderAnswered = make([]uint8, r.plan.totalOrders)
	r.cancelAnswered = make([]uint8, r.plan.totalOrders)
	s, err := newSession(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.sessions = []*session{s}
	return r, s
}

// checkFrame verifies BodyLength and CheckSum with fixwire, independently
// of the writer's bookkeeping of offsets.
func checkFrame(t *testing.T, msg []byte) *fixclient.Message {
	t.Helper()
	if n, err := fixwire.Frame(msg, len(msg)); n != len(msg) || err != nil {
		t.Fatalf("Frame = %d, %v for %d bytes: %q", n, err, len(msg), msg)
	}
	if err := fixwire.VerifyCheckSum(msg); err != nil {
		t.Errorf("%v: %q", err, msg)
	}
	m, err := fixclient.Parse(msg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func leftPad(v int) string {
	s := strconv.Itoa(v)
	return strings.Repeat("0", 3-len(s)) + s
}

func TestTemplatesPatchInPlace(t *testing.T) {
	_, s := testRunner(t, loadmix.Mixed, 1)
	now := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	var clk wallClock
	ts := clk.stamp(now)
	cases := []struct {
		name  string
		t     *template
		seq   uint64
		index uint64
		want  map[int]string
	}{
		{"passive buy", s.orders[passiveBuy], 12345, 42, map[int]string{35: "D", 34: "000012345", 11: "RUN001O0000000042", 54: "1", 44: "99.50", 1: "LOADP", 38: "10", 40: "2", 59: "0", 55: "ACME"}},
		{"passive sell", s.orders[passiveSell], 1, 0, map[int]string{34: "000000001", 11: "RUN001O0000000000", 54: "2", 44: "100.50"}},
		{"cross buy", s.orders[crossBuy], seqMax, 9_999_999_999, map[int]string{34: "999999999", 11: "RUN001O9999999999", 54: "1", 44: "100.00", 1: "LOADB"}},
		{"cross sell", s.orders[crossSell], 7, 3, map[int]string{54: "2", 44: "100.00", 1: "LOADS"}},
		{"cancel buy", s.cancels[0], 99, 77, map[int]string{35: "F", 11: "RUN001C0000000077", 41: "RUN001O0000000077", 54: "1", 38: "10"}},
		{"cancel sell", s.cancels[1], 100, 78, map[int]string{35: "F", 11: "RUN001C0000000078", 41: "RUN001O0000000078", 54: "2"}},
	}
	buf := make([]byte, templateBytesMax)
	for _, c := range cases {
		n := c.t.encode(buf, c.seq, ts, c.index)
		m := checkFrame(t, buf[:n])
		if m.Get(49) != "CLIENT1" || m.Get(56) != "VENUE" || m.Get(52) != "20260304-05:06:07.891" || m.Get(60) != "20260304-05:06:07.891" {
			t.Errorf("%s: header %s", c.name, m)
		}
		for tag, want := range c.want {
			if got := m.Get(tag); got != want {
				t.Errorf("%s: tag %d = %q, want %q", c.name, tag, got, want)
			}
		}
		// Patching twice must leave no trace of the first values.
		n2 := c.t.encode(buf, 5, ts, 6)
		if n2 != n {
			t.Errorf("%s: length changed from %d to %d", c.name, n, n2)
		}
		m2 := checkFrame(t, buf[:n2])
		if m2.SeqNum() != 5 || !strings.HasSuffix(m2.Get(11), "0000000006") {
			t.Errorf("%s: second patch %s", c.name, m2)
		}
	}
}

func TestFixWriterAdminMessages(t *testing.T) {
	w := newFixWriter(adminBytesMax)
	w.reset()
	w.header("4", "CLIENT1", "VENUE", 17, []byte("20260101-00:00:00.000"))
	w.str(123, "Y")
	w.uint(36, 40)
	msg, _ := w.finish()
	m := checkFrame(t, msg)
	if m.Type() != "4" || m.SeqNum() != 17 || m.Get(36) != "40" || m.Get(123) != "Y" {
		t.Errorf("gap fill %s", m)
	}
}

func TestWallClock(t *testing.T) {
	var c wallClock
	for _, tm := range []time.Time{
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2027, 1, 1, 0, 0, 0, 5_000_000, time.UTC),
		time.Date(2027, 1, 1, 1, 0, 0, 5_000_000, time.FixedZone("X", 3600)), // same instant as the previous
	} {
		if got, want := string(c.stamp(tm)[:]), tm.UTC().Format("20060102-15:04:05.000"); got != want {
			t.Errorf("stamp(%v) = %s, want %s", tm, got, want)
		}
	}
}

// TestFrameLength checks the load generator's bound; fixwire's tests
// cover the rest of framing.
func TestFrameLength(t *testing.T) {
	good := fixclient.Build(fixclient.F(35, "0"), fixclient.F(34, "1"))
	if n, err := frameLength(append(good, "8=FI"...)); n != len(good) || err != nil {
		t.Errorf("frameLength = %d, %v; want %d", n, err, len(good))
	}
	big := fixclient.Build(fixclient.F(35, "8"), fixclient.F(34, "1"), fixclient.F(58, strings.Repeat("x", messageBytesMax)))
	if _, err := frameLength(big); !errors.Is(err, fixwire.ErrTooLarge) {
		t.Errorf("message over messageBytesMax: %v, want ErrTooLarge", err)
	}
}

func TestInboundParse(t *testing.T) {
	er := fixclient.Build(fixclient.F(35, "8"), fixclient.F(49, "VENUE"), fixclient.F(34, "0042"), fixclient.F(43, "Y"),
		fixclient.F(11, "RUN001O0000000001"), fixclient.F(150, "8"), fixclient.F(103, "3"), fixclient.F(58, "too high"))
	var m inbound
	if err := m.parse(er); err != nil {
		t.Fatal(err)
	}
	if string(m.msgType) != "8" || m.seq != 42 || !m.possDup || string(m.clOrdID) != "RUN001O0000000001" ||
		string(m.execType) != "8" || string(m.rejectCode) != "3" || string(m.text) != "too high" {
		t.Errorf("parsed %+v", m)
	}
	rr := fixclient.Build(fixclient.F(35, "2"), fixclient.F(34, "3"), fixclient.F(7, "5"), fixclient.F(16, "0"))
	if err := m.parse(rr); err != nil || m.beginSeq != 5 || !m.hasBeginSeq {
		t.Errorf("ResendRequest parsed %+v, %v", m, err)
	}
	bad := []struct {
		name string
		msg  []byte
		err  error
	}{
		{"checksum", corruptChecksum(er), fixwire.ErrCheckSum},
		{"no MsgType", fixclient.Build(fixclient.F(34, "1")), errNoMsgType},
		{"no MsgSeqNum", fixclient.Build(fixclient.F(35, "0")), errSeqMissing},
		{"zero MsgSeqNum", fixclient.Build(fixclient.F(35, "0"), fixclient.F(34, "0")), errBadSeqNum},
		{"letters in MsgSeqNum", fixclient.Build(fixclient.F(35, "0"), fixclient.F(34, "1x")), errBadSeqNum},
		{"tag with letters", append(fixclient.Build(fixclient.F(35, "0"))[:0:0], fixclient.AppendChecksum([]byte("8=FIX.4.4\x019=9\x01a5=0\x0134=1\x01"))...), fixwire.ErrField},
		{"field without =", fixclient.AppendChecksum([]byte("8=FIX.4.4\x019=4\x0135\x01")), fixwire.ErrField},
	}
	for _, c := range bad {
		if err := m.parse(c.msg); !errors.Is(err, c.err) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
		}
	}
}

func corruptChecksum(msg []byte) []byte {
	out := append([]byte(nil), msg...)
	d := &out[len(out)-2]
	*d = '0' + (*d-'0'+1)%10
	return out
}

// The per-message path (patch a template, frame and parse an answer, record
// its latency) must not allocate, or the client's garbage collector would
// add pauses to the figures it reports.
func TestHotPathDoesNotAllocate(t *testing.T) {
	r, s := testRunner(t, loadmix.Passive, 1)
	var clk wallClock
	out := make([]byte, templateBytesMax)
	ers := make([][]byte, 0, 100)
	for i := 0; i < 100; i++ {
		ers = append(ers, fixclient.Build(fixclient.F(35, "8"), fixclient.F(34, strconv.Itoa(i+1)),
			fixclient.F(11, "RUN001O"+strings.Repeat("0", 8)+leftPad(i)[1:]), fixclient.F(150, "0")))
	}
	rej := fixclient.Build(fixclient.F(35, "8"), fixclient.F(34, "1"), fixclient.F(11, "RUN001C0000000001"),
		fixclient.F(150, "8"), fixclient.F(103, "3"), fixclient.F(58, "price out of band"))
	s.handle(rej, 10) // the first reject of a kind creates its counter
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		n := s.orders[passiveBuy].encode(out, uint64(i+1), clk.stamp(time.Now()), uint64(i%100))
		if n == 0 {
			t.Fatal("nothing encoded")
		}
		msg := ers[i%len(ers)]
		if l, err := frameLength(msg); err != nil || l != len(msg) {
			t.Fatal("frame", err)
		}
		s.expectIn = 1
		if err := s.handle(msg, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		s.expectIn = 1
		if err := s.handle(rej, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per message, want 0", allocs)
	}
	if r.ordersAnswered.Load() != 100 || s.latency.TotalCount() != 100 {
		t.Errorf("answered %d, recorded %d: the handler did not see the answers", r.ordersAnswered.Load(), s.latency.TotalCount())
	}
}
