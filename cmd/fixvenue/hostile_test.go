package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestKnownCrashShapesAgainstTheVenue sends the messages that kill a bare
// QuickFIX/Go process to `fixvenue serve` itself, and checks after each one
// that the process is alive and another session still trades. (The full
// catalogue of hostile inputs runs against the edge in gateway/edge.)
func TestKnownCrashShapesAgainstTheVenue(t *testing.T) {
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 3]\n")
	v := startVenue(t, cfg)
	witness := logOn(t, v.fixAddr, "CLIENT1")
	defer witness.Close()
	now := func() string { return fixclient.Timestamp(time.Now()) }
	hdr := func(seq string) []fixclient.Field {
		return []fixclient.Field{fixclient.F(35, "D"), fixclient.F(49, "CLIENT2"), fixclient.F(56, "VENUE"), fixclient.F(34, seq), fixclient.F(52, now())}
	}
	order := []fixclient.Field{fixclient.F(11, "x"), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, now()),
		fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "99.00")}
	shapes := []struct {
		name  string
		logon bool // log CLIENT2 on first
		msg   []byte
	}{
		{"empty MsgSeqNum in a Logon", false, fixclient.Build(fixclient.F(35, "A"), fixclient.F(49, "CLIENT2"), fixclient.F(56, "VENUE"),
			fixclient.F(34, ""), fixclient.F(52, now()), fixclient.F(98, "0"), fixclient.F(108, "30"))},
		{"empty MsgSeqNum after logon", true, fixclient.Build(append(hdr(""), order...)...)},
		{"second empty BodyLength", true, fixclient.Build(append(append(hdr("2"), fixclient.F(9, "")), order...)...)},
		{"XmlDataLen larger than the data", true, fixclient.Build(append(hdr("2"), fixclient.F(212, "500"), fixclient.F(213, "<a/>"))...)},
	}
	for i, sh := range shapes {
		c, err := fixclient.Dial(v.fixAddr, "CLIENT2", "VENUE")
		if err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		if sh.logon {
			if _, err := c.Logon(true); err != nil {
				t.Fatalf("%s: logon: %v", sh.name, err)
			}
		}
		if err := c.SendRaw(sh.msg); err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		time.Sleep(100 * time.Millisecond)
		c.Close()
		select {
		case <-v.exited:
			t.Fatalf("%s killed the venue:\n%s", sh.name, v.logs())
		default:
		}
		id := fmt.Sprintf("w%d", i)
		if err := witness.Send("D", fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"), fixclient.F(60, now()),
			fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "99.00")); err != nil {
			t.Fatalf("after %s: %v", sh.name, err)
		}
		if _, err := witness.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatalf("after %s the witness session no longer trades: %v", sh.name, err)
		}
		time.Sleep(1100 * time.Millisecond) // stay inside the per-CompID logon rate
	}
}

// TestLogonWithAStaleSendingTimeResetsNothing: a Logon whose SendingTime is
// further from the venue's clock than the session's MaxLatency (120 s by
// default) is closed without an answer, as the FIX session acceptance tests
// want, the venue's log naming SendingTime, and its ResetSeqNumFlag resets
// nothing. QuickFIX/Go reset the sequence numbers first, and nothing said
// why the connection closed (gateway/edge, "What a connection goes
// through").
func TestLogonWithAStaleSendingTimeResetsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "[marketdata]\nenabled = false\n[session_defaults]\ncancel_on_disconnect = false\n"+
		"[[session]]\ncomp_id = \"CLIENT%%d\"\nrange = [1, 2]\n")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	if err := c.Send("D", fixclient.F(11, "before"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "99.00")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "8", map[int]string{11: "before", 150: "0"}); err != nil {
		t.Fatal(err)
	}
	c.Logout()

	stale, err := fixclient.Dial(v.fixAddr, "CLIENT1", "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	if err := stale.SendRaw(fixclient.Build(fixclient.F(35, "A"), fixclient.F(49, "CLIENT1"), fixclient.F(56, "VENUE"),
		fixclient.F(34, "1"), fixclient.F(52, fixclient.Timestamp(time.Now().Add(-time.Hour))), fixclient.F(98, "0"),
		fixclient.F(108, "30"), fixclient.F(141, "Y"))); err != nil {
		t.Fatal(err)
	}
	if m, err := stale.ReadAny(5 * time.Second); err == nil {
		t.Fatalf("a Logon an hour old was answered %s, want the connection closed", m)
	}
	if !stale.Closed(5 * time.Second) {
		t.Fatal("a Logon an hour old: the connection stayed open")
	}
	eventually(t, "the log names the stale SendingTime", func() error {
		if !strings.Contains(v.logs(), "SendingTime accuracy problem (tag 52)") {
			return errors.New("not logged")
		}
		return nil
	})

	// The session's numbers were not reset: a Logon that continues them
	// (MsgSeqNum 4, after the order and the Logout) is taken as it is.
	again, err := fixclient.Dial(v.fixAddr, "CLIENT1", "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.NextOut = 4
	a, err := again.Logon(false)
	if err != nil {
		t.Fatal(err)
	}
	if a.SeqNum() == 1 {
		t.Fatalf("the refused Logon reset the venue's sequence numbers: its Logon is %s", a)
	}
}

// TestLogonWithATooLongCompIDIsAnsweredToIt: the Logout refusing a Logon
// whose SenderCompID is beyond the edge's bound carries the CompIDs as sent,
// swapped, as every other refusal's does; its 49 and 56 were empty, a Logout
// a validating client drops without reading why (gateway/edge, "What a
// connection goes through").
func TestLogonWithATooLongCompIDIsAnsweredToIt(t *testing.T) {
	cfg := writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n")
	v := startVenue(t, cfg)
	long := strings.Repeat("C", 65)
	c, err := fixclient.Dial(v.fixAddr, long, "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send("A", fixclient.F(98, "0"), fixclient.F(108, "30"), fixclient.F(141, "Y")); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadAny(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type() != "5" || m.Get(49) != "VENUE" || m.Get(56) != long || !strings.Contains(m.Get(58), "CompID too long") {
		t.Fatalf("refused with %s, want a Logout from VENUE to the CompID sent, naming the problem", m)
	}
}

// TestEdgeCountsHowSessionsEnd: fixvenue_edge_refusals_total counts a
// session's connection the client closed (peer_closed) and one the session
// layer ended with a Logout (closed_by_session), as every other reason the
// edge has; both stayed 0 whatever happened (gateway/edge, "Limits").
func TestEdgeCountsHowSessionsEnd(t *testing.T) {
	t.Parallel()
	cfg := writeVenueConfig(t, t.TempDir(), "[marketdata]\nenabled = false\n")
	v := startVenue(t, cfg, "--metrics-addr", "127.0.0.1:0")
	c := logOn(t, v.fixAddr, "CLIENT1")
	// Closed once the venue answered the Logout: a client that closes
	// before the answer (a busy machine's) ends the connection itself.
	if err := c.Send("5"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(10*time.Second, "5", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d := logOn(t, v.fixAddr, "CLIENT2")
	d.Close()
	want := map[string]bool{`fixvenue_edge_refusals_total{reason="closed_by_session"} 1`: false,
		`fixvenue_edge_refusals_total{reason="peer_closed"} 1`: false}
	var body []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + v.ready.MetricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		all := true
		for line := range want {
			want[line] = strings.Contains(string(body), line+"\n")
			all = all && want[line]
		}
		if all {
			return
		}
	}
	t.Fatalf("want %v in /metrics:\n%s", want, body)
}
