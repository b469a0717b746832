package server

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/lockedbuf"
)

// TestAccountOfAnotherSession: a session naming an Account (1) that
// another session lists is refused (103=15) before it trades, so it can
// neither use the account's looser limits in place of its own nor trip
// the account's kill switch or its self-trade prevention, either of which
// would cancel the other session's orders, nor reach the account's drop
// copy. A session with a list may
// name only its own, and is told the same of another's account as of one
// no session lists; a session without a list may still name any account
// no session lists.
func TestAccountOfAnotherSession(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), `
[risk]
[risk.sessions]
max_order_qty = 10
[[risk.account]]
name = "BACC"
max_order_qty = 100
kill_after_breaches = 1
[[session]]
comp_id = "FIRMB"
accounts = ["BACC"]
[[session]]
comp_id = "FIRMC"
accounts = ["CACC"]
[[session]]
comp_id = "CLEARB"
kind = "dropcopy"
copy_accounts = ["BACC"]
`)
	s := startServer(t, cfg, Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "FIRMB", true)
	c := logon(t, s, "FIRMC", true)
	dc := logon(t, s, "CLEARB", true)
	acct := func(name string) []fixclient.Field { return []fixclient.Field{fixclient.F(1, name)} }

	sendOrder(t, b, order{id: "b1", side: "1", qty: "5", px: "99.00", tif: "1", extra: acct("BACC")})
	expectER(t, b, map[int]string{11: "b1", 150: "0", 1: "BACC"})
	expectER(t, dc, map[int]string{11: "b1", 150: "0", 128: "FIRMB"})

	refused := "Account (1) BACC is not one this session may name"
	// Within BACC's order limit (100) but over CLIENT1's own (10).
	sendOrder(t, a, order{id: "a1", side: "1", qty: "50", px: "98.00", tif: "1", extra: acct("BACC")})
	expectER(t, a, map[int]string{11: "a1", 150: "8", 103: "15", 58: refused})
	// Over BACC's order limit, whose first breach trips its kill switch.
	sendOrder(t, a, order{id: "a2", side: "1", qty: "500", px: "98.00", tif: "1", extra: acct("BACC")})
	expectER(t, a, map[int]string{11: "a2", 150: "8", 103: "15", 58: refused})
	// Selling into FIRMB's bid on its account: self-trade prevention would cancel FIRMB's order.
	sendOrder(t, a, order{id: "a4", side: "2", qty: "5", px: "99.00", tif: "1", extra: acct("BACC")})
	expectER(t, a, map[int]string{11: "a4", 150: "8", 103: "15", 58: refused})
	// An account no session lists is still CLIENT1's to name.
	sendOrder(t, a, order{id: "a3", side: "1", qty: "5", px: "98.00", tif: "1", extra: acct("FREE")})
	expectER(t, a, map[int]string{11: "a3", 150: "0", 1: "FREE"})

	// FIRMC lists CACC: another's account and an unlisted one get the same answer.
	sendOrder(t, c, order{id: "c1", side: "1", qty: "5", px: "98.00", tif: "1", extra: acct("BACC")})
	expectER(t, c, map[int]string{11: "c1", 150: "8", 103: "15", 58: refused})
	sendOrder(t, c, order{id: "c2", side: "1", qty: "5", px: "98.00", tif: "1", extra: acct("NOSUCH")})
	expectER(t, c, map[int]string{11: "c2", 150: "8", 103: "15", 58: "Account (1) NOSUCH is not one this session may name"})
	sendOrder(t, c, order{id: "c3", side: "1", qty: "5", px: "98.00", tif: "1", extra: acct("CACC")})
	expectER(t, c, map[int]string{11: "c3", 150: "0", 1: "CACC"})
	// A replace naming another's account is refused alike, in an OrderCancelReject.
	if err := c.Send("G", fixclient.F(11, "c4"), fixclient.F(41, "c3"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "5"), fixclient.F(40, "2"), fixclient.F(44, "98.00"),
		fixclient.F(59, "1"), fixclient.F(1, "BACC")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(readWait, "9", map[int]string{11: "c4", 41: "c3", 102: "99", 434: "2", 58: refused}); err != nil {
		t.Fatalf("replace naming BACC: %v (received so far: %v)", err, c.Received)
	}

	// FIRMB's order still rests, and its next report is the answer to its status request.
	if err := b.Send("H", fixclient.F(11, "b1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	if m := expectER(t, b, map[int]string{}); m.Get(11) != "b1" || m.Get(150) != "I" || m.Get(39) != "0" {
		t.Fatalf("FIRMB's order after CLIENT1 named its account: %s", m)
	}
	// BACC's drop copy got nothing of CLIENT1's: the next copy is FIRMB's status report.
	if m := expectER(t, dc, map[int]string{}); m.Get(128) != "FIRMB" || m.Get(150) != "I" {
		t.Fatalf("BACC's drop copy after CLIENT1 named its account: %s", m)
	}
}

// TestThirdPartyHeaderRefused: an application message naming a third party
// in its header, OnBehalfOfCompID (115) or DeliverToCompID (128), is
// refused with a BusinessMessageReject 380=6 and takes nothing: the venue
// routes for no one, and an order sent "on behalf of" another firm was
// entered as the sender's own, its answers going to the sender alone.
func TestThirdPartyHeaderRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	a := logon(t, s, "CLIENT1", true)
	b := logon(t, s, "CLIENT2", true)
	now := func() fixclient.Field { return fixclient.F(60, fixclient.Timestamp(time.Now())) }
	for _, hdr := range []fixclient.Field{fixclient.F(115, "CLIENT2"), fixclient.F(128, "CLIENT2")} {
		id := "tp" + strconv.Itoa(hdr.Tag)
		// The header field first: fixclient.Send puts the body right after the standard header's own.
		if err := a.Send("D", hdr, fixclient.F(11, id), fixclient.F(55, "ACME"), fixclient.F(54, "1"), now(),
			fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "98.00"), fixclient.F(59, "0")); err != nil {
			t.Fatal(err)
		}
		m, err := a.Expect(readWait, "j", map[int]string{380: "6", 379: id, 372: "D"})
		if err != nil {
			t.Fatalf("%d=CLIENT2: %v (received so far: %v)", hdr.Tag, err, a.Received)
		}
		if want := strconv.Itoa(hdr.Tag) + ") CLIENT2"; !strings.Contains(m.Get(58), want) {
			t.Fatalf("Text %q does not name %q", m.Get(58), want)
		}
	}
	// Nothing was entered: CLIENT1's next order is the first to rest, and
	// CLIENT2 heard of none.
	sendOrder(t, a, order{id: "own", side: "1", qty: "1", px: "98.00"})
	if m := expectER(t, a, map[int]string{11: "own", 150: "0"}); m.Get(37) != "1" {
		t.Fatalf("the venue's first order is OrderID %s", m.Get(37))
	}
	if m, err := b.Read(200 * time.Millisecond); err == nil {
		t.Fatalf("CLIENT2 got %s", m)
	}
}

// TestUnlistedAccountsWarned: a start whose [[risk.account]] or drop
// copy's copy_accounts names an account no session lists warns of it, as
// any session may name it; an account a session lists is not named.
func TestUnlistedAccountsWarned(t *testing.T) {
	t.Parallel()
	var logs lockedbuf.Buffer
	cfg := testConfig(t, t.TempDir(), `
[risk]
[[risk.account]]
name = "OPEN1"
max_order_qty = 100
[[risk.account]]
name = "OWNED"
max_order_qty = 100
[[session]]
comp_id = "OWNER"
accounts = ["OWNED"]
[[session]]
comp_id = "CLEAR"
kind = "dropcopy"
copy_accounts = ["OPEN2", "OWNED"]
`)
	startServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter(t)), nil))})
	warned := ""
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "no session lists in its accounts") {
			warned = line
		}
	}
	if !strings.Contains(warned, "level=WARN") || !strings.Contains(warned, "accounts=\"[OPEN1 OPEN2]\"") {
		t.Fatalf("warning %q, want one naming OPEN1 and OPEN2 alone; log:\n%s", warned, logs.String())
	}
}
