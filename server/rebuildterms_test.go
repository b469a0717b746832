package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestRebuiltReportsSayWhatTheOrderIs: reports lost at a crash and rebuilt
// at the next start (docs/ARCHITECTURE.md, "Answers lost at a crash") are
// those the live session was sent, field for field, for orders that had
// ended by the replay's end: a GTD order's fill and cancel with its
// ExpireTime (126), a stop's cancel and its trigger's fill with its StopPx
// (99), an iceberg's fills and cancel with its MaxFloor (111), a post-only
// order's fill, replace and cancel with ExecInst 6 (18). Their events
// carry none of these, and the open-order view the start seeds no longer
// holds the orders. The session's FIX store is put back as it was before those
// orders, the state a crash leaves when their answers were still queued:
// the journal holds their commands, the store none of their reports.
func TestRebuiltReportsSayWhatTheOrderIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	cfg.Journal.SnapshotInterval.Duration = 0
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	logon(t, s, "CLIENT2", true)
	logon(t, s, "CLIENT3", true)
	next := c.NextOut
	s.Close()
	stores, err := filepath.Glob(filepath.Join(dir, "fixstore", "*CLIENT1*"))
	if err != nil || len(stores) == 0 {
		t.Fatalf("CLIENT1's store: %v %v", stores, err)
	}
	before := map[string][]byte{}
	for _, p := range stores {
		if before[p], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}

	s = startServer(t, cfg, Options{})
	c, _ = resume(t, s, "CLIENT1", next)
	o, d := logon(t, s, "CLIENT2", true), logon(t, s, "CLIENT3", true)
	expire := time.Now().Add(time.Hour).UTC().Format("20060102-15:04:05") + ".000"
	// Each kind of order once filled, once cancelled by its client.
	for _, k := range termKinds(expire) {
		sendOrder(t, c, order{id: k.name + "-f", side: "1", qty: k.qty, px: k.fillPx, tif: k.tif, extra: k.extra})
		expectER(t, c, map[int]string{11: k.name + "-f", 150: "0", k.tag: k.value})
		sendOrder(t, o, order{id: "hit-" + k.name, side: "2", qty: k.qty, px: k.fillPx, tif: "3"})
		expectER(t, c, map[int]string{11: k.name + "-f", 150: "F", 39: "2"})
		sendOrder(t, c, order{id: k.name + "-x", side: "1", qty: k.qty, px: k.restPx, tif: k.tif, extra: k.extra})
		expectER(t, c, map[int]string{11: k.name + "-x", 150: "0"})
		cancelBuy(t, c, k.name+"-x2", k.name+"-x")
	}
	// A post-only order replaced, then cancelled: the replace keeps
	// post-only, which its event does not carry either.
	sendOrder(t, c, order{id: "po-r", side: "1", qty: "1", px: "95.00", extra: []fixclient.Field{fixclient.F(18, "6")}})
	expectER(t, c, map[int]string{11: "po-r", 150: "0"})
	replacePostOnly(t, c, "0")
	cancelBuy(t, c, "po-r3", "po-r2")

	// A buy stop cancelled while it waits; another elected by a trade at
	// its stop price (CLIENT3 buying from CLIENT2), then filled.
	sendOrder(t, c, order{id: "stop-x", side: "1", qty: "1", typ: "3", extra: []fixclient.Field{fixclient.F(99, "101.00")}})
	expectER(t, c, map[int]string{11: "stop-x", 150: "0", 99: "101.00"})
	cancelBuy(t, c, "stop-x2", "stop-x")
	sendOrder(t, c, order{id: "stop-f", side: "1", qty: "1", typ: "3", extra: []fixclient.Field{fixclient.F(99, "100.50")}})
	expectER(t, c, map[int]string{11: "stop-f", 150: "0", 99: "100.50"})
	sendOrder(t, o, order{id: "ask", side: "2", qty: "2", px: "100.50"})
	expectER(t, o, map[int]string{11: "ask", 150: "0"})
	sendOrder(t, d, order{id: "lift", side: "1", qty: "1", px: "100.50", tif: "3"})
	expectER(t, c, map[int]string{11: "stop-f", 150: "F", 39: "2"})

	live := map[string]*fixclient.Message{} // CLIENT1's reports by ExecID
	for _, m := range c.Received {
		if m.Type() == "8" && m.Get(17) != "" {
			live[m.Get(17)] = m
		}
	}
	s.Close()
	// The crash: CLIENT1's store back to before those orders.
	for p, b := range before {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s = startServer(t, cfg, Options{})
	r, _ := resume(t, s, "CLIENT1", next)
	if err := r.Send("2", fixclient.F(7, "1"), fixclient.F(16, "0")); err != nil {
		t.Fatal(err)
	}
	if err := r.Send("1", fixclient.F(112, "resent")); err != nil {
		t.Fatal(err)
	}
	rebuilt := map[string]*fixclient.Message{}
	for deadline := time.Now().Add(readWait); ; {
		m, err := r.ReadAny(time.Until(deadline))
		if errors.Is(err, io.EOF) || err == nil && m.Type() == "0" && m.Get(112) == "resent" {
			break
		}
		if err != nil {
			t.Fatalf("resend: %v after %d reports", err, len(rebuilt))
		}
		if m.Type() == "8" && m.Get(43) == "Y" {
			rebuilt[m.Get(17)] = m
		}
	}
	// Every field of the body but the header's and trailer's.
	header := map[int]bool{8: true, 9: true, 10: true, 34: true, 35: true, 43: true, 49: true, 52: true, 56: true, 97: true, 122: true}
	checked := map[string]bool{}
	for execID, want := range live {
		got, ok := rebuilt[execID]
		if !ok {
			t.Errorf("report ExecID %s not rebuilt: %s", execID, want)
			continue
		}
		var diffs []string
		for _, f := range want.Fields {
			if v, _ := got.Lookup(f.Tag); !header[f.Tag] && v != f.Value {
				diffs = append(diffs, fmt.Sprintf("%d=%s rebuilt as %q", f.Tag, f.Value, v))
			}
		}
		for _, f := range got.Fields {
			if _, had := want.Lookup(f.Tag); !header[f.Tag] && !had {
				diffs = append(diffs, fmt.Sprintf("rebuilt with %d=%s", f.Tag, f.Value))
			}
		}
		if len(diffs) > 0 {
			t.Errorf("report 150=%s of %s rebuilt otherwise than sent: %s\nsent:    %s\nrebuilt: %s", want.Get(150), want.Get(11),
				strings.Join(diffs, ", "), want, got)
		}
		checked[want.Get(11)+" 150="+want.Get(150)] = true
	}
	for _, want := range []string{"gtd-f 150=F", "gtd-x2 150=4", "ice-f 150=F", "ice-x2 150=4", "po-f 150=F", "po-x2 150=4", "po-r2 150=5", "po-r3 150=4",
		"stop-x2 150=4", "stop-f 150=F"} {
		if !checked[want] {
			t.Errorf("no rebuilt report %s to check (checked: %v)", want, checked)
		}
	}
}

