package server

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/datadictionary"

	"github.com/fixvenue/fixvenue/gateway/spec"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

const dropCopySessions = `
[[session]]
comp_id = "DC1"
kind = "dropcopy"
copy_sessions = ["CLIENT1"]
[[session]]
comp_id = "DCACC"
kind = "dropcopy"
copy_accounts = ["ACC9"]
[[session]]
comp_id = "DCALL"
kind = "dropcopy"
copy_all = true
`

// strictValidator validates messages as a QuickFIX client with its data
// dictionary on would: the FIX 4.4 dictionary beside the worktree
// (../shared/quickfix/FIX44.xml) when it is there, else the venue's own.
func strictValidator(t *testing.T) quickfix.Validator {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "quickfix", "FIX44.xml")
	if _, err := os.Stat(path); err != nil {
		p, err := spec.WriteFIX44(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		path = p
	}
	dd, err := datadictionary.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	return quickfix.NewValidator(quickfix.ValidatorSettings{CheckFieldsOutOfOrder: true, RejectInvalidMessage: true,
		CheckUserDefinedFields: true, CheckFieldsHaveValues: true}, dd, nil)
}

// validate parses a received message as QuickFIX/Go would and runs the
// strict validator over it.
func validate(t *testing.T, v quickfix.Validator, m *fixclient.Message) {
	t.Helper()
	qm := quickfix.NewMessage()
	if err := quickfix.ParseMessage(qm, bytes.NewBuffer(append([]byte(nil), m.Raw...))); err != nil {
		t.Fatalf("parse %s: %v", m, err)
	}
	if rej := v.Validate(qm); rej != nil {
		t.Fatalf("invalid against FIX44.xml: %v (reason %d) in %s", rej, rej.RejectReason(), m)
	}
}

// dcReader reads a drop-copy connection, remembering the highest MsgSeqNum
// seen so that a reconnect can ask for the gap.
type dcReader struct {
	c       *fixclient.Client
	lastSeq int
	copies  map[int]*fixclient.Message // by MsgSeqNum: a resend replaces nothing
	resent  int                        // copies received with PossDupFlag
}

func newDCReader(c *fixclient.Client) *dcReader {
	return &dcReader{c: c, copies: map[int]*fixclient.Message{}}
}

// readCopies reads until n copies are held in all, or fails at the deadline.
func (r *dcReader) readCopies(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(readWait)
	for len(r.copies) < n {
		m, err := r.c.ReadAny(time.Until(deadline))
		if err != nil {
			t.Fatalf("%s: %d of %d copies: %v", r.c.Sender, len(r.copies), n, err)
		}
		r.lastSeq = max(r.lastSeq, m.SeqNum())
		switch m.Type() {
		case "1":
			if err := r.c.Send("0", fixclient.F(112, m.Get(112))); err != nil {
				t.Fatal(err)
			}
		case "8":
			if m.Get(43) == "Y" {
				r.resent++
			}
			r.copies[m.SeqNum()] = m
		case "0", "4", "A":
		default:
			t.Fatalf("%s: unexpected %s", r.c.Sender, m)
		}
	}
}

// inOrder returns the copies in MsgSeqNum order.
func (r *dcReader) inOrder() []*fixclient.Message {
	seqs := make([]int, 0, len(r.copies))
	for s := range r.copies {
		seqs = append(seqs, s)
	}
	sort.Ints(seqs)
	out := make([]*fixclient.Message, len(seqs))
	for i, s := range seqs {
		out[i] = r.copies[s]
	}
	return out
}

// erKey identifies an ExecutionReport across the original and its copy.
func erKey(m *fixclient.Message) string {
	return m.Get(17) + "/" + m.Get(150) + "/" + m.Get(11) + "/" + m.Get(39) + "/" + m.Get(14)
}

