package ops

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/gateway"
)

// fakeRisk records the calls that pass the admin API's own checks.
type fakeRisk struct{ calls []RiskRequest }

func (f *fakeRisk) RiskCommand(q RiskRequest) (RiskAnswer, error) {
	f.calls = append(f.calls, q)
	return RiskAnswer{RiskResult: gateway.RiskResult{Seq: 1, Action: q.Action, Result: "Applied"}, Operator: q.Operator}, nil
}

func (f *fakeRisk) RiskSubjects() []RiskSubject { return nil }

func (f *fakeRisk) KilledSessions() map[string]bool { return nil }

func requestOps() *Ops {
	acme := config.Instrument{ID: 1, Symbol: "ACME", TickSize: "0.01"}
	return &Ops{cfg: Config{Admin: config.Admin{BodyBytesMax: 512}, Instruments: []config.Instrument{acme}},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), bySymbol: map[string]config.Instrument{"ACME": acme},
		monitor: newMonitor(nil)}
}

// TestRiskRequestValidation: each malformed POST /v1/risk/{action} is
// refused with its status and code before it reaches the venue; a good one
// reaches it with the operator and reason.
func TestRiskRequestValidation(t *testing.T) {
	long := strings.Repeat("r", 65)
	for _, c := range []struct {
		action, body string
		status       int
		code         string
	}{
		{"limit", `{`, 400, "bad_json"},
		{"limit", `{"reason":"r","session":"C1","extra":1}`, 400, "bad_json"},
		{"kill", `{"reason":"r","Session":"C1"}`, 400, "bad_json"},                // encoding/json alone matches names without case
		{"kill", `{"reason":"r","session":"C1","session":"C2"}`, 400, "bad_json"}, // and keeps the last of a repeated key
		{"limit", `{"reason":"r","session":"C1"}{"reason":"r"}`, 400, "bad_json"},
		{"kill", `{"reason":"r","session":"C1"}]`, 400, "bad_json"}, // after the object: json.Decoder.More says nothing follows
		{"kill", `{"reason":"r","session":"C1"}}`, 400, "bad_json"},
		{"limit", `{"reason":"r","session":"C1","value":"5"}`, 400, "bad_json"},
		{"limit", `{"reason":"r","session":"C1","value":1.5}`, 400, "bad_json"},
		{"limit", `{"reason":"r","session":"C1","value":99999999999999999999}`, 400, "bad_json"},
		{"kill", `{"session":"C1"}`, 400, "no_reason"},
		{"kill", `{"reason":"  ","session":"C1"}`, 400, "no_reason"},
		{"kill", `{"reason":"tab\there","session":"C1"}`, 400, "no_reason"},
		{"kill", `{"reason":"` + long + `","session":"C1"}`, 400, "bad_reason"},
		{"kill", `{"reason":"r"}`, 400, "bad_subject"},
		{"kill", `{"reason":"r","session":"C1","account":"F"}`, 400, "bad_subject"},
		{"kill", `{"reason":"r","session":"C1","limit":"max_order_qty"}`, 400, "bad_body"},
		{"reset", `{"reason":"r","session":"C1","value":-5}`, 400, "bad_body"},
		{"reset", `{"reason":"r","session":"C1","instrument":"ACME"}`, 400, "bad_body"},
		{"kill", `{"reason":"r","session":"C1","value":0}`, 400, "bad_body"},
		{"limit", `{"reason":"r","session":"C1","limit":"max_order_qty"}`, 400, "no_value"}, // was "value 0 must be…"
		{"limit", `{"reason":"r","session":"C1","value":5}`, 400, "no_limit"},               // was unknown limit ""
		{"explode", `{"reason":"r","session":"C1"}`, 404, "unknown_action"},
		{"kill", `{"reason":"` + strings.Repeat("x", 600) + `","session":"C1"}`, 413, "body_too_large"},
	} {
		o, fake := requestOps(), &fakeRisk{}
		o.SetRisk(fake)
		req := httptest.NewRequest("POST", "/v1/risk/"+c.action, strings.NewReader(c.body))
		req.SetPathValue("action", c.action)
		w := httptest.NewRecorder()
		o.handleRiskAction(w, req)
		var got apiError
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != c.status || got.Code != c.code || got.Error == "" {
			t.Errorf("%s %s: %d %s, want %d %s", c.action, c.body, w.Code, w.Body.String(), c.status, c.code)
		}
		if len(fake.calls) != 0 {
			t.Errorf("%s %s: a refused request reached the venue: %+v", c.action, c.body, fake.calls)
		}
	}
	o, fake := requestOps(), &fakeRisk{}
	o.SetRisk(fake)
	req := httptest.NewRequest("POST", "/v1/risk/limit", strings.NewReader(`{"reason":"cap","account":"F","limit":"max_position","value":7,"instrument":"ACME"}`))
	req.SetPathValue("action", "limit")
	w := httptest.NewRecorder()
	o.handleRiskAction(w, req)
	if w.Code != 200 || len(fake.calls) != 1 {
		t.Fatalf("a good limit call: %d %s, %d calls", w.Code, w.Body.String(), len(fake.calls))
	}
	if q := fake.calls[0]; q.Action != "limit" || q.Reason != "cap" || q.Account != "F" || q.Limit != "max_position" || q.Value == nil || *q.Value != 7 || q.Instrument != "ACME" {
		t.Fatalf("the venue got %+v", q)
	}
	o = requestOps()
	req = httptest.NewRequest("POST", "/v1/risk/kill", strings.NewReader(`{"reason":"r","session":"C1"}`))
	req.SetPathValue("action", "kill")
	w = httptest.NewRecorder()
	o.handleRiskAction(w, req)
	if w.Code != 404 || !strings.Contains(w.Body.String(), "no_risk") {
		t.Fatalf("risk off: %d %s", w.Code, w.Body.String())
	}
}

