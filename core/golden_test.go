package core

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

var update = flag.Bool("update", false, "rewrite the expected output of core/testdata/*.txt")

// TestGolden runs the scripts in testdata/*.txt. A script is a list of cases
// separated by blank lines; a case is one or more command lines, a line
// "----", and the expected output: the events the commands produced, one per
// line, then the books of the instruments those events touched. With -update
// the expected output is rewritten from what the matcher does now; review
// the diff before committing it.
//
// Configuration lines (config, instrument, stp) start a new matcher. Command
// lines:
//
//	new s=1 id=b1 side=buy px=99.00 qty=10 [type=market|stop|stoplimit] [stop=99.50] [floor=N] [tif=day|gtc|opening|ioc|fok|gtd|close] [exp=NS]
//	    [acct=A] [stp=default|resting|aggressor|both|none] [post] [resend] [flags=N] [instr=SYM|ID] [pxt=TICKS]
//	cancel s=1 id=x1 orig=b1 [order=N] [side=] [instr=] [checks=N (CancelMatchesOrder 1, CancelRemembersClOrdID 2)]
//	replace s=1 id=b2 orig=b1 px= qty= [stop=] [floor=] [order=N] [side=] [type=] [tif=] [exp=] [acct=] [instr=] [flags=N]
//	mass-cancel s=1 id=m1 [fs=N] [instr=] [side=] [acct=] [type=N]
//	status s=1 id=b1 [order=N] [side=] [instr=] [checks=N (StatusMatchesOrder 1)]
//	disconnect s=1 [cod=false]
//	trading-status instr=ACME status=open|halted|closed|N
//	phase|operator-status instr=ACME status=opening-call|open|closing-call|closed|N [old=true]
//	    (an OperatorCommand SetPhaseStatus or SetTradingStatus as this build writes it; old=true: an earlier build's record)
//	eod | tick | snapshot-cmd | snapshot-restore | book [instr=] | garbage hex=...
//
// Every command may set t=NS (the clock; otherwise it advances by 1 per
// command) and s= (the session, default 1). Sides, types, time in force and
// STP modes also accept raw numbers, to send invalid values.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScriptFile(t, file) })
	}
}

