package server

import (
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
	"github.com/fixvenue/fixvenue/ops"
)

// sendMarked sends a message of type msgType from c at its next sequence
// number, with the header fields mark (PossResend 97, PossDupFlag 43,
// OrigSendingTime 122) and SendingTime sent, and the body fields body.
func sendMarked(t *testing.T, s *Server, c *fixclient.Client, msgType string, sent time.Time, mark []fixclient.Field, body ...fixclient.Field) {
	t.Helper()
	fields := []fixclient.Field{fixclient.F(35, msgType), fixclient.F(49, "CLIENT1"), fixclient.F(56, s.cfg.Venue.SenderCompID),
		fixclient.F(34, itoa(c.NextOut))}
	fields = append(fields, mark...)
	fields = append(fields, fixclient.F(52, fixclient.Timestamp(sent)))
	fields = append(fields, body...)
	c.NextOut++
	if err := c.SendRaw(fixclient.Build(fields...)); err != nil {
		t.Fatal(err)
	}
}

// buyBody is the body of a buy of 1 ACME at 95.00 as clOrdID, with
// TimeInForce tif.
func buyBody(clOrdID, tif string, sent time.Time) []fixclient.Field {
	return []fixclient.Field{fixclient.F(11, clOrdID), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(sent)), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00"),
		fixclient.F(59, tif)}
}

// An order or replace sent again as a possible resend (97=Y or 43=Y) whose
// original was sent before the last end of day is refused when its ClOrdID
// is unknown today: the end of day forgot the day's ClOrdIDs, and booking it
// would give a client that resends an order that got no answer just across
// the end of day a second order. A resend of a live order's ClOrdID is still
// answered with its status, and a possible resend whose original was sent
// after the end of day keeps the same-day answers: its status, or a new
// order.
func TestPossResendFromBeforeTheEndOfDay(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), adminConfig()+"[session_defaults]\ncancel_on_disconnect = false\n"), Options{})
	c := logon(t, s, "CLIENT1", true)

	yesterday := time.Now()
	sendMarked(t, s, c, "D", yesterday, nil, buyBody("day1", "0", yesterday)...)
	expectER(t, c, map[int]string{11: "day1", 150: "0"})
	sendMarked(t, s, c, "D", yesterday, nil, buyBody("gtc1", "1", yesterday)...)
	expectER(t, c, map[int]string{11: "gtc1", 150: "0"})
	time.Sleep(5 * time.Millisecond) // the end of day's time after the originals' (millisecond SendingTimes)
	endOfDay(t, s)
	expectER(t, c, map[int]string{11: "day1", 150: "C"}) // the DAY order expired
	time.Sleep(5 * time.Millisecond)

	refused := func(m *fixclient.Message, what string) {
		t.Helper()
		if !strings.Contains(m.Get(58), "possible resend") || !strings.Contains(m.Get(58), "end of day") {
			t.Errorf("%s: Text %q, want one saying it is a possible resend from before the end of day", what, m.Get(58))
		}
	}
	now := time.Now()
	// The expired DAY order sent again, PossResend with its original time:
	// refused, not booked again.
	sendMarked(t, s, c, "D", now, []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(yesterday))},
		buyBody("day1", "0", yesterday)...)
	refused(expectER(t, c, map[int]string{11: "day1", 150: "8", 39: "8", 103: "99"}), "97=Y, 122 before the end of day")
	// PossDup, likewise; and PossResend without 122, its SendingTime before.
	sendMarked(t, s, c, "D", now, []fixclient.Field{fixclient.F(43, "Y"), fixclient.F(122, fixclient.Timestamp(yesterday))},
		buyBody("lost1", "0", yesterday)...)
	refused(expectER(t, c, map[int]string{11: "lost1", 150: "8", 39: "8", 103: "99"}), "43=Y, 122 before the end of day")
	sendMarked(t, s, c, "D", yesterday, []fixclient.Field{fixclient.F(97, "Y")}, buyBody("lost2", "0", yesterday)...)
	refused(expectER(t, c, map[int]string{11: "lost2", 150: "8", 39: "8", 103: "99"}), "97=Y, 52 before the end of day")
	// A replace sent again from before the end of day, its new ClOrdID
	// unknown: refused, the live order left as it was.
	sendMarked(t, s, c, "G", now, []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(yesterday))},
		fixclient.F(11, "gtc1r"), fixclient.F(41, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(yesterday)), fixclient.F(38, "2"), fixclient.F(40, "2"), fixclient.F(44, "95.00"),
		fixclient.F(59, "1"))
	m, err := c.Expect(readWait, "9", map[int]string{11: "gtc1r", 41: "gtc1", 434: "2", 102: "99", 39: "0"})
	if err != nil {
		t.Fatal(err)
	}
	refused(m, "replace, 97=Y, 122 before the end of day")
	// The GTC order still lives: its ClOrdID is known, and a resend of it
	// is answered with its status, whenever its original was sent.
	sendMarked(t, s, c, "D", now, []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(yesterday))},
		buyBody("gtc1", "1", yesterday)...)
	expectER(t, c, map[int]string{11: "gtc1", 150: "I", 39: "0", 38: "1"})

	// Today's: a possible resend of an order sent after the end of day.
	sendMarked(t, s, c, "D", now, nil, buyBody("today1", "0", now)...)
	expectER(t, c, map[int]string{11: "today1", 150: "0"})
	later := time.Now()
	sendMarked(t, s, c, "D", later, []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(now))},
		buyBody("today1", "0", now)...)
	expectER(t, c, map[int]string{11: "today1", 150: "I", 39: "0"})
	// Unknown, its original after the end of day: a new order.
	sendMarked(t, s, c, "D", later, []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(now))},
		buyBody("today2", "0", now)...)
	expectER(t, c, map[int]string{11: "today2", 150: "0", 39: "0"})
}