// checkCopies asserts that copies are exactly want, in the same order,
// each marked as a copy naming its original session and valid for a strict
// client.
func checkCopies(t *testing.T, v quickfix.Validator, name string, copies []*fixclient.Message, want []*fixclient.Message, origin map[string]string) {
	t.Helper()
	if len(copies) != len(want) {
		t.Fatalf("%s: %d copies, want %d", name, len(copies), len(want))
	}
	for i, c := range copies {
		validate(t, v, c)
		if c.Get(797) != "Y" {
			t.Fatalf("%s: copy without 797=Y: %s", name, c)
		}
		if erKey(c) != erKey(want[i]) {
			t.Fatalf("%s: copy %d is %s, want %s", name, i, c, want[i])
		}
		if got, exp := c.Get(128), origin[erKey(want[i])]; got != exp {
			t.Fatalf("%s: copy %d names %q in 128, want %q", name, i, got, exp)
		}
	}
}

// venueOrder sorts reports by their matcher ExecIDs, which the matcher
// assigns in event order (gateway ExecIDs start with G and are not in it).
func venueOrder(t *testing.T, ers []*fixclient.Message) []*fixclient.Message {
	out := append([]*fixclient.Message(nil), ers...)
	sort.SliceStable(out, func(i, j int) bool {
		a, errA := strconv.ParseUint(out[i].Get(17), 10, 64)
		b, errB := strconv.ParseUint(out[j].Get(17), 10, 64)
		if errA != nil || errB != nil {
			t.Fatalf("venueOrder on a gateway ExecID: %s, %s", out[i], out[j])
		}
		return a < b
	})
	return out
}