func runScriptFile(t *testing.T, file string) {
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := &script{t: t, file: file}
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			i++
			continue
		}
		start := i
		var cmds []string
		for i < len(lines) && lines[i] != "----" {
			if strings.TrimSpace(lines[i]) == "" {
				t.Fatalf("%s:%d: case without ----", file, start+1)
			}
			cmds = append(cmds, lines[i])
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: case without ----", file, start+1)
		}
		i++ // ----
		var want []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			want = append(want, lines[i])
			i++
		}
		got := s.runCase(cmds, start+1)
		for _, c := range cmds {
			out.WriteString(c + "\n")
		}
		out.WriteString("----\n" + got)
		if !*update && got != strings.Join(want, "\n")+"\n" {
			t.Errorf("%s:%d: %s\n--- got\n%s--- want\n%s\n", file, start+1, strings.Join(cmds, "\n"), got, strings.Join(want, "\n"))
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// script is the state of one script file.
type script struct {
	t       *testing.T
	file    string
	cfg     Config
	m       *Matcher
	f       *eventFormatter
	sink    *BufferSink
	seq     uint64
	now     int64
	buf     [cmdSlotSize]byte
	orders  map[string]*scriptOrder // session/ClOrdID → what was sent, for replace defaults
	pending *Config                 // configuration being read
}

type scriptOrder struct {
	side       venue.Side
	ordType    venue.OrdType
	maxFloor   int64
	instrument uint32
	tif        venue.TimeInForce
	expireNs   int64
}

func (s *script) runCase(cmds []string, lineNo int) string {
	var out strings.Builder
	touched := map[uint32]bool{}
	configuring := false
	for _, line := range cmds {
		name, args, err := parseArgs(line)
		if err != nil {
			s.t.Fatalf("%s:%d: %v", s.file, lineNo, err)
		}
		switch name {
		case "config", "instrument", "stp", "risk":
			if !configuring {
				s.pending = &Config{OrdersMax: 64, ClOrdIDsMax: 256, SessionsMax: 8}
				configuring = true
			}
			if err := s.configure(name, args); err != nil {
				s.t.Fatalf("%s:%d: %v", s.file, lineNo, err)
			}
			continue
		}
		if s.m == nil {
			s.t.Fatalf("%s:%d: command before any configuration", s.file, lineNo)
		}
		if err := s.command(name, args, &out, touched); err != nil {
			s.t.Fatalf("%s:%d: %v", s.file, lineNo, err)
		}
		if err := args.unused(); err != nil {
			s.t.Fatalf("%s:%d: %v", s.file, lineNo, err)
		}
	}
	if configuring {
		m, err := NewMatcher(*s.pending)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		s.cfg, s.m = *s.pending, m
		s.f = newEventFormatter(s.cfg.Instruments)
		s.sink = NewBufferSink(16)
		s.seq, s.now = 0, 1000
		s.orders = map[string]*scriptOrder{}
		return "ok\n"
	}
	ids := make([]uint32, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		s.printBook(&out, id)
	}
	if out.Len() == 0 {
		return "no events\n"
	}
	return out.String()
}

func (s *script) configure(name string, a args) error {
	c := s.pending
	switch name {
	case "config":
		c.OrdersMax = a.int("orders", c.OrdersMax)
		c.ClOrdIDsMax = a.int("clordids", c.ClOrdIDsMax)
		c.SessionsMax = a.int("sessions", c.SessionsMax)
		c.LevelsPerSideMax = a.int("levels", 0)
		c.StopsMax = a.int("stops", 0)
		c.IndicativeIntervalNs = int64(a.int("indicative", 0))
	case "instrument":
		tick, err := decimal.ParseTick(a.str("tick", "0.01"))
		if err != nil {
			return err
		}
		ref, err := decimal.ParseTicks([]byte(a.str("ref", "100.00")), tick)
		if err != nil {
			return err
		}
		status := venue.TradingStatus(0)
		if st, ok := a.get("status"); ok {
			status = parseTradingStatus(st)
		}
		c.Instruments = append(c.Instruments, InstrumentConfig{
			ID: uint32(a.int("id", len(c.Instruments)+1)), Symbol: a.str("sym", "ACME"),
			TickSize: a.str("tick", "0.01"), LotSize: int64(a.int("lot", 1)),
			MinQty: int64(a.int("min", 1)), MaxQty: int64(a.int("max", 1000)),
			RefPriceTicks: ref, BandPercent: int64(a.int("band", 10)), Status: status,
			VolatilityBandTicks: int64(a.int("volband", 0)), VolatilityAuctionNs: int64(a.int("volauction", 0)),
			CallExtension: a.str("extend", "false") == "true",
		})
	case "stp":
		if c.AccountStpModes == nil {
			c.AccountStpModes = map[string]venue.StpMode{}
		}
		c.AccountStpModes[a.str("acct", "")] = parseStp(a.str("mode", "resting"))
	case "risk":
		configureRisk(c, a)
	}
	return a.unused()
}

// instrument resolves instr= (a symbol or a raw id), defaulting to the first.
func (s *script) instrument(a args) uint32 {
	v, ok := a.get("instr")
	if !ok {
		return s.cfg.Instruments[0].ID
	}
	for _, in := range s.cfg.Instruments {
		if in.Symbol == v {
			return in.ID
		}
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		s.t.Fatalf("instr=%s is neither a symbol nor a number", v)
	}
	return uint32(n)
}

// price reads px= (a decimal of the instrument's tick) or pxt= (raw ticks).
func (s *script) price(a args, instrument uint32, def int64) int64 {
	if v, ok := a.get("pxt"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.t.Fatal(err)
		}
		return n
	}
	v, ok := a.get("px")
	if !ok {
		return def
	}
	tick, ok := s.f.ticks[instrument]
	if !ok {
		tick = decimal.Tick{Mantissa: 1, Scale: 2}
	}
	n, err := decimal.ParseTicks([]byte(v), tick)
	if err != nil {
		s.t.Fatalf("px=%s: %v", v, err)
	}
	return n
}

