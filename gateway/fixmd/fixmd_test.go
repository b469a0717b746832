package fixmd

import (
	"strconv"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/marketdata"
)

// recorder is a Sender that keeps what was sent.
type recorder struct{ sent []*quickfix.Message }

func (r *recorder) Send(_ uint16, m *quickfix.Message) { r.sent = append(r.sent, m) }

func (r *recorder) last(t *testing.T) *quickfix.Message {
	t.Helper()
	if len(r.sent) == 0 {
		t.Fatal("nothing sent")
	}
	return r.sent[len(r.sent)-1]
}

func newHandler(t *testing.T) (*Handler, *recorder) {
	t.Helper()
	h, err := New([]marketdata.InstrumentDef{
		{ID: 1, Symbol: "ACME", TickMantissa: 1, TickExponent: -2, LotSize: 1},
		{ID: 2, Symbol: "GLOBEX", TickMantissa: 5, TickExponent: -2, LotSize: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	h.Attach(r)
	return h, r
}

// request builds a MarketDataRequest for bids and offers of the symbols.
func request(reqID, subType string, depth int, symbols ...string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "V")
	m.Body.SetString(tag.MDReqID, reqID)
	m.Body.SetString(tag.SubscriptionRequestType, subType)
	m.Body.SetInt(tag.MarketDepth, depth)
	types := quickfix.NewRepeatingGroup(tag.NoMDEntryTypes, quickfix.GroupTemplate{quickfix.GroupElement(tag.MDEntryType)})
	types.Add().SetString(tag.MDEntryType, "0")
	types.Add().SetString(tag.MDEntryType, "1")
	m.Body.SetGroup(types)
	syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol)})
	for _, s := range symbols {
		syms.Add().SetString(tag.Symbol, s)
	}
	m.Body.SetGroup(syms)
	return m
}

func field(t *testing.T, m *quickfix.FieldMap, tg quickfix.Tag) string {
	t.Helper()
	v, err := m.GetString(tg)
	if err != nil {
		t.Fatalf("tag %d: %v", tg, err)
	}
	return v
}

// expect checks the last message sent: its type, MDReqID and, for a reject, the reason.
func expect(t *testing.T, r *recorder, msgType, reqID, reason string) {
	t.Helper()
	m := r.last(t)
	if got := field(t, &m.Header.FieldMap, tag.MsgType); got != msgType {
		t.Fatalf("sent %s, want %s: %s", got, msgType, m)
	}
	if got := field(t, &m.Body.FieldMap, tag.MDReqID); got != reqID {
		t.Fatalf("MDReqID %s, want %s", got, reqID)
	}
	if reason != "" {
		if got := field(t, &m.Body.FieldMap, tag.MDReqRejReason); got != reason {
			t.Fatalf("MDReqRejReason %s, want %s: %s", got, reason, m)
		}
	}
}

func TestRequestsAndRejects(t *testing.T) {
	h, r := newHandler(t)
	h.Handle(1, request("a", "1", 5, "NOPE"))
	expect(t, r, "Y", "a", "0")
	h.Handle(1, request("b", "1", DepthMax+1, "ACME"))
	expect(t, r, "Y", "b", "5")
	h.Handle(1, request("c", "9", 5, "ACME"))
	expect(t, r, "Y", "c", "4")

	// A subscription answers with a full refresh of the (empty) book.
	h.Handle(1, request("s1", "1", 0, "ACME"))
	expect(t, r, "W", "s1", "")
	if got := field(t, &r.last(t).Body.FieldMap, tag.Symbol); got != "ACME" {
		t.Fatalf("W for %s", got)
	}
	h.Handle(1, request("s1", "1", 5, "GLOBEX"))
	expect(t, r, "Y", "s1", "1")
	// Another session may use the same MDReqID.
	h.Handle(2, request("s1", "1", 5, "GLOBEX"))
	expect(t, r, "W", "s1", "")
	// Unsubscribing, or the session's end, frees the MDReqID.
	h.Handle(1, request("s1", "2", 5, "ACME"))
	h.Handle(1, request("s1", "1", 5, "ACME"))
	expect(t, r, "W", "s1", "")
	h.SessionEnded(2)
	h.Handle(2, request("s1", "1", 5, "ACME"))
	expect(t, r, "W", "s1", "")
}

func TestSubscriptionsMaxPerSession(t *testing.T) {
	h, r := newHandler(t)
	for i := 0; i < SubscriptionsMax; i++ {
		h.Handle(1, request("r"+strconv.Itoa(i), "1", 1, "ACME"))
		expect(t, r, "W", "r"+strconv.Itoa(i), "")
	}
	h.Handle(1, request("over", "1", 1, "ACME"))
	expect(t, r, "Y", "over", "2")
	// A snapshot without subscription is not bounded by it.
	h.Handle(1, request("snap", "0", 1, "ACME"))
	expect(t, r, "W", "snap", "")
}

// TestSymbolNamedTwiceIsServedOnce: a request that names an instrument
// several times gets one answer for it and makes one subscription (it got
// one full refresh per mention, and a refresh per mention after each change).
func TestSymbolNamedTwiceIsServedOnce(t *testing.T) {
	h, r := newHandler(t)
	h.Handle(1, request("snap", "0", 1, "ACME", "ACME", "GLOBEX", "ACME"))
	if len(r.sent) != 2 {
		t.Fatalf("a snapshot of ACME ×3 and GLOBEX: %d messages, want 2", len(r.sent))
	}
	h.Handle(1, request("sub", "1", 1, "GLOBEX", "GLOBEX"))
	if len(r.sent) != 3 || h.nsubs.Load() != 1 {
		t.Fatalf("a subscription to GLOBEX ×2: %d messages, %d subscriptions, want 3 and 1", len(r.sent), h.nsubs.Load())
	}
	h.SessionEnded(1)
	if h.nsubs.Load() != 0 {
		t.Fatalf("%d subscriptions after the session ended", h.nsubs.Load())
	}
}

