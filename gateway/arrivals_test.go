package gateway

import (
	"testing"

	"github.com/quickfixgo/quickfix"
)

// stopPacer is a Pacer of one connection that records StopTaking
// (InboundStopper).
type stopPacer struct {
	written chan struct{}
	stops   int
}

func (p *stopPacer) WriteDone(quickfix.SessionID) (written, closed <-chan struct{}) {
	return p.written, nil
}
func (p *stopPacer) Disconnect(quickfix.SessionID, <-chan struct{}) {}
func (p *stopPacer) StopTaking(quickfix.SessionID)                  { p.stops++ }

// TestArrivedCountsEveryMessage: the message rate counts each message as it
// arrives (Arrival), before anything reads it; past the rate the session is
// logged out once, the edge asked once to stop taking what it sends, and
// FromApp takes nothing more, even a message that would pass every check;
// a new logon starts again.
func TestArrivedCountsEveryMessage(t *testing.T) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "A"}
	now := int64(1_000_000_000)
	g, err := New(Config{Sessions: []SessionConfig{{ID: id, MessagesPerSecondLogout: 3}}, Now: func() int64 { return now }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &stopPacer{written: make(chan struct{})}
	g.SetPacer(p)
	s := g.sessions[0]
	arrived := g.Arrivals().Arrival(id)
	if g.Arrivals().Arrival(quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "B"}) != nil {
		t.Fatal("a count for a session the gateway does not have")
	}
	arrived() // before the logon: a Logon, not counted
	s.loggedOn.Store(true)
	for i := range 3 {
		arrived()
		if s.overRate.Load() {
			t.Fatalf("over the rate at message %d of 3 allowed", i+1)
		}
	}
	for range 10 {
		arrived()
	}
	if !s.overRate.Load() {
		t.Fatal("13 messages in a second passed a rate of 3")
	}
	if n := s.out.queue.len(); n != 1 {
		t.Fatalf("%d messages queued for the session, want one Logout", n)
	}
	if o, _ := s.out.queue.pop(); o.m == nil || !o.m.IsMsgTypeOf("5") {
		t.Fatalf("queued %v, want a Logout", o.m)
	}
	if p.stops != 1 {
		t.Fatalf("the edge was asked %d times to stop taking the session's messages, want once", p.stops)
	}
	m := quickfix.NewMessage()
	m.Header.SetString(35, "B") // any type: nothing reads it
	if rej := g.Application().FromApp(m, id); rej != nil {
		t.Fatalf("FromApp over the rate answered %v", rej)
	}
	if n := s.out.queue.len(); n != 0 {
		t.Fatalf("FromApp over the rate queued %d messages", n)
	}

	// A new connection's logon starts again, the window having moved on.
	s.loggedOn.Store(false)
	g.Application().OnLogon(id)
	now += 2_000_000_000
	if s.overRate.Load() {
		t.Fatal("still over the rate after a new logon")
	}
	arrived()
	if s.overRate.Load() {
		t.Fatal("the first message after a new logon went over the rate")
	}
}

// BenchmarkArrived: what counting a message as it arrives costs (the
// session's lookup, the window under its lock).
func BenchmarkArrived(b *testing.B) {
	id := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "A"}
	g, err := New(Config{Sessions: []SessionConfig{{ID: id, MessagesPerSecondLogout: 1 << 30}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	g.sessions[0].loggedOn.Store(true)
	arrived := g.Arrivals().Arrival(id)
	b.ReportAllocs()
	for b.Loop() {
		arrived()
	}
}