// decimalArg reads key= as a decimal of the instrument's tick, 0 when absent.
func (s *script) decimalArg(a args, key string, instrument uint32) int64 {
	v, ok := a.get(key)
	if !ok {
		return 0
	}
	n, err := decimal.ParseTicks([]byte(v), s.f.ticks[instrument])
	if err != nil {
		s.t.Fatalf("%s=%s: %v", key, v, err)
	}
	return n
}

func (s *script) command(name string, a args, out *strings.Builder, touched map[uint32]bool) error {
	if v, ok := a.get("t"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		s.now = n
	} else {
		s.now++
	}
	s.seq++
	session := uint16(a.int("s", 1))
	var cmd []byte
	switch name {
	case "new":
		cmd = s.newOrder(a, session)
	case "cancel":
		known := s.orders[orderKey(session, a.str("orig", ""))]
		ca := orderRefArgs{seq: s.seq, ts: s.now, session: session, clOrdID: a.str("id", ""),
			origClOrdID: a.str("orig", ""), orderID: uint64(a.int("order", 0)), checks: uint8(a.int("checks", 0))}
		ca.side, ca.instrument = venue.SideBuy, s.cfg.Instruments[0].ID
		if known != nil {
			ca.side, ca.instrument = known.side, known.instrument
		}
		if _, ok := a.get("side"); ok {
			ca.side = parseSide(a.str("side", ""))
		}
		if _, ok := a.get("instr"); ok {
			ca.instrument = s.instrument(a)
		}
		cmd = encodeCancel(s.buf[:], &ca)
	case "replace":
		cmd = s.replace(a, session)
	case "mass-cancel":
		ma := massCancelArgs{seq: s.seq, ts: s.now, session: session, filterSession: uint16(a.int("fs", massCancelAnySession)),
			clOrdID: a.str("id", ""), account: a.str("acct", ""), requestType: uint8(a.int("type", 7))}
		if _, ok := a.get("instr"); ok {
			ma.instrument = s.instrument(a)
		}
		if v, ok := a.get("side"); ok {
			ma.side = uint8(parseSide(v))
		}
		cmd = encodeMassCancel(s.buf[:], &ma)
	case "status":
		sa := orderRefArgs{seq: s.seq, ts: s.now, session: session, clOrdID: a.str("id", ""), orderID: uint64(a.int("order", 0)),
			side: parseSide(a.str("side", "buy")), instrument: s.instrument(a), checks: uint8(a.int("checks", 0))}
		cmd = encodeStatus(s.buf[:], &sa)
	case "disconnect":
		cmd = encodeDisconnect(s.buf[:], s.seq, s.now, session, a.str("cod", "true") == "true")
	case "trading-status":
		cmd = encodeTradingStatus(s.buf[:], s.seq, s.now, s.instrument(a), parseTradingStatus(a.str("status", "open")))
	case "eod":
		cmd = encodeEndOfDay(s.buf[:], s.seq, s.now)
	case "phase", "operator-status":
		// The schedule's phase change, or an operator's for a group; an
		// operator's status for an instrument. As this build's control plane
		// writes them, or with old=true as an earlier build's record.
		oa := operatorArgs{seq: s.seq, ts: s.now, action: venue.OperatorActionTypeSetPhaseStatus,
			status: parseTradingStatus(a.str("status", "open")), instrument: s.instrument(a),
			flags: venue.OperatorFlagsUncrossBetweenCalls, old: a.str("old", "false") == "true"}
		if name == "operator-status" {
			oa.action = venue.OperatorActionTypeSetTradingStatus
		}
		cmd = encodeOperator(s.buf[:], oa)
	case "operator-cancel": // an operator's cancel of one order: by order= (in any session, or fs=), or by id= in session s=
		fs := uint16(a.int("fs", massCancelAnySession))
		if _, byID := a.get("id"); byID {
			fs = session
		}
		cmd = encodeOperatorCancel(s.buf[:], s.seq, s.now, fs, uint64(a.int("order", 0)), a.str("id", ""))
	case "tick":
		cmd = encodeTick(s.buf[:], s.seq, s.now)
	case "snapshot-cmd":
		cmd = encodeSnapshotCmd(s.buf[:], s.seq, s.now, uint64(a.int("id", 1)))
	case "garbage":
		raw, err := hex.DecodeString(a.str("hex", ""))
		if err != nil {
			return err
		}
		cmd = raw
	case "snapshot-restore":
		s.seq--
		return s.snapshotRestore(out)
	case "book":
		s.seq--
		touched[s.instrument(a)] = true
		return nil
	default:
		if cmd = s.riskCommand(name, a, session); cmd == nil {
			return fmt.Errorf("unknown command %q", name)
		}
	}
	return s.apply(cmd, out, touched)
}