// termKind is an order whose reports repeat what its events do not carry:
// one of it is filled (name-f, at fillPx, by a hit named hit-name) and
// one cancelled (name-x, resting at restPx); its New report says tag=value.
type termKind struct {
	name, qty, tif, fillPx, restPx string
	extra                          []fixclient.Field
	tag                            int
	value                          string
}

// termKinds are a GTD order expiring at expire (a UTCTimestamp), a GTC
// iceberg showing 2 and a GTC post-only order, each a buy on ACME.
func termKinds(expire string) []termKind {
	return []termKind{
		{"gtd", "1", "6", "99.00", "98.00", []fixclient.Field{fixclient.F(126, expire)}, 126, expire},
		{"ice", "4", "1", "99.50", "97.00", []fixclient.Field{fixclient.F(111, "2")}, 111, "2"},
		{"po", "1", "1", "99.80", "96.00", []fixclient.Field{fixclient.F(18, "6")}, 18, "6"},
	}
}

// cancelBuy cancels c's ACME buy orig with ClOrdID id and reads its report.
func cancelBuy(t *testing.T, c *fixclient.Client, id, orig string) {
	t.Helper()
	if err := c.Send("F", fixclient.F(11, id), fixclient.F(41, orig), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now()))); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: id, 150: "4"})
}

// replacePostOnly replaces c's post-only ACME buy po-r (1 at 95.00) by
// po-r2 (2 at 95.00, TimeInForce tif) and reads its report, which keeps
// post-only (18=6) though the replace's event does not carry it.
func replacePostOnly(t *testing.T, c *fixclient.Client, tif string) {
	t.Helper()
	if err := c.Send("G", fixclient.F(11, "po-r2"), fixclient.F(41, "po-r"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "2"), fixclient.F(40, "2"), fixclient.F(44, "95.00"),
		fixclient.F(59, tif)); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "po-r2", 150: "5", 18: "6"})
}