// A venue started again after the end of day, from the end of day's own
// snapshot (no end of day left to replay), still knows when the trading day
// began: the end of day's report keeps its command time.
func TestPossResendFromBeforeTheEndOfDayAfterARestart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[session_defaults]\ncancel_on_disconnect = false\n")
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	yesterday := time.Now()
	sendMarked(t, s, c, "D", yesterday, nil, buyBody("day1", "0", yesterday)...)
	expectER(t, c, map[int]string{11: "day1", 150: "0"})
	time.Sleep(5 * time.Millisecond) // the end of day's time after the original's (millisecond SendingTimes)
	if eod := endOfDay(t, s); eod.SnapshotSeq < 0 || eod.CommandUnixNs <= yesterday.UnixNano() {
		t.Fatalf("end of day %+v: want a snapshot, and its command time after the order's %d", eod, yesterday.UnixNano())
	}
	c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg, Options{})
	if s.replayedEndOfDayNs != 0 {
		t.Fatalf("the start replayed an end of day: it did not start from the end of day's snapshot")
	}
	c = logon(t, s, "CLIENT1", true)
	sendMarked(t, s, c, "D", time.Now(), []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(yesterday))},
		buyBody("day1", "0", yesterday)...)
	m := expectER(t, c, map[int]string{11: "day1", 150: "8", 39: "8", 103: "99"})
	if !strings.Contains(m.Get(58), "possible resend") {
		t.Errorf("Text %q, want one saying it is a possible resend from before the end of day", m.Get(58))
	}
}

// heldEndOfDay is a venue whose journal's sync the test holds from its end
// of day on: CLIENT1 logged on, its orders (ClOrdID and TimeInForce) rested
// at sent, then an operator's end of day called, its command written and
// never durable until release. resend sends a possible resend (97=Y, 122
// sent) of a buy as clOrdID and returns its answer; release lets the
// journal go on and waits for the end of day's call.
type heldEndOfDay struct {
	t       *testing.T
	s       *Server
	c       *fixclient.Client
	sent    time.Time
	hold    *syncHold
	eodCode chan int
}