// apply runs one command, checks the event envelope and the invariants, and
// prints the events.
func (s *script) apply(cmd []byte, out *strings.Builder, touched map[uint32]bool) error {
	s.sink.Reset()
	if err := s.m.Apply(cmd, s.sink); err != nil {
		if s.sink.Len() != 0 {
			return fmt.Errorf("Apply failed with %v but wrote %d events", err, s.sink.Len())
		}
		fmt.Fprintf(out, "error: %v\n", err)
		return nil
	}
	for _, ev := range s.sink.All() {
		causeSeq, ts := eventCause(ev)
		if causeSeq != s.seq || ts != s.now {
			return fmt.Errorf("event %q has causeSeq %d ts %d, want %d %d", s.f.text(ev), causeSeq, ts, s.seq, s.now)
		}
		out.WriteString(s.f.text(ev) + "\n")
		if id := eventInstrument(ev); id != 0 {
			touched[id] = true
		}
		s.rememberOrder(ev)
	}
	return s.m.CheckInvariants()
}

// rememberOrder notes what an accepted order or replace looks like, so that
// later replace and cancel lines only need to name what changes.
func (s *script) rememberOrder(ev []byte) {
	tid, _ := venue.TemplateIDOf(ev, 0)
	switch tid {
	case venue.OrderAcceptedTemplateID:
		var e venue.OrderAccepted
		_ = e.WrapDecode(ev, 0)
		s.orders[orderKey(e.SessionIdx(), string(e.ClOrdID()))] = &scriptOrder{
			side: e.Side(), ordType: e.OrdType(), maxFloor: e.MaxFloorQty(), instrument: e.InstrumentID(), tif: e.TimeInForce(), expireNs: e.ExpireTimeNs()}
	case venue.OrderReplacedTemplateID:
		var e venue.OrderReplaced
		_ = e.WrapDecode(ev, 0)
		s.orders[orderKey(e.SessionIdx(), string(e.ClOrdID()))] = &scriptOrder{
			side: e.Side(), ordType: e.OrdType(), maxFloor: e.MaxFloorQty(), instrument: e.InstrumentID(), tif: e.TimeInForce(), expireNs: e.ExpireTimeNs()}
	}
}

