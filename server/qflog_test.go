package server

import (
	"log/slog"
	"testing"

	"github.com/quickfixgo/quickfix"
)

func TestScrub(t *testing.T) {
	in := "8=FIX.4.4\x0135=A\x01554=hunter2\x01925=newpass\x0110=000\x01"
	got := Scrub(in)
	want := "8=FIX.4.4\x0135=A\x01554=***\x01925=***\x0110=000\x01"
	if got != want {
		t.Fatalf("Scrub = %q", got)
	}
	if got := Scrub("8=FIX.4.4|554=x|1554=keep|"); got != "8=FIX.4.4|554=***|1554=keep|" {
		t.Fatalf("Scrub with | = %q", got)
	}
}

// countingApp is a QuickFIX/Go application that counts arrivals
// (gateway.ArrivalCounter) for one session.
type countingApp struct {
	quickfix.Application
	id      quickfix.SessionID
	lookups int
	counted int
}

func (a *countingApp) Arrival(id quickfix.SessionID) func() {
	a.lookups++
	if id != a.id {
		return nil
	}
	return func() { a.counted++ }
}

// TestSessionLogCountsArrivals: a session's Log counts every message
// QuickFIX/Go reads (OnIncoming), looking the session's count up once;
// on a cluster node's acceptor, whose application is set when the node
// leads (lateApp), nothing is counted before and every message after.
func TestSessionLogCountsArrivals(t *testing.T) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "A"}
	app := &countingApp{id: id}
	l, err := slogLogFactory{log: slog.New(slog.DiscardHandler), arrivals: app}.CreateSessionLog(id)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.OnIncoming(nil)
	}
	if app.counted != 3 || app.lookups != 1 {
		t.Fatalf("3 messages: %d counted, %d lookups; want 3 and 1", app.counted, app.lookups)
	}

	var late lateApp
	l, err = slogLogFactory{log: slog.New(slog.DiscardHandler), arrivals: &late}.CreateSessionLog(id)
	if err != nil {
		t.Fatal(err)
	}
	l.OnIncoming(nil) // no application yet: nothing to count it
	app = &countingApp{id: id}
	late.set(app)
	for range 2 {
		l.OnIncoming(nil)
	}
	if app.counted != 2 || app.lookups != 1 {
		t.Fatalf("2 messages once the application is set: %d counted, %d lookups; want 2 and 1", app.counted, app.lookups)
	}
}
