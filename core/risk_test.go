package core

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The golden scripts' risk lines (see TestGolden):
//
//	risk [s=N | acct=A] [instr=ID] [qty= notional= orders= open= credit= position= breaches= loss=]
//	    configures the limits of every session (neither s nor acct), of one
//	    session, or of an account; with instr, the instrument's overrides
//	    (qty, notional, position)
//	risk-limit [acct=A] limit=NAME value=N [instr=ID]    (s= is the session)
//	risk-kill [acct=A] | risk-reset [acct=A] | risk-report
var riskLimitNames = map[string]venue.RiskLimit{"qty": venue.RiskLimitMaxOrderQty, "notional": venue.RiskLimitMaxOrderNotional,
	"orders": venue.RiskLimitMaxOpenOrders, "open": venue.RiskLimitMaxOpenNotional, "credit": venue.RiskLimitCreditLimit,
	"position": venue.RiskLimitMaxPosition, "breaches": venue.RiskLimitKillAfterBreaches, "loss": venue.RiskLimitKillAtLoss}

func configureRisk(c *Config, a args) {
	if c.Risk == nil {
		c.Risk = &RiskConfig{}
	}
	l := &c.Risk.Sessions
	var keep func(RiskLimits)
	if acct, ok := a.get("acct"); ok {
		if c.Risk.Accounts == nil {
			c.Risk.Accounts = map[string]RiskLimits{}
		}
		v := c.Risk.Accounts[acct]
		l, keep = &v, func(v RiskLimits) { c.Risk.Accounts[acct] = v }
	} else if _, ok := a.get("s"); ok {
		if c.Risk.SessionOverrides == nil {
			c.Risk.SessionOverrides = map[uint16]RiskLimits{}
		}
		idx := uint16(a.int("s", 0))
		v, ok := c.Risk.SessionOverrides[idx]
		if !ok {
			v = c.Risk.Sessions
		}
		l, keep = &v, func(v RiskLimits) { c.Risk.SessionOverrides[idx] = v }
	}
	if _, ok := a.get("instr"); ok {
		id := uint32(a.int("instr", 0))
		if l.Instruments == nil {
			l.Instruments = map[uint32]InstrumentRiskLimits{}
		}
		il := l.Instruments[id]
		il.MaxOrderQty = int64(a.int("qty", int(il.MaxOrderQty)))
		il.MaxOrderNotional = int64(a.int("notional", int(il.MaxOrderNotional)))
		il.MaxPosition = int64(a.int("position", int(il.MaxPosition)))
		l.Instruments[id] = il
	} else {
		for name, p := range map[string]*int64{"qty": &l.MaxOrderQty, "notional": &l.MaxOrderNotional, "orders": &l.MaxOpenOrders,
			"open": &l.MaxOpenNotional, "credit": &l.CreditLimit, "position": &l.MaxPosition,
			"breaches": &l.KillAfterBreaches, "loss": &l.KillAtLoss} {
			*p = int64(a.int(name, int(*p)))
		}
	}
	if keep != nil {
		keep(*l)
	}
}

// riskCommand encodes a risk command line, or returns nil for another name.
func (s *script) riskCommand(name string, a args, session uint16) []byte {
	scope, account := venue.RiskScopeSession, a.str("acct", "")
	if account != "" {
		scope = venue.RiskScopeAccount
	}
	switch name {
	case "risk-limit":
		limit, ok := riskLimitNames[a.str("limit", "")]
		if !ok {
			limit = venue.RiskLimit(a.int("limit", 0))
		}
		return encodeRiskSetLimit(s.buf[:], s.seq, s.now, session, scope, account, limit, uint32(a.int("instr", 0)), int64(a.int("value", 0)))
	case "risk-kill":
		return encodeRiskControl(s.buf[:], s.seq, s.now, session, scope, account, venue.RiskActionKill)
	case "risk-reset":
		return encodeRiskControl(s.buf[:], s.seq, s.now, session, scope, account, venue.RiskActionReset)
	case "risk-report":
		return encodeRiskControl(s.buf[:], s.seq, s.now, session, scope, account, venue.RiskActionReport)
	}
	return nil
}

func encodeRiskSetLimit(buf []byte, seq uint64, ts int64, session uint16, scope venue.RiskScope, account string,
	limit venue.RiskLimit, instrument uint32, value int64) []byte {
	var c venue.RiskSetLimit
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	setRiskSubject(c, session, scope, account)
	c.SetLimit(limit)
	c.SetInstrumentID(instrument)
	c.SetValue(value)
	return buf[:c.EncodedLength()]
}

func encodeRiskControl(buf []byte, seq uint64, ts int64, session uint16, scope venue.RiskScope, account string, action venue.RiskAction) []byte {
	var c venue.RiskControl
	mustEncode(c.WrapEncode(buf, 0))
	stampCmd(c, seq, ts)
	setRiskSubject(c, session, scope, account)
	c.SetAction(action)
	return buf[:c.EncodedLength()]
}

// riskSubjectFields name whom RiskSetLimit and RiskControl apply to: a
// session or an account, as the scope says.
type riskSubjectFields interface {
	SetSessionIdx(uint16)
	SetScope(venue.RiskScope)
	SetAccountString(string) error
}

