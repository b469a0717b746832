package server

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/quickfix/datadictionary"

	"github.com/fixvenue/fixvenue/gateway/spec"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestEmptyValueSweepAsQuickFIX sends every field of the FIX 4.4 header and
// trailer and of the admin messages, NewOrderSingle and OrderCancelRequest
// with an empty value, each to two venues: one as shipped (QuickFIX/Go parses
// without a dictionary and validates nothing; the gateway makes its checks)
// and one whose sessions set RejectInvalidMessage=N (QuickFIX/Go keeps the
// dictionary and checks empty values itself). Every answer (a session Reject
// with its reason and tag, a Logout, or none) must be the same on both, and
// both venues must still trade afterwards. The MsgSeqNum and the length
// fields are left out: the FIX edge drops those messages before QuickFIX/Go
// (gateway/edge, "Empty values").
func TestEmptyValueSweepAsQuickFIX(t *testing.T) {
	t.Parallel()
	dd, err := datadictionary.ParseSrc(bytes.NewReader(spec.FIX44()))
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]fixclient.Field{
		"0": nil, "1": {fixclient.F(112, "T")}, "2": {fixclient.F(7, "1"), fixclient.F(16, "1")},
		"3": {fixclient.F(45, "1")}, "4": {fixclient.F(123, "Y"), fixclient.F(36, "2")},
		"A": {fixclient.F(98, "0"), fixclient.F(108, "30")},
		"D": {fixclient.F(11, "e1"), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, fixclient.Timestamp(time.Now())),
			fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00")},
		"F": {fixclient.F(41, "e1"), fixclient.F(11, "e2"), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, fixclient.Timestamp(time.Now()))},
	}
	var combos []emptyCombo
	for _, mt := range slices.Sorted(func(yield func(string) bool) {
		for k := range bodies {
			if !yield(k) {
				return
			}
		}
	}) {
		var tags []int
		for _, def := range []*datadictionary.MessageDef{dd.Header, dd.Trailer, dd.Messages[mt]} {
			for tag := range def.Fields {
				tags = append(tags, tag)
			}
		}
		slices.Sort(tags)
		for _, tag := range slices.Compact(tags) {
			switch {
			case tag == 8 || tag == 9 || tag == 10 || tag == 35 || tag == 34:
				continue // framing and MsgSeqNum: the edge's
			case isDataOrLength(dd, tag):
				continue // a data field or its length: the edge's
			}
			combos = append(combos, emptyCombo{mt, tag})
		}
	}
	if len(combos) < 200 {
		t.Fatalf("only %d combinations", len(combos))
	}
	// Each venue in a subtest of its own, stopped at its end: QuickFIX/Go
	// keeps one registry of sessions per process.
	sweep := func(rejectInvalid string) (answers []string) {
		t.Run("RejectInvalidMessage="+rejectInvalid, func(t *testing.T) { answers = sweepVenue(t, rejectInvalid, combos, bodies) })
		if len(answers) != len(combos) {
			t.FailNow()
		}
		return answers
	}
	shipped, quickfixChecks := sweep(""), sweep("N")
	rejects := 0
	for i := range combos {
		if shipped[i] != quickfixChecks[i] {
			t.Errorf("as shipped: %s\nQuickFIX/Go checking: %s", shipped[i], quickfixChecks[i])
		}
		if strings.Contains(shipped[i], "35=3") {
			rejects++
		}
	}
	// The sweep must reach QuickFIX/Go's and the gateway's checks, not only
	// the session's.
	if rejects < len(combos)/2 {
		t.Fatalf("only %d of %d combinations rejected", rejects, len(combos))
	}
	t.Logf("%d empty-value combinations, %d rejected, the same on both venues", len(combos), rejects)
}

// emptyCombo is one field sent empty in one message type.
type emptyCombo struct {
	msgType string
	tag     int
}