func TestDropCopy(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), dropCopySessions)
	s := startServer(t, cfg, Options{})
	v := strictValidator(t)
	c1 := logon(t, s, "CLIENT1", true)
	c2 := logon(t, s, "CLIENT2", true)
	dc1 := newDCReader(logon(t, s, "DC1", true))
	dcAcc := newDCReader(logon(t, s, "DCACC", true))
	dcAll := newDCReader(logon(t, s, "DCALL", true))

	// A drop-copy session enters nothing: its order is refused with a
	// BusinessMessageReject, not an ExecutionReport, whose
	// BusinessRejectRefID (379) is the request's ID field (FIX 4.4 requires
	// it when the request has one).
	c3 := logon(t, s, "CLIENT3", true) // a session no drop copy is granted by name
	sendOrder(t, dc1.c, order{id: "dc-1", side: "1", qty: "5", px: "100.00"})
	rej, err := dc1.c.Expect(readWait, "j", map[int]string{380: "6", 372: "D", 379: "dc-1"})
	if err != nil {
		t.Fatalf("drop-copy order: %v", err)
	}
	validate(t, v, rej)
	if err := dc1.c.Send("H", fixclient.F(11, "x"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := dc1.c.Expect(readWait, "j", map[int]string{380: "6", 372: "H", 379: "x"}); err != nil {
		t.Fatalf("drop-copy status request: %v", err)
	}
	if err := dc1.c.Send("V", fixclient.F(262, "dc-md"), fixclient.F(263, "0"), fixclient.F(264, "0"),
		fixclient.F(267, "1"), fixclient.F(269, "0"), fixclient.F(146, "1"), fixclient.F(55, "ACME")); err != nil {
		t.Fatal(err)
	}
	if _, err := dc1.c.Expect(readWait, "j", map[int]string{380: "6", 372: "V", 379: "dc-md"}); err != nil {
		t.Fatalf("drop-copy market data request: %v", err)
	}

	origin := map[string]string{}
	var got1, got2 []*fixclient.Message
	read := func(c *fixclient.Client, dst *[]*fixclient.Message, want map[int]string) {
		m := expectER(t, c, want)
		*dst = append(*dst, m)
		origin[erKey(m)] = c.Sender
	}
	// CLIENT2 rests a sell for account ACC9; CLIENT1 rests a buy, takes
	// part of the sell, and sends one order the gateway itself refuses.
	sendOrder(t, c2, order{id: "s1", side: "2", qty: "10", px: "100.00", extra: []fixclient.Field{fixclient.F(1, "ACC9")}})
	read(c2, &got2, map[int]string{11: "s1", 150: "0"})
	sendOrder(t, c1, order{id: "b1", side: "1", qty: "5", px: "99.00"})
	read(c1, &got1, map[int]string{11: "b1", 150: "0"})
	sendOrder(t, c1, order{id: "b2", side: "1", qty: "4", px: "100.00", extra: []fixclient.Field{fixclient.F(1, "ACC1")}})
	read(c1, &got1, map[int]string{11: "b2", 150: "0"})
	read(c1, &got1, map[int]string{11: "b2", 150: "F"})
	read(c2, &got2, map[int]string{11: "s1", 150: "F"})
	sendOrder(t, c1, order{id: "bad", sym: "NOPE", side: "1", qty: "1", px: "1.00"})
	read(c1, &got1, map[int]string{11: "bad", 150: "8"})
	sendOrder(t, c2, order{id: "s2", side: "2", qty: "3", px: "105.00"})
	read(c2, &got2, map[int]string{11: "s2", 150: "0"})

	dc1.readCopies(t, len(got1))
	checkCopies(t, v, "DC1", dc1.inOrder(), got1, origin)
	var acc9 []*fixclient.Message
	for _, m := range venueOrder(t, got2) {
		if m.Get(1) == "ACC9" {
			acc9 = append(acc9, m)
		}
	}
	dcAcc.readCopies(t, len(acc9))
	checkCopies(t, v, "DCACC", dcAcc.inOrder(), acc9, origin)
	// DCALL: every report of both sessions; the matcher's in ExecID
	// order, the gateway's reject after b2's fill (it was sent after it).
	var matcherERs []*fixclient.Message
	for _, m := range append(append([]*fixclient.Message(nil), got1...), got2...) {
		if m.Get(11) != "bad" {
			matcherERs = append(matcherERs, m)
		}
	}
	all := venueOrder(t, matcherERs)
	for i, m := range all {
		if m.Get(11) == "s2" { // sent after the gateway reject was received
			all = append(all[:i], append([]*fixclient.Message{got1[len(got1)-1]}, all[i:]...)...)
			break
		}
	}
	dcAll.readCopies(t, len(all))
	checkCopies(t, v, "DCALL", dcAll.inOrder(), all, origin)

	// Nothing more: no copy of anything else (CLIENT3's order) reaches DC1.
	sendOrder(t, c3, order{id: "c3", side: "1", qty: "1", px: "90.00"})
	expectER(t, c3, map[int]string{11: "c3", 150: "0"})
	if m, err := dc1.c.Read(300 * time.Millisecond); err == nil && m.Type() == "8" {
		t.Fatalf("DC1 got a report of a session it is not granted: %s", m)
	}

	// DC1 drops without a Logout; CLIENT1 trades on; DC1 comes back and
	// asks for the gap with an ordinary ResendRequest.
	seenBefore := dc1.lastSeq
	nextOut := dc1.c.NextOut
	dc1.c.Close()
	waitLoggedOff(t, s, "DC1")
	sendOrder(t, c1, order{id: "b3", side: "1", qty: "2", px: "100.00"})
	read(c1, &got1, map[int]string{11: "b3", 150: "0"})
	read(c1, &got1, map[int]string{11: "b3", 150: "F"})
	read(c2, &got2, map[int]string{11: "s1", 150: "F"})
	sendOrder(t, c1, order{id: "b4", side: "1", qty: "1", px: "98.00"})
	read(c1, &got1, map[int]string{11: "b4", 150: "0"})

	again, err := fixclient.Dial(s.FIXAddr(), "DC1", s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	again.NextOut = nextOut
	if err := again.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30")); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Expect(readWait, "A", nil); err != nil {
		t.Fatalf("DC1 logon again: %v", err)
	}
	if err := again.Send("2", fixclient.F(7, strconv.Itoa(seenBefore+1)), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	dc1.c = again
	dc1.readCopies(t, len(got1))
	checkCopies(t, v, "DC1 after reconnect", dc1.inOrder(), got1, origin)
	if dc1.resent == 0 {
		t.Fatal("DC1: no copy came back through the resend")
	}
}

// waitLoggedOff waits until the venue has noticed that a session dropped.
func waitLoggedOff(t *testing.T, s *Server, comp string) {
	t.Helper()
	for deadline := time.Now().Add(readWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !s.Gateway().ClientLoggedOn(comp) {
			return
		}
	}
	t.Fatal(fmt.Errorf("%s still logged on", comp))
}

// TestDropCopySessionIsNoCancelOrRiskSubject: a drop-copy session enters no
// orders, so a cancel or a risk call naming it is refused with a reason and
// journals nothing (both used to journal a command that could do nothing).
func TestDropCopySessionIsNoCancelOrRiskSubject(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), dropCopySessions+"\n[risk]\n[risk.sessions]\nmax_order_qty = 100\n"+adminConfig()), Options{})
	before := durableSeq(t, s)
	var e map[string]any
	if code := adminCall(t, s, "POST", "/v1/cancel", aliceToken, `{"reason":"x","session":"DC1"}`, &e); code != 400 || e["code"] != "drop_copy_session" {
		t.Errorf("cancel naming a drop-copy session: %d %v", code, e)
	}
	for _, action := range []string{"kill", "reset", "limit"} {
		status, body := riskPost(t, s, "/risk/"+action, url.Values{"session": {"DC1"}, "limit": {"max_order_qty"}, "value": {"5"}})
		if status != 400 || !strings.Contains(body, "drop_copy_session") {
			t.Errorf("risk %s naming a drop-copy session: %d %s", action, status, body)
		}
	}
	if after := durableSeq(t, s); after != before {
		t.Fatalf("durable seq %d → %d: a refused call was journaled", before, after)
	}
	// Nor does the risk view list it with the sessions' limits, which the
	// calls above say it has not.
	var list []ops.RiskSubject
	if code := adminCall(t, s, "GET", "/v1/risk", aliceToken, "", &list); code != 200 {
		t.Fatalf("GET /v1/risk: %d", code)
	}
	for _, subj := range list {
		if strings.HasPrefix(subj.Name, "DC") {
			t.Errorf("GET /v1/risk lists drop-copy session %s with limits %v", subj.Name, subj.Limits)
		}
	}
}

