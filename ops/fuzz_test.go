package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// errFuzzHalted halts the fuzzed admin API's pipeline: a request that
// passes every check of the API reaches the venue, which answers 503
// "halted", and nothing is journaled.
var errFuzzHalted = errors.New("fuzz: the venue is not reached")

// fuzzRoute is one POST of the admin API with a JSON body.
type fuzzRoute struct {
	path, symbol, action string
	handle               func(o *Ops) http.HandlerFunc
	body                 any // the type the body decodes into
}

var fuzzRoutes = []fuzzRoute{
	{"/v1/risk/kill", "", "kill", func(o *Ops) http.HandlerFunc { return o.handleRiskAction }, RiskRequest{}},
	{"/v1/risk/reset", "", "reset", func(o *Ops) http.HandlerFunc { return o.handleRiskAction }, RiskRequest{}},
	{"/v1/risk/limit", "", "limit", func(o *Ops) http.HandlerFunc { return o.handleRiskAction }, RiskRequest{}},
	{"/v1/instruments", "", "", func(o *Ops) http.HandlerFunc { return o.handleAddInstrument }, AddInstrumentRequest{}},
	{"/v1/instruments/ACME/halt", "ACME", "halt", func(o *Ops) http.HandlerFunc { return o.handleInstrumentAction }, actionRequest{}},
	{"/v1/instruments/all/resume", AllInstruments, "resume", func(o *Ops) http.HandlerFunc { return o.handleInstrumentAction }, actionRequest{}},
	{"/v1/instruments/ACME/band", "ACME", "", func(o *Ops) http.HandlerFunc { return o.handleBand }, actionRequest{}},
	{"/v1/cancel", "", "", func(o *Ops) http.HandlerFunc { return o.handleCancel }, actionRequest{}},
	{"/v1/eod", "", "", func(o *Ops) http.HandlerFunc { return o.handleEndOfDay }, actionRequest{}},
	{"/v1/phase", "", "", func(o *Ops) http.HandlerFunc { return o.handlePhase }, actionRequest{}},
	{"/v1/sessions/C1/logout", "", "logout", func(o *Ops) http.HandlerFunc { return o.handleSessionAction }, reasonOnly{}},
	{"/v1/sessions/C1/disable", "", "disable", func(o *Ops) http.HandlerFunc { return o.handleSessionAction }, reasonOnly{}},
	{"/v1/orders/cancel", "", "", func(o *Ops) http.HandlerFunc { return o.handleOrderCancel }, orderCancelRequest{}},
}

// reasonOnly is the body a session action takes (the session is in the
// path): a reason alone.
type reasonOnly struct {
	Reason string `json:"reason"`
}

// fuzzSessions is the gateway's sessions behind the fuzzed API: one,
// logged on and enabled, so that a logout and a disable reach the venue.
type fuzzSessions struct{}

func (fuzzSessions) SessionState(uint16) SessionState         { return SessionState{LoggedOn: true} }
func (fuzzSessions) Logout(uint16)                            {}
func (fuzzSessions) SetDisabled(uint16, bool)                 {}
func (fuzzSessions) ClOrdIDs(_ uint16, ids []uint64) []string { return make([]string, len(ids)) }

// fuzzOps is requestOps with a matcher and a halted pipeline behind it.
func fuzzOps(tb testing.TB) (*Ops, *fakeRisk) {
	tb.Helper()
	o := requestOps()
	acme := o.bySymbol["ACME"]
	tick, err := decimal.ParseTick(acme.TickSize)
	if err != nil {
		tb.Fatal(err)
	}
	acme.Tick = tick
	o.bySymbol["ACME"], o.cfg.Instruments = acme, []config.Instrument{acme}
	// A schedule group of every instrument, so that a phase change reaches
	// the venue, and a session, so that a session action does.
	o.cfg.Schedule = config.Schedule{Enabled: true, TimeZone: "UTC", EndOfDay: config.Duration{Duration: 22 * time.Hour},
		Groups: []config.ScheduleGroup{{Name: "main", PreOpen: config.Duration{Duration: 7 * time.Hour},
			Open: config.Duration{Duration: 8 * time.Hour}, Close: config.Duration{Duration: 16 * time.Hour}}}}
	o.plan = schedule.New(o.cfg.Schedule)
	o.cfg.Now = time.Now
	o.byCompID = map[string]Session{"C1": {Idx: 0, CompID: "C1"}}
	o.sessionMu = map[uint16]*sync.Mutex{0: {}}
	o.cfg.SessionControl = fuzzSessions{}
	m, err := core.NewMatcher(core.Config{OrdersMax: 16, ClOrdIDsMax: 16, SessionsMax: 1, InstrumentsMax: 4, Instruments: []core.InstrumentConfig{
		{ID: 1, Symbol: "ACME", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}}})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Matcher: m, CommandSlots: 16, EventSlots: 16,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	p.Halt(errFuzzHalted)
	o.cfg.Matcher, o.cfg.Pipeline = m, p
	fake := &fakeRisk{}
	o.SetRisk(fake)
	return o, fake
}