func setRiskSubject(c riskSubjectFields, session uint16, scope venue.RiskScope, account string) {
	c.SetSessionIdx(session)
	c.SetScope(scope)
	mustEncode(c.SetAccountString(account))
}

// riskText renders the risk events; false for other templates.
func (f *eventFormatter) riskText(b *strings.Builder, tid uint16, ev []byte) bool {
	switch tid {
	case venue.RiskBreachTemplateID:
		var e venue.RiskBreach
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(b, "risk-breach s=%d scope=%s limit=%s %s limit=%d current=%d request=%d",
			e.SessionIdx(), e.Scope(), e.Limit(), f.sym(e.InstrumentID()), e.LimitValue(), e.CurrentValue(), e.RequestValue())
		optAccount(b, e.Account())
	case venue.RiskControlResultTemplateID:
		var e venue.RiskControlResult
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(b, "risk-result s=%d scope=%s action=%s result=%s limit=%s instr=%d value=%d cancelled=%d",
			e.SessionIdx(), e.Scope(), e.Action(), e.Result(), e.Limit(), e.InstrumentID(), e.Value(), e.CancelledCount())
		optAccount(b, e.Account())
	case venue.RiskUtilisationTemplateID:
		var e venue.RiskUtilisation
		_ = e.WrapDecode(ev, 0)
		fmt.Fprintf(b, "risk-use s=%d scope=%s killed=%s credit=%d/%d position=%d/%d open=%d notional=%d breaches=%d",
			e.SessionIdx(), e.Scope(), e.Killed(), e.CreditUsed(), e.CreditLimit(), e.PositionUsed(), e.PositionLimit(),
			e.OpenOrders(), e.OpenNotional(), e.Breaches())
		optAccount(b, e.Account())
	default:
		return false
	}
	return true
}

// workloadRisk is the risk configuration of the benchmark workload: none,
// unless FIXVENUE_BENCH_RISK is set (make bench-instr measures both) or a
// test sets riskEverywhere. Then every session has every limit, so high
// that nothing is refused: each check runs and passes.
func workloadRisk() *RiskConfig {
	if !riskEverywhere && os.Getenv("FIXVENUE_BENCH_RISK") == "" {
		return nil
	}
	const high = 1 << 60
	return &RiskConfig{Sessions: RiskLimits{MaxOrderQty: high, MaxOrderNotional: high, MaxOpenOrders: high,
		MaxOpenNotional: high, CreditLimit: high, MaxPosition: high, KillAfterBreaches: high, KillAtLoss: high}}
}

var riskEverywhere bool

// TestApplyDoesNotAllocateWithRisk runs the allocation test with limits on
// every session, then the risk commands.
func TestApplyDoesNotAllocateWithRisk(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	riskEverywhere = true
	defer func() { riskEverywhere = false }()
	TestApplyDoesNotAllocate(t)
	w := newWorkload(t, 10)
	var buf [cmdSlotSize]byte
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"set limit", func() {
			w.apply(t, encodeRiskSetLimit(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskLimitMaxOrderQty, 0, 1<<40))
		}},
		{"kill and reset", func() {
			w.apply(t, encodeRiskControl(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskActionKill))
			w.apply(t, encodeRiskControl(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskActionReset))
		}},
		{"report", func() { w.apply(t, encodeRiskControl(buf[:], 0, 0, 0, 0, "", venue.RiskActionReport)) }},
	} {
		c.run()
		if allocs := testing.AllocsPerRun(100, c.run); allocs != 0 {
			t.Errorf("%s: %v allocations per run", c.name, allocs)
		}
	}
}

// TestRiskSnapshotRefusesOtherRiskConfig: a snapshot holds each session's
// and account's figures by position, so a venue configured with other
// accounts (or without risk) refuses it instead of mixing them up, and a
// venue with the same configuration restores the limits changed at runtime.
func TestRiskSnapshotRefusesOtherRiskConfig(t *testing.T) {
	cfg := propertyConfigs()[2]
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(4)
	if err := m.Apply(encodeRiskSetLimit(buf[:], 1, 1, 0, venue.RiskScopeAccount, "A", venue.RiskLimitCreditLimit, 0, 123), sink); err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, m)
	more, renamed := cfg, cfg
	more.Risk = &RiskConfig{Accounts: map[string]RiskLimits{"A": {}, "B": {}, "Z": {}}}
	renamed.Risk = &RiskConfig{Accounts: map[string]RiskLimits{"A": {}, "C": {}}}
	for name, c := range map[string]Config{"more accounts": more, "other accounts": renamed, "no risk": propertyConfigs()[0]} {
		o, err := NewMatcher(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.ReadSnapshot(bytes.NewReader(snap)); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), "risk") {
			t.Errorf("%s: %v, want a risk mismatch", name, err)
		}
	}
	same, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := same.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	subj, _ := same.risk.accounts.lookup(&[venue.AccountLength]byte{'A'})
	if got := same.risk.subjects[subj].creditLimit; got != 123 {
		t.Fatalf("restored credit limit %d, want 123", got)
	}
}