// TestAddInstrumentRequestValidation: each malformed POST /v1/instruments
// is refused with its status and code before anything is journaled (the
// Ops has no pipeline: reaching it would panic).
func TestAddInstrumentRequestValidation(t *testing.T) {
	good := `"reason":"list","symbol":"NEWCO","tick_size":"0.05","lot_size":10,"min_qty":10,"max_qty":1000,"ref_price":"20.00","band_percent":10`
	// with gives good with one field's value replaced (or added) by extra,
	// `,"name":value`; other text goes after the fields as it is.
	with := func(extra string) string {
		name, value, ok := strings.Cut(strings.TrimPrefix(extra, `,`), `:`)
		if !strings.HasPrefix(extra, `,"`) || !ok {
			return `{` + good + extra + `}`
		}
		var fields []string
		replaced := false
		for _, f := range strings.Split(good, `,"`) {
			f = `"` + strings.TrimPrefix(f, `"`)
			if strings.HasPrefix(f, name+`:`) {
				f, replaced = name+`:`+value, true
			}
			fields = append(fields, f)
		}
		if !replaced {
			fields = append(fields, name+`:`+value)
		}
		return `{` + strings.Join(fields, `,`) + `}`
	}
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{`, 400, "bad_json"},
		{with(`,"extra":1`), 400, "bad_json"},
		{with(`,"SYMBOL":"NEWCO"`), 400, "bad_json"},
		{`{` + good + `,"symbol":"OTHER"}`, 400, "bad_json"},
		{with(`,"lot_size":"10"`), 400, "bad_json"},
		{with(`,"id":-1`), 400, "bad_json"},
		{with(`,"reason":""`), 400, "no_reason"},
		{with(`,"reason":"` + strings.Repeat("r", 65) + `"`), 400, "bad_reason"},
		{with(`,"symbol":""`), 400, "bad_symbol"},
		{with(`,"symbol":"A B"`), 400, "bad_symbol"},
		{with(`,"symbol":"all"`), 400, "bad_symbol"},
		{with(`,"symbol":"ALL"`), 400, "bad_symbol"}, // FIX's TradingSessionID for every instrument
		{with(`,"symbol":"."`), 400, "bad_symbol"},   // a browser's current path: no URL names it
		{with(`,"symbol":".."`), 400, "bad_symbol"},  // a browser's parent path
		{with(`}`), 400, "bad_json"},
		{with(`,"tick_size":"-0.05"`), 400, "bad_tick_size"},
		{with(`,"tick_size":"0"`), 400, "bad_tick_size"},
		{with(`,"ref_price":"-20.00"`), 400, "bad_price"},
		{with(`,"ref_price":"20.01"`), 400, "bad_price"},
		{with(`,"lot_size":-10`), 400, "bad_quantity"},
		{with(`,"min_qty":-10`), 400, "bad_quantity"},
		{with(`,"max_qty":5`), 400, "bad_quantity"},
		{with(`,"min_qty":15`), 400, "bad_quantity"},
		{with(`,"max_qty":1005`), 400, "bad_quantity"},
		{with(`,"band_percent":-1`), 400, "bad_band"},
		{with(`,"band_percent":100`), 400, "bad_band"},
		{with(`,"status":"sleepy"`), 400, "bad_status"},
		{with(`,"group":"late"`), 400, "unknown_group"},
		{with(`,"symbol":"ACME"`), 409, "duplicate_instrument"},
		{with(`,"id":1`), 409, "duplicate_instrument"},
	} {
		o := requestOps()
		w := httptest.NewRecorder()
		o.handleAddInstrument(w, httptest.NewRequest("POST", "/v1/instruments", strings.NewReader(c.body)))
		var got apiError
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != c.status || got.Code != c.code || got.Error == "" {
			t.Errorf("%s: %d %s, want %d %s", c.body, w.Code, w.Body.String(), c.status, c.code)
		}
	}
}

// TestAddInstrumentTickScaleRefusal: a tick size with more fractional
// digits than prices carry (decimal.MaxScale) is refused naming that bound,
// not another one (README, "Adding an instrument").
func TestAddInstrumentTickScaleRefusal(t *testing.T) {
	for _, tick := range []string{"0.0000000001", "0.000000000000000001"} {
		o := requestOps()
		w := httptest.NewRecorder()
		body := `{"reason":"list","symbol":"FINE","tick_size":"` + tick + `","lot_size":1,"min_qty":1,"max_qty":10,"ref_price":"1","band_percent":10}`
		o.handleAddInstrument(w, httptest.NewRequest("POST", "/v1/instruments", strings.NewReader(body)))
		var got apiError
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 400 || got.Code != "bad_tick_size" {
			t.Fatalf("tick %s: %d %s, want 400 bad_tick_size", tick, w.Code, w.Body.String())
		}
		if want := fmt.Sprintf("at most %d decimal places", decimal.MaxScale); !strings.Contains(got.Error, want) {
			t.Errorf("tick %s: %q does not say %q", tick, got.Error, want)
		}
	}
}