// strictObject reports whether body is what the API promises to take: one
// JSON object whose keys are the exact json names of v's fields, each
// once, with a reason of 1 to OperatorReasonLength printable ASCII
// characters, not only spaces.
func strictObject(body []byte, v any) bool {
	names := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" {
			names[name] = true
		}
	}
	var top map[string]json.RawMessage
	if !json.Valid(body) || json.Unmarshal(body, &top) != nil || top == nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok || !names[key] || seen[key] {
			return false
		}
		seen[key] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	var reason string
	if json.Unmarshal(top["reason"], &reason) != nil || strings.TrimSpace(reason) == "" || len(reason) > venue.OperatorReasonLength {
		return false
	}
	return strings.IndexFunc(reason, nonPrintable) < 0
}

// FuzzAdminBodies posts arbitrary bodies to the admin API's calls.
// Whatever the body, a handler never panics and answers a JSON error with
// a code unless it is done; only the venue's own answer (here 503
// "halted", the pipeline being halted) is a server error; and a body
// reaches the venue only if it is one JSON object of exact, distinct field
// names with a printable reason (docs/ARCHITECTURE.md, "Operations: the
// control plane and the trading day").
func FuzzAdminBodies(f *testing.F) {
	for i := range fuzzRoutes {
		f.Add(uint8(i), []byte(`{"reason":"r"}`))
	}
	f.Add(uint8(0), []byte(`{"reason":"stop","session":"C1"}`))
	f.Add(uint8(2), []byte(`{"reason":"cap","account":"F","limit":"max_position","value":7,"instrument":"ACME"}`))
	f.Add(uint8(3), []byte(`{"reason":"list","symbol":"NEWCO","tick_size":"0.05","lot_size":10,"min_qty":10,"max_qty":1000,"ref_price":"20.00","band_percent":10}`))
	f.Add(uint8(6), []byte(`{"reason":"move","ref_price":"10.50","band_percent":5}`))
	f.Add(uint8(7), []byte(`{"reason":"clean","instrument":"all","account":"F"}`))
	f.Add(uint8(7), []byte(`{"reason":"r","REASON":"s","instrument":"ACME"}`))
	f.Add(uint8(9), []byte(`{"reason":"early close","group":"main","phase":"close"}`))
	f.Add(uint8(9), []byte(`{"reason":"r","group":"main","phase":"open","instrument":"ACME"}`))
	f.Add(uint8(10), []byte(`{"reason":"r","session":"C1"}`))
	f.Add(uint8(11), []byte(`{"reason":"runaway client"}`))
	f.Add(uint8(12), []byte(`{"reason":"client asked","order_id":"17"}`))
	f.Add(uint8(12), []byte(`{"reason":"client asked","session":"C1","cl_ord_id":"abc-1"}`))
	f.Add(uint8(12), []byte(`{"reason":"r","order_id":"17","session":"C1","cl_ord_id":"x"}`))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		o, fake := fuzzOps(t)
		req := httptest.NewRequest("POST", rt.path, bytes.NewReader(body))
		req.SetPathValue("symbol", rt.symbol)
		req.SetPathValue("action", rt.action)
		req.SetPathValue("comp_id", "C1") // the session routes' (fuzzSessions)
		w := httptest.NewRecorder()
		rt.handle(o)(w, req)
		var got apiError
		if w.Code != http.StatusOK && (json.Unmarshal(w.Body.Bytes(), &got) != nil || got.Code == "" || got.Error == "") {
			t.Fatalf("%s %q: %d without a JSON error: %s", rt.path, body, w.Code, w.Body.String())
		}
		halted := w.Code == http.StatusServiceUnavailable && got.Code == "halted"
		if w.Code >= 500 && !halted {
			t.Fatalf("%s %q: %d %s", rt.path, body, w.Code, w.Body.String())
		}
		if w.Code == http.StatusOK && len(fake.calls) == 0 {
			t.Fatalf("%s %q: done without reaching the venue: %s", rt.path, body, w.Body.String())
		}
		if (halted || len(fake.calls) > 0) && !strictObject(body, rt.body) {
			t.Fatalf("%s %q reached the venue (%d %s)", rt.path, body, w.Code, w.Body.String())
		}
	})
}

// TestFuzzAdminBodiesCoversEveryPost: every POST the admin API registers
// (api.go, listen) has a route in fuzzRoutes, so that a call added to the
// API is fuzzed too (/v1/phase and the session actions were not).
func TestFuzzAdminBodiesCoversEveryPost(t *testing.T) {
	src, err := os.ReadFile("api.go")
	if err != nil {
		t.Fatal(err)
	}
	registered := regexp.MustCompile(`mux\.HandleFunc\("(POST [^"]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(registered) == 0 {
		t.Fatal("no POST route found in api.go")
	}
	mux := http.NewServeMux()
	for _, m := range registered {
		mux.HandleFunc(m[1], func(http.ResponseWriter, *http.Request) {})
	}
	fuzzed := map[string]bool{}
	for _, rt := range fuzzRoutes {
		_, pattern := mux.Handler(httptest.NewRequest("POST", rt.path, nil))
		fuzzed[pattern] = true
	}
	for _, m := range registered {
		if !fuzzed[m[1]] {
			t.Errorf("%s is not in fuzzRoutes: FuzzAdminBodies never posts to it", m[1])
		}
	}
}