// TestRiskLimitsNow: the view of limits follows the configuration, a
// runtime change (subject-wide and per instrument) and the kill switch.
func TestRiskLimitsNow(t *testing.T) {
	riskEverywhere = true
	defer func() { riskEverywhere = false }()
	w := newWorkload(t, 10)
	var buf [cmdSlotSize]byte
	w.apply(t, encodeRiskSetLimit(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskLimitCreditLimit, 0, 5000))
	w.apply(t, encodeRiskSetLimit(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskLimitMaxPosition, workloadInstrument, 70))
	w.apply(t, encodeRiskControl(buf[:], 0, 0, 3, venue.RiskScopeSession, "", venue.RiskActionKill))
	list := w.m.RiskLimitsNow()
	var got *RiskSubjectLimits
	for i := range list {
		if list[i].Scope == venue.RiskScopeSession && list[i].Session == 3 {
			got = &list[i]
		}
	}
	if got == nil {
		t.Fatalf("session 3 missing from %+v", list)
	}
	if !got.Killed || got.Limits[venue.RiskLimitCreditLimit] != 5000 || got.Limits[venue.RiskLimitMaxOrderQty] != 1<<60 ||
		got.Instruments[workloadInstrument][venue.RiskLimitMaxPosition] != 70 || len(got.Instruments[workloadInstrument]) != 1 {
		t.Fatalf("session 3: %+v", *got)
	}
	if list[0].Killed || list[0].Limits[venue.RiskLimitCreditLimit] != 1<<60 || list[0].Instruments != nil {
		t.Fatalf("session 0: %+v", list[0])
	}
}

// TestRiskCommandsFromBeforeOperatorFields: a journal written before the
// risk commands carried an operator and a reason replays (their shorter
// block is widened), and a block shorter than that is still refused.
func TestRiskCommandsFromBeforeOperatorFields(t *testing.T) {
	cfg := propertyConfigs()[2]
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := func(cmd []byte, block int) []byte {
		b := append([]byte(nil), cmd[:venue.MessageHeaderSize+block]...)
		b[0], b[1] = byte(block), byte(block>>8)
		return b
	}
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(4)
	limit := old(encodeRiskSetLimit(buf[:], 1, 1, 0, venue.RiskScopeAccount, "A", venue.RiskLimitCreditLimit, 0, 321), riskSetLimitBlockBefore)
	if err := m.Apply(limit, sink); err != nil {
		t.Fatalf("an older RiskSetLimit: %v", err)
	}
	var r venue.RiskControlResult
	if err := r.WrapDecode(sink.Event(0), 0); err != nil || r.Result() != venue.RiskResultApplied {
		t.Fatalf("an older RiskSetLimit: %v %s", err, r.String())
	}
	if subj, _ := m.risk.accounts.lookup(&[venue.AccountLength]byte{'A'}); m.risk.subjects[subj].creditLimit != 321 {
		t.Fatal("the older RiskSetLimit did not change the limit")
	}
	sink.Reset()
	kill := old(encodeRiskControl(buf[:], 2, 2, 0, venue.RiskScopeAccount, "A", venue.RiskActionKill), riskControlBlockBefore)
	if err := m.Apply(kill, sink); err != nil {
		t.Fatalf("an older RiskControl: %v", err)
	}
	if err := r.WrapDecode(sink.Event(sink.Len()-1), 0); err != nil || r.Result() != venue.RiskResultApplied || r.Action() != venue.RiskActionKill {
		t.Fatalf("an older RiskControl: %v %s", err, r.String())
	}
	if err := m.Apply(old(kill, riskControlBlockBefore-1), sink); err == nil {
		t.Fatal("a block shorter than any RiskControl's was applied")
	}
}

// TestRiskCellsCountedForTheInstrumentsTheTableHolds: NewMatcher refuses
// risk whose cells, made for InstrumentsMax instruments, pass
// RiskCellsMax; it counted the configured instruments alone, and 64
// sessions with room for 65,535 instruments made 268 MB of cells.
func TestRiskCellsCountedForTheInstrumentsTheTableHolds(t *testing.T) {
	cfg := func(instrumentsMax int) Config {
		return Config{OrdersMax: 16, ClOrdIDsMax: 1024, SessionsMax: 64, InstrumentsMax: instrumentsMax,
			Instruments: []InstrumentConfig{{ID: 1, Symbol: "A", TickSize: "0.01", LotSize: 1, MinQty: 1, MaxQty: 100, RefPriceTicks: 1000, BandPercent: 10}},
			Risk:        &RiskConfig{}}
	}
	if _, err := NewMatcher(cfg(65535)); err == nil || !strings.Contains(err.Error(), "risk needs 64 sessions and accounts × 65535 instruments cells, at most 1048576") {
		t.Fatalf("64 sessions × 65,535 instruments: %v", err)
	}
	if _, err := NewMatcher(cfg(RiskCellsMax / 64)); err != nil {
		t.Fatalf("64 sessions × %d instruments: %v", RiskCellsMax/64, err)
	}
}