func (s *script) newOrder(a args, session uint16) []byte {
	instrument := s.instrument(a)
	na := orderArgs{seq: s.seq, ts: s.now, session: session, instrument: instrument,
		side: parseSide(a.str("side", "buy")), ordType: parseOrdType(a.str("type", "limit")),
		tif: parseTIF(a.str("tif", "day")), stp: parseStp(a.str("stp", "default")),
		qty: int64(a.int("qty", 1)), expireNs: int64(a.int("exp", 0)),
		clOrdID: a.str("id", ""), account: a.str("acct", "")}
	na.px = s.price(a, instrument, 0)
	na.stopPx = s.decimalArg(a, "stop", instrument)
	na.maxFloor = int64(a.int("floor", 0))
	na.flags = venue.OrderFlags(a.int("flags", 0))
	if a.flag("post") {
		na.flags |= venue.OrderFlagsPostOnly
	}
	if a.flag("resend") {
		na.flags |= venue.OrderFlagsPossResend
	}
	return encodeNewOrder(s.buf[:], &na)
}

func (s *script) replace(a args, session uint16) []byte {
	orig := a.str("orig", "")
	known := s.orders[orderKey(session, orig)]
	if known == nil {
		known = &scriptOrder{side: venue.SideBuy, instrument: s.cfg.Instruments[0].ID}
	}
	ra := orderArgs{seq: s.seq, ts: s.now, session: session, side: known.side, ordType: venue.OrdTypeLimit,
		instrument: known.instrument, tif: known.tif, orderID: uint64(a.int("order", 0)),
		qty: int64(a.int("qty", 1)), expireNs: int64(a.int("exp", int(known.expireNs))),
		clOrdID: a.str("id", ""), origClOrdID: orig, account: a.str("acct", ""), replaceFlags: uint8(a.int("flags", 0))}
	if v, ok := a.get("side"); ok {
		ra.side = parseSide(v)
	}
	if IsStop(known.ordType) {
		ra.ordType = known.ordType
	}
	if v, ok := a.get("type"); ok {
		ra.ordType = parseOrdType(v)
	}
	ra.stopPx = s.decimalArg(a, "stop", ra.instrument)
	ra.maxFloor = int64(a.int("floor", int(known.maxFloor)))
	if v, ok := a.get("tif"); ok {
		ra.tif = parseTIF(v)
	}
	if _, ok := a.get("instr"); ok {
		ra.instrument = s.instrument(a)
	}
	ra.px = s.price(a, ra.instrument, 0)
	return encodeReplace(s.buf[:], &ra)
}

// snapshotRestore writes a snapshot, loads it into a fresh matcher and goes
// on with that one: the rest of the script then checks the restored state.
func (s *script) snapshotRestore(out *strings.Builder) error {
	var snap bytes.Buffer
	if err := s.m.WriteSnapshot(&snap); err != nil {
		return err
	}
	fresh, err := NewMatcher(s.cfg)
	if err != nil {
		return err
	}
	if err := fresh.ReadSnapshot(bytes.NewReader(snap.Bytes())); err != nil {
		return err
	}
	if err := fresh.CheckInvariants(); err != nil {
		return err
	}
	var again bytes.Buffer
	if err := fresh.WriteSnapshot(&again); err != nil {
		return err
	}
	if !bytes.Equal(snap.Bytes(), again.Bytes()) {
		return errors.New("a restored matcher writes a different snapshot")
	}
	s.m = fresh
	fmt.Fprintf(out, "restored %d resting orders\n", fresh.RestingOrders())
	return nil
}