// TestRiskGaugesLeaveOutDropCopySessions: the risk gauges on /metrics name
// the order sessions, not a drop-copy session, which enters no orders and
// has no kill switch or limits (README "Risk limits"), as GET /v1/risk
// leaves it out. Before, [risk.sessions] figures of every session reached
// the gauges, a drop copy's among them.
func TestRiskGaugesLeaveOutDropCopySessions(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), dropCopySessions+"\n[risk]\nreport_interval = \"10ms\"\n[risk.sessions]\ncredit_limit = 1000000\n"), Options{})
	const client1 = `fixvenue_risk_kill_switch{subject="session:CLIENT1"}`
	var text string
	for deadline := time.Now().Add(readWait); !strings.Contains(text, client1); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v:\n%s", client1, readWait, grepLines(text, "fixvenue_risk"))
		}
		time.Sleep(20 * time.Millisecond)
		text = scrape(t, s)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "fixvenue_risk") && strings.Contains(line, `subject="session:DC`) {
			t.Errorf("a risk gauge names a drop-copy session: %s", line)
		}
	}
}

// TestRejectEchoesTheOrder: the reject of a post-only order carries
// ExecInst 6, as its accept does, the reject of an iceberg its MaxFloor
// (111), and the reject of a GTD order its
// ExpireTime (126), which FIX 4.4 requires of a GTD report, whether the
// matcher refused it (a price outside the band, a reason that says nothing
// of either) or the gateway (an unknown symbol); so do their drop copies,
// live and rebuilt from the journal for a TradeCaptureReportRequest.
func TestRejectEchoesTheOrder(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), dropCopySessions), Options{})
	v := strictValidator(t)
	c1 := logon(t, s, "CLIENT1", true)
	dc := newDCReader(logon(t, s, "DC1", true))
	from := time.Now().Add(-time.Second)
	postOnly := []fixclient.Field{fixclient.F(18, "6")}
	var rejects []*fixclient.Message
	sendOrder(t, c1, order{id: "po-band", side: "1", qty: "1", px: "200.00", extra: postOnly})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "po-band", 150: "8"}))
	sendOrder(t, c1, order{id: "po-sym", sym: "NOPE", side: "1", qty: "1", px: "1.00", extra: postOnly})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "po-sym", 150: "8"}))
	const expire = "20991231-23:59:59.000"
	gtd := []fixclient.Field{fixclient.F(126, expire)}
	sendOrder(t, c1, order{id: "gtd-band", side: "1", qty: "1", px: "200.00", tif: "6", extra: gtd})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "gtd-band", 150: "8"}))
	sendOrder(t, c1, order{id: "gtd-sym", sym: "NOPE", side: "1", qty: "1", px: "1.00", tif: "6", extra: gtd})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "gtd-sym", 150: "8"}))
	iceberg := []fixclient.Field{fixclient.F(111, "2")}
	sendOrder(t, c1, order{id: "ice-band", side: "1", qty: "4", px: "200.00", extra: iceberg})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "ice-band", 150: "8"}))
	sendOrder(t, c1, order{id: "ice-sym", sym: "NOPE", side: "1", qty: "4", px: "1.00", extra: iceberg})
	rejects = append(rejects, expectER(t, c1, map[int]string{11: "ice-sym", 150: "8"}))
	dc.readCopies(t, len(rejects))
	for _, m := range append(rejects, dc.inOrder()...) {
		validate(t, v, m)
		if strings.HasPrefix(m.Get(11), "po-") && m.Get(18) != "6" {
			t.Fatalf("reject of a post-only order without ExecInst 6: %s", m)
		}
		if strings.HasPrefix(m.Get(11), "gtd-") && m.Get(126) != expire {
			t.Fatalf("reject of a GTD order without its ExpireTime %s: %s", expire, m)
		}
		if strings.HasPrefix(m.Get(11), "ice-") && m.Get(111) != "2" {
			t.Fatalf("reject of an iceberg without its MaxFloor 2: %s", m)
		}
	}

	// The replay rebuilds the matcher's reject (the gateway's is not in
	// the journal) from the journal's events alone.
	waitDurableAll(t, s)
	if err := dc.c.Send("AD", fixclient.F(568, "R1"), fixclient.F(569, "0"), fixclient.F(580, "1"),
		fixclient.F(75, from.UTC().Format("20060102")), fixclient.F(60, from.UTC().Format("20060102-15:04:05.000"))); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.c.Expect(readWait, "AQ", map[int]string{568: "R1", 750: "0"}); err != nil {
		t.Fatal(err)
	}
	m, err := dc.c.Expect(readWait, "8", map[int]string{797: "Y", 11: "po-band"})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, v, m)
	if m.Get(18) != "6" {
		t.Fatalf("replayed copy of a post-only order's reject without ExecInst 6: %s", m)
	}
	if m, err = dc.c.Expect(readWait, "8", map[int]string{797: "Y", 11: "gtd-band"}); err != nil {
		t.Fatal(err)
	}
	validate(t, v, m)
	if m.Get(126) != expire {
		t.Fatalf("replayed copy of a GTD order's reject without its ExpireTime %s: %s", expire, m)
	}
	if m, err = dc.c.Expect(readWait, "8", map[int]string{797: "Y", 11: "ice-band"}); err != nil {
		t.Fatal(err)
	}
	validate(t, v, m)
	if m.Get(111) != "2" {
		t.Fatalf("replayed copy of an iceberg's reject without its MaxFloor 2: %s", m)
	}
}