// blockingSender holds every send of session 1 until released.
type blockingSender struct {
	entered, release chan struct{}
	sent             chan uint16
}

func (b *blockingSender) Send(idx uint16, _ *quickfix.Message) {
	if idx == 1 {
		select {
		case b.entered <- struct{}{}:
		default:
		}
		<-b.release
	}
	b.sent <- idx
}

// TestFeedNeverWaitsForASession: while one session's sends are held (its
// queue full), the feed's notifications return, and other requests are
// answered once it is released; notify used to wait for the lock the held
// send kept, stalling the UDP feed for every receiver.
func TestFeedNeverWaitsForASession(t *testing.T) {
	h, _ := newHandler(t)
	b := &blockingSender{entered: make(chan struct{}, 1), release: make(chan struct{}), sent: make(chan uint16, 1024)}
	h.Attach(b)
	go h.Run()
	defer h.Stop()
	held := make(chan struct{})
	go func() {
		h.Handle(1, request("s1", "1", 1, "ACME")) // its W waits in Send
		close(held)
	}()
	<-b.entered
	notified := make(chan struct{})
	go func() {
		for range 1000 {
			h.notify(1) // as the feed's goroutine does after each batch
		}
		close(notified)
	}()
	select {
	case <-notified:
	case <-time.After(10 * time.Second):
		t.Fatal("notify waited for a session's send")
	}
	close(b.release)
	<-held
	if got := <-b.sent; got != 1 {
		t.Fatalf("first send to session %d", got)
	}
}

// withField returns m with a body field set.
func withField(m *quickfix.Message, tg quickfix.Tag, v string) *quickfix.Message {
	m.Body.SetString(tg, v)
	return m
}

// withSessions returns m with NoTradingSessions entries (id, sub-id;
// empty: absent).
func withSessions(m *quickfix.Message, entries ...[2]string) *quickfix.Message {
	g := quickfix.NewRepeatingGroup(tag.NoTradingSessions, quickfix.GroupTemplate{
		quickfix.GroupElement(tag.TradingSessionID), quickfix.GroupElement(tag.TradingSessionSubID)})
	for _, e := range entries {
		row := g.Add()
		if e[0] != "" {
			row.SetString(tag.TradingSessionID, e[0])
		}
		if e[1] != "" {
			row.SetString(tag.TradingSessionSubID, e[1])
		}
	}
	m.Body.SetGroup(g)
	return m
}

// TestRequestFieldsTheVenueCannotHonour: Scope, OpenCloseSettlFlag,
// trading sessions and a SymbolSfx the venue cannot serve are refused with
// the MDReqRejReason FIX 4.4 has for each, never ignored; the values it
// serves are taken (they were all ignored).
func TestRequestFieldsTheVenueCannotHonour(t *testing.T) {
	h, r := newHandler(t)
	for _, tt := range []struct {
		name, reason string
		m            *quickfix.Message
	}{
		{"scope national", "A", withField(request("sc2", "0", 1, "ACME"), tag.Scope, "2")},
		{"scope local and global", "A", withField(request("sc3", "0", 1, "ACME"), tag.Scope, "1 3")},
		{"open/close/settle flag", "B", withField(request("ocs", "0", 1, "ACME"), tag.OpenCloseSettlFlag, "0")},
		{"another instrument's session", "9", withSessions(request("ts1", "0", 1, "ACME"), [2]string{"GLOBEX", ""})},
		{"an unknown session", "9", withSessions(request("ts2", "0", 1, "ACME"), [2]string{"NOPE", ""})},
		{"a session not covering every symbol", "9", withSessions(request("ts3", "0", 1, "ACME", "GLOBEX"), [2]string{"ACME", ""})},
		{"a sub-session", "9", withSessions(request("ts4", "0", 1, "ACME"), [2]string{"ALL", "2"})},
		{"scope local", "", withField(request("ok1", "0", 1, "ACME"), tag.Scope, "1")},
		{"implicit delete", "", withField(request("ok2", "0", 1, "ACME"), tag.MDImplicitDelete, "Y")},
		{"explicit delete", "", withField(request("ok3", "0", 1, "ACME"), tag.MDImplicitDelete, "N")},
		{"the venue's session", "", withSessions(request("ok4", "0", 1, "ACME", "GLOBEX"), [2]string{"ALL", ""})},
		{"the symbols' sessions", "", withSessions(request("ok5", "0", 1, "ACME", "GLOBEX"), [2]string{"GLOBEX", ""}, [2]string{"ACME", ""})},
	} {
		r.sent = nil
		h.Handle(1, tt.m)
		reqID, _ := tt.m.Body.GetString(tag.MDReqID)
		if tt.reason == "" {
			expect(t, r, "W", reqID, "")
			continue
		}
		expect(t, r, "Y", reqID, tt.reason)
		if len(r.sent) != 1 {
			t.Fatalf("%s: %d messages, want the reject alone", tt.name, len(r.sent))
		}
	}

	// A SymbolSfx names an instrument the venue does not list.
	m := request("sfx", "0", 1)
	syms := quickfix.NewRepeatingGroup(tag.NoRelatedSym, quickfix.GroupTemplate{quickfix.GroupElement(tag.Symbol), quickfix.GroupElement(tag.SymbolSfx)})
	row := syms.Add()
	row.SetString(tag.Symbol, "ACME")
	row.SetString(tag.SymbolSfx, "WI")
	m.Body.SetGroup(syms)
	h.Handle(1, m)
	expect(t, r, "Y", "sfx", "0")
}