func startHeldEndOfDay(t *testing.T, orders ...[2]string) *heldEndOfDay {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), adminConfig()+"[session_defaults]\ncancel_on_disconnect = false\n")
	s, hold := startHeld(t, cfg, Options{})
	h := &heldEndOfDay{t: t, s: s, c: logon(t, s, "CLIENT1", true), sent: time.Now(), hold: hold, eodCode: make(chan int, 1)}
	for _, o := range orders {
		sendMarked(t, s, h.c, "D", h.sent, nil, buyBody(o[0], o[1], h.sent)...)
		expectER(t, h.c, map[int]string{11: o[0], 150: "0"})
	}
	time.Sleep(5 * time.Millisecond) // the end of day's time after the originals' (millisecond SendingTimes)
	hold.on.Store(true)
	go func() {
		var res ops.ActionResponse
		h.eodCode <- adminCall(t, s, "POST", "/v1/eod", aliceToken, `{"reason":"day done"}`, &res)
	}()
	hold.waitHeld(t, "the end of day", &lockedbuf.Buffer{})
	return h
}

func (h *heldEndOfDay) resend(clOrdID, tif string) *fixclient.Message {
	h.t.Helper()
	sendMarked(h.t, h.s, h.c, "D", time.Now(), []fixclient.Field{fixclient.F(97, "Y"), fixclient.F(122, fixclient.Timestamp(h.sent))},
		buyBody(clOrdID, tif, h.sent)...)
	m, err := h.c.Expect(readWait, "8", map[int]string{11: clOrdID})
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

func (h *heldEndOfDay) release() {
	h.t.Helper()
	h.hold.release()
	if code := <-h.eodCode; code != 200 && code != 504 {
		h.t.Fatalf("eod: %d", code)
	}
}

// A possible resend taken just after the end of day's command was written
// is judged by the day the end of day begins: it is sequenced after the end
// of day, which forgets the ClOrdIDs it could have named. The gateway
// learnt of the end of day from its result, once the matcher had applied
// it: one taken before that was judged by the day before and booked as a
// new order (about half the runs of this test, the journal's sync held
// meanwhile so that the booking shows as an answer that never comes).
func TestPossResendWhileTheEndOfDayIsJournaled(t *testing.T) {
	t.Parallel()
	h := startHeldEndOfDay(t, [2]string{"day1", "0"})
	// An order sent before the end of day and never answered, sent again.
	if m := h.resend("lost1", "0"); m.Get(150) != "8" || m.Get(103) != "99" || !strings.Contains(m.Get(58), "possible resend") {
		t.Fatalf("a possible resend from before an end of day being journaled: %s; want it refused (150=8, 103=99)", m)
	}
	h.release()
	expectER(t, h.c, map[int]string{11: "day1", 150: "C"}) // the end of day applied
}

// A possible resend of a DAY order the end of day expires, taken before
// that expiry reaches the open-order view (here the journal's sync is held,
// so it never does meanwhile), is refused: the order still looked live,
// the resend passed as a live order's, and the matcher, which had
// forgotten the expired order's ClOrdID, booked a second order. A GTC
// order the end of day leaves resting is still answered with its status.
func TestPossResendOfADayOrderTheEndOfDayExpires(t *testing.T) {
	t.Parallel()
	h := startHeldEndOfDay(t, [2]string{"day1", "0"}, [2]string{"gtc1", "1"})
	if m := h.resend("day1", "0"); m.Get(150) != "8" || m.Get(103) != "99" || !strings.Contains(m.Get(58), "possible resend") {
		t.Fatalf("a possible resend of a DAY order the end of day expires: %s; want it refused (150=8, 103=99)", m)
	}
	h.release()
	expectER(t, h.c, map[int]string{11: "day1", 150: "C"}) // expired, once
	if m := h.resend("gtc1", "1"); m.Get(150) != "I" || m.Get(39) != "0" {
		t.Fatalf("a possible resend of a GTC order resting across the end of day: %s; want its status (150=I, 39=0)", m)
	}
}
