package gateway

import (
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestStatusChangeReachesWhoIsLoggedOnAtTheHandOver: which sessions get
// an unsolicited status is decided after the status changes, not when the
// event is read. A session whose logon completes in between gets it (it
// got none, and its first TradingSessionStatusRequest could still read the
// old status); one gone in between does not.
func TestStatusChangeReachesWhoIsLoggedOnAtTheHandOver(t *testing.T) {
	sessions := make([]SessionConfig, 3)
	for i, c := range []string{"A", "B", "C"} {
		sessions[i].ID = quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: c}
	}
	g, err := New(Config{
		Instruments: []Instrument{{ID: 7, Symbol: "ACME", Status: venue.TradingStatusOpen}},
		Sessions:    sessions,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := g.sessions[0], g.sessions[1], g.sessions[2]
	a.loggedOn.Store(true) // logged on throughout
	c.loggedOn.Store(true) // logs out before the hand-over
	var e venue.TradingStatusChanged
	buf := make([]byte, venue.TradingStatusChangedEncodedLength)
	if err := e.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	e.SetInstrumentID(7)
	e.SetStatus(venue.TradingStatusHalted)
	g.onTradingStatusChanged(&e)
	b.loggedOn.Store(true) // its logon completes while the command is made durable
	c.loggedOn.Store(false)
	g.applyStatus()
	got := map[uint16]bool{}
	for i := range g.held {
		h := &g.held[i]
		if handsOver(h, g.sessionOf(h.idx)) {
			got[h.idx] = true
		}
	}
	if len(got) != 2 || !got[a.idx] || !got[b.idx] {
		t.Fatalf("handed to sessions %v, want A and B (0 and 1)", got)
	}
	if st := g.instrumentStatus(7); st != venue.TradingStatusHalted {
		t.Fatalf("status %v after the hand-over", st)
	}
}

// TestStatusRequestsPastTheBoundAreRefused: with statusReqsMax requests
// waiting for their answers, one more with an OrdStatusReqID is refused
// (it was taken, and the oldest waiting answer lost its 790); the refusal
// echoes its 790, and nothing is claimed.
func TestStatusRequestsPastTheBoundAreRefused(t *testing.T) {
	g, err := New(Config{
		Instruments: []Instrument{{ID: 7, Symbol: "ACME", Status: venue.TradingStatusOpen}},
		Sessions:    []SessionConfig{{ID: quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "A"}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := g.sessions[0]
	for i := range statusReqsMax {
		s.rememberStatusReq(int64(i), "waiting")
	}
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "H")
	m.Body.SetString(tag.ClOrdID, "o1")
	m.Body.SetString(tag.Symbol, "ACME")
	m.Body.SetString(tag.Side, "1")
	m.Body.SetString(tag.OrdStatusReqID, "one-more")
	g.onStatus(s, m, 1, true)
	o, ok := s.out.queue.pop()
	if !ok {
		t.Fatal("no answer to the request past the bound")
	}
	text, _ := o.m.Body.GetString(tag.Text)
	id, _ := o.m.Body.GetString(tag.OrdStatusReqID)
	if text != statusReqsFullText || id != "one-more" {
		t.Fatalf("answer Text %q, 790 %q", text, id)
	}
	if id, ok := s.takeStatusReq(0); !ok || id != "waiting" {
		t.Fatalf("the oldest waiting request lost its OrdStatusReqID: %q %v", id, ok)
	}
}

// TestLogOutWaitsForOnLogon: QuickFIX/Go answers a Logon before it calls
// OnLogon, so the edge can ask for a Logout (a message without MsgSeqNum
// read right after the answer) while the session is not logged on yet:
// the Logout waits for OnLogon, where the connection was closed without
// it; a session whose logon never completes is refused, after the wait.
func TestLogOutWaitsForOnLogon(t *testing.T) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "A"}
	g, err := New(Config{Sessions: []SessionConfig{{ID: id}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := g.sessions[0]
	go func() {
		time.Sleep(20 * time.Millisecond) // OnLogon, a moment after the Logon's answer
		s.loggedOn.Store(true)
	}()
	if !g.LogOutSession(id, "MsgSeqNum (34) missing") {
		t.Fatal("the Logout asked before OnLogon was refused: the connection would close without it")
	}
	s.loggedOn.Store(false)
	if g.LogOutSession(id, "MsgSeqNum (34) missing") {
		t.Fatal("a session never logged on took a Logout")
	}
}