func (s *script) printBook(out *strings.Builder, instrument uint32) {
	sym := s.f.sym(instrument)
	empty := true
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		name := "bid"
		if side == venue.SideSell {
			name = "ask"
		}
		orders := s.m.BookOrders(instrument, side, nil)
		for i := 0; i < len(orders); {
			px := orders[i].PriceTicks
			var qty int64
			var ids []string
			for ; i < len(orders) && orders[i].PriceTicks == px; i++ {
				o := orders[i]
				qty += o.LeavesQty
				id := o.ClOrdID
				if o.SessionIdx != 1 {
					id = fmt.Sprintf("s%d:%s", o.SessionIdx, id)
				}
				if o.MaxFloorQty != 0 {
					id += fmt.Sprintf("(shows %d)", o.DisplayQty)
				}
				ids = append(ids, fmt.Sprintf("%s=%d", id, o.LeavesQty))
			}
			fmt.Fprintf(out, "book %s %s %s qty=%d [%s]\n", sym, name, s.f.px(instrument, px), qty, strings.Join(ids, " "))
			empty = false
		}
	}
	if empty {
		fmt.Fprintf(out, "book %s empty\n", sym)
	}
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		for _, o := range s.m.AuctionMarketOrders(instrument, side, nil) {
			fmt.Fprintf(out, "market %s %s %s qty=%d\n", sym, lower(side.String()), o.ClOrdID, o.LeavesQty)
		}
	}
	for _, side := range []venue.Side{venue.SideBuy, venue.SideSell} {
		for _, o := range s.m.StopOrders(instrument, side, nil) {
			fmt.Fprintf(out, "stop %s %s %s stop=%s px=%s qty=%d\n", sym, lower(side.String()), o.ClOrdID,
				s.f.px(instrument, o.StopPxTicks), s.f.px(instrument, o.PriceTicks), o.LeavesQty)
		}
	}
}

func orderKey(session uint16, clOrdID string) string { return fmt.Sprintf("%d/%s", session, clOrdID) }

// args are the key=value words of a command line; bare words are flags.
type args struct {
	vals map[string]string
	used map[string]bool
}

func parseArgs(line string) (string, args, error) {
	fields := strings.Fields(line)
	a := args{vals: map[string]string{}, used: map[string]bool{}}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			v = "true"
		}
		if _, dup := a.vals[k]; dup {
			return "", a, fmt.Errorf("%s given twice", k)
		}
		a.vals[k] = v
	}
	return fields[0], a, nil
}

func (a args) get(k string) (string, bool) {
	v, ok := a.vals[k]
	a.used[k] = true
	return v, ok
}

func (a args) str(k, def string) string {
	if v, ok := a.get(k); ok {
		return v
	}
	return def
}

func (a args) int(k string, def int) int {
	v, ok := a.get(k)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		panic(fmt.Sprintf("%s=%s is not a number", k, v))
	}
	return int(n)
}

func (a args) flag(k string) bool {
	_, ok := a.get(k)
	return ok
}

func (a args) unused() error {
	for k := range a.vals {
		if !a.used[k] {
			return fmt.Errorf("unknown argument %s", k)
		}
	}
	return nil
}

// enumValue reads a named value or a raw number.
func enumValue(v string, names map[string]uint8) uint8 {
	if n, ok := names[v]; ok {
		return n
	}
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil {
		panic(fmt.Sprintf("%q is not a known name or a number", v))
	}
	return uint8(n)
}

func parseSide(v string) venue.Side {
	return venue.Side(enumValue(v, map[string]uint8{"buy": 1, "sell": 2}))
}

func parseOrdType(v string) venue.OrdType {
	return venue.OrdType(enumValue(v, map[string]uint8{"market": 1, "limit": 2, "stop": 3, "stoplimit": 4}))
}

func parseTIF(v string) venue.TimeInForce {
	return venue.TimeInForce(enumValue(v, map[string]uint8{"day": 0, "gtc": 1, "opening": 2, "ioc": 3, "fok": 4, "gtd": 6, "close": 7}))
}

func parseStp(v string) venue.StpMode {
	return venue.StpMode(enumValue(v, map[string]uint8{"default": 0, "resting": 1, "aggressor": 2, "both": 3, "none": 4}))
}

func parseTradingStatus(v string) venue.TradingStatus {
	return venue.TradingStatus(enumValue(v, map[string]uint8{"open": 1, "halted": 2, "closed": 3,
		"opening-call": 4, "closing-call": 5, "volatility-auction": 6}))
}