// sweepVenue runs the sweep against a venue whose sessions set
// RejectInvalidMessage to rejectInvalid ("": as shipped) and returns the
// answer to each combination.
func sweepVenue(t *testing.T, rejectInvalid string, combos []emptyCombo, bodies map[string][]fixclient.Field) []string {
	cfg := testConfig(t, t.TempDir(), "")
	if rejectInvalid != "" {
		cfg.SessionDefaults.QuickFIX["RejectInvalidMessage"] = rejectInvalid
	}
	cfg.FIX.LogonsPerCompIDBurst, cfg.FIX.LogonsPerSourceBurst = 1000, 1000
	s := startServer(t, cfg, Options{})
	witness := logon(t, s, "CLIENT2", true)
	c := logon(t, s, "CLIENT1", true)
	answers := make([]string, 0, len(combos))
	for i, cb := range combos {
		fields := []fixclient.Field{fixclient.F(35, cb.msgType), fixclient.F(49, c.Sender), fixclient.F(56, c.Target),
			fixclient.F(34, strconv.Itoa(c.NextOut)), fixclient.F(52, fixclient.Timestamp(time.Now()))}
		fields = append(fields, bodies[cb.msgType]...)
		fields = withEmpty(fields, cb.tag)
		seq := c.NextOut
		c.NextOut++
		if err := c.SendRaw(fixclient.Build(fields...)); err != nil {
			t.Fatal(err)
		}
		answer := answersUntilProbe(t, c, fmt.Sprint("probe", i))
		answers = append(answers, fmt.Sprintf("35=%s empty %d (seq %d): %s", cb.msgType, cb.tag, seq, answer))
		if strings.Contains(answer, "closed") {
			c.Close()
			c = logon(t, s, "CLIENT1", true)
		}
	}
	sendOrder(t, witness, order{id: "w1", side: "1", qty: "1", px: "96.00"})
	if _, err := witness.Expect(readWait, "8", map[int]string{11: "w1", 150: "0"}); err != nil {
		t.Fatalf("the venue does not trade after the sweep: %v", err)
	}
	return answers
}

// isDataOrLength reports whether tag is a data field or the length of one.
func isDataOrLength(dd *datadictionary.DataDictionary, tag int) bool {
	switch dd.FieldTypeByTag[tag].Type {
	case "LENGTH", "DATA", "XMLDATA":
		return true
	}
	return false
}

// withEmpty returns fields with tag's value emptied, or with tag added empty:
// a header field after the standard header, any other at the end.
func withEmpty(fields []fixclient.Field, tag int) []fixclient.Field {
	out := slices.Clone(fields)
	for i := range out {
		if out[i].Tag == tag {
			out[i].Value = ""
			return out
		}
	}
	for i, f := range out {
		if !quickfix.Tag(f.Tag).IsHeader() {
			return slices.Insert(out, i, fixclient.F(tag, ""))
		}
	}
	return append(out, fixclient.F(tag, ""))
}

// answersUntilProbe sends a TestRequest with id and describes every message
// the venue sends before its Heartbeat answering it: each Reject with its
// RefSeqNum, reason and tag, a Logout, or "closed" when the venue ends the
// connection.
func answersUntilProbe(t *testing.T, c *fixclient.Client, id string) string {
	t.Helper()
	if err := c.Send("1", fixclient.F(112, id)); err != nil {
		return "closed"
	}
	var got []string
	for deadline := time.Now().Add(readWait); time.Now().Before(deadline); {
		m, err := c.ReadAny(time.Until(deadline))
		if err != nil {
			return strings.Join(append(got, "closed"), ", ")
		}
		switch m.Type() {
		case "0":
			if m.Get(112) == id {
				return strings.Join(append(got, "answered"), ", ")
			}
		case "3":
			got = append(got, fmt.Sprintf("35=3 45=%s 373=%s 371=%s", m.Get(45), m.Get(373), m.Get(371)))
		case "2":
			// A ResendRequest: the venue did not take a message. Fill the
			// gap (the sweep keeps no store), so that the probe is taken.
			got = append(got, "35=2 "+m.Get(7)+"-"+m.Get(16))
			now := fixclient.Timestamp(time.Now())
			if err := c.SendRaw(fixclient.Build(fixclient.F(35, "4"), fixclient.F(49, c.Sender), fixclient.F(56, c.Target),
				fixclient.F(34, m.Get(7)), fixclient.F(43, "Y"), fixclient.F(52, now), fixclient.F(122, now),
				fixclient.F(123, "Y"), fixclient.F(36, strconv.Itoa(c.NextOut)))); err != nil {
				return strings.Join(append(got, "closed"), ", ")
			}
		default:
			got = append(got, "35="+m.Type())
		}
	}
	t.Fatalf("no Heartbeat for %s within %v (so far: %v)", id, readWait, got)
	return ""
}
