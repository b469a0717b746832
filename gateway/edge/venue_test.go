package edge

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

// closeEvent is one OnClose call.
type closeEvent struct {
	key    SessionKey
	reason Reason
}

// venue is a QuickFIX/Go acceptor behind an edge Listener, as `fixvenue
// serve` wires them.
type venue struct {
	t        testing.TB
	venueID  string // the venue's CompID: unique per test, QuickFIX/Go's session registry is global
	l        *Listener
	acceptor *quickfix.Acceptor
	app      *testApp
	mu       sync.Mutex
	closes   []closeEvent
	writes   map[SessionKey]int
}

// testPassword is the password of a test client.
func testPassword(compID string) string { return "pw-" + compID }

// testClients returns CompIDs prefix1..prefixN.
func testClients(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}

// testCredentials gives every client its test password.
func testCredentials(clients ...string) Credentials {
	c := Credentials{}
	for _, id := range clients {
		c[id] = Credential{Password: testPassword(id)}
	}
	return c
}

var venueIDs atomic.Int64

// nextVenueID returns a venue CompID no other test uses.
func nextVenueID() string { return fmt.Sprintf("VENUE%d", venueIDs.Add(1)) }

// startVenue starts an edge listener with cfg (Address and Authenticator
// filled in when empty) and a QuickFIX/Go acceptor behind it, validating
// with the FIX44 dictionary.
func startVenue(t testing.TB, cfg Config, clients ...string) *venue {
	return startVenueWith(t, cfg, nil, clients...)
}

// noDictionary are QuickFIX/Go settings for tests that need no validation
// against the dictionary.
var noDictionary = map[string]string{"DataDictionary": "none"}

// startVenueWith is startVenue with extra QuickFIX/Go global settings.
func startVenueWith(t testing.TB, cfg Config, qfSettings map[string]string, clients ...string) *venue {
	t.Helper()
	return startVenueAs(t, nextVenueID(), cfg, qfSettings, clients...)
}

// startVenueAs is startVenueWith with a chosen venue CompID.
func startVenueAs(t testing.TB, venueID string, cfg Config, qfSettings map[string]string, clients ...string) *venue {
	t.Helper()
	v := &venue{t: t, venueID: venueID, app: &testApp{hold: make(chan struct{})}, writes: map[SessionKey]int{}}
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1:0"
	}
	if cfg.Authenticator == nil {
		cfg.Authenticator = testCredentials(clients...)
	}
	onClose := cfg.OnClose
	cfg.OnClose = func(k SessionKey, r Reason) {
		v.mu.Lock()
		v.closes = append(v.closes, closeEvent{k, r})
		v.mu.Unlock()
		if onClose != nil {
			onClose(k, r)
		}
	}
	onWrite := cfg.OnWrite
	cfg.OnWrite = func(k SessionKey, n int) {
		v.mu.Lock()
		v.writes[k] += n
		v.mu.Unlock()
		if onWrite != nil {
			onWrite(k, n)
		}
	}
	l, err := Listen(cfg)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	v.l = l
	settings := map[string]string{"SenderCompID": venueID}
	for k, val := range qfSettings {
		settings[k] = val
	}
	v.acceptor = startAcceptorWith(t, v.app, l, nil, settings, clients...)
	t.Cleanup(v.stop)
	return v
}

func (v *venue) stop() {
	v.acceptor.Stop()
	_ = v.l.Close()
}

func (v *venue) addr() string { return v.l.Addr().String() }

// dial opens a client connection to the venue.
func (v *venue) dial(compID string) *fixClient {
	v.t.Helper()
	conn, err := net.DialTimeout("tcp", v.addr(), 5*time.Second)
	if err != nil {
		v.t.Fatalf("dial: %v", err)
	}
	v.t.Cleanup(func() { _ = conn.Close() })
	return v.client(conn, compID)
}

// client makes a FIX client of this venue over conn.
func (v *venue) client(conn net.Conn, compID string) *fixClient {
	c := newFixClient(v.t, conn, compID)
	c.venueID = v.venueID
	return c
}

// logon dials and logs compID on with its password (sequence numbers reset).
func (v *venue) logon(compID string) *fixClient {
	v.t.Helper()
	c := v.dial(compID)
	c.sendMsg("A", logonBody(testPassword(compID))...)
	c.expect("A")
	return c
}

// newOrder sends a NewOrderSingle with clOrdID.
func (c *fixClient) newOrder(clOrdID string) {
	c.t.Helper()
	c.sendMsg("D", newOrderBody(clOrdID)...)
}

func newOrderBody(clOrdID string) []string {
	return []string{"11=" + clOrdID, "21=1", "55=ACME", "54=1", "60=" + sendingTime(), "38=10", "40=2", "44=100"}
}

// trade sends a NewOrderSingle and expects its ExecutionReport.
func (c *fixClient) trade(clOrdID string) {
	c.t.Helper()
	c.newOrder(clOrdID)
	er := c.expect("8")
	if er.get("11") != clOrdID {
		c.t.Fatalf("%s: ExecutionReport for %q, want %q", c.compID, er.get("11"), clOrdID)
	}
}

// waitCloseEvent waits for OnClose of compID's session with reason, among
// the events after the first `since`. OnClose comes when QuickFIX/Go
// closes the connection, which it does only after it has processed every
// message the edge had already framed (up to a framer buffer of them, a few
// hundred orders for a flooding client): the wait lasts while QuickFIX/Go
// makes progress on them, and ends closeEventQuiet after its last one, or
// at closeEventMax in all.
func (v *venue) waitCloseEvent(t testing.TB, since int, compID string, reason Reason) {
	t.Helper()
	start := time.Now()
	progress := func() int64 { return v.app.fromApp.Load() + v.app.fromAdm.Load() }
	seen, quietSince := progress(), start
	for now := start; now.Sub(quietSince) < closeEventQuiet && now.Sub(start) < closeEventMax; now = time.Now() {
		if p := progress(); p != seen {
			seen, quietSince = p, now
		}
		for _, e := range v.closeEvents()[since:] {
			if e.key.ClientCompID == compID {
				if e.reason != reason {
					t.Fatalf("%s closed for %s, want %s", compID, e.reason, reason)
				}
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no OnClose for %s within %s (%s since QuickFIX/Go last processed a message)",
		compID, time.Since(start).Round(time.Millisecond), time.Since(quietSince).Round(time.Millisecond))
}

// Bounds of waitCloseEvent: the wait after the last message QuickFIX/Go
// processed, and the whole wait.
const (
	closeEventQuiet = 10 * time.Second
	closeEventMax   = 60 * time.Second
)

func (v *venue) closeEvents() []closeEvent {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]closeEvent(nil), v.closes...)
}

// waitReleased waits until no connection is logged on as compID.
func (v *venue) waitReleased(compID string) {
	v.t.Helper()
	key := SessionKey{BeginString: "FIX.4.4", ClientCompID: compID, VenueCompID: v.venueID}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := v.l.Session(key); !ok {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	v.t.Fatalf("%s still logged on", compID)
}

func TestSmokeLogonAndTrade(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{}, noDictionary, "CLIENT1", "CLIENT2")
	c1 := v.logon("CLIENT1")
	c2 := v.logon("CLIENT2")
	c1.trade("a1")
	c2.trade("b1")
	c1.trade("a2")
	if got := v.l.Stats().LogonsPassed.Load(); got != 2 {
		t.Fatalf("LogonsPassed = %d", got)
	}
}

// TestLogonWaitsForThePreviousConnection: a client that drops its
// connection and logs on again at once can reach the venue before the old
// connection's end has; the new Logon waits (up to duplicateLogonWait) for
// the old connection to be released instead of being refused as a
// duplicate. Here the old connection closes 50 ms after the new Logon.
// The wait (and the Logon's own deadline, which bounds it) is a minute
// here: on a loaded machine the old connection's release, which the venue
// bounds at duplicateLogonWait, sometimes came later, and the new Logon
// was refused.
func TestLogonWaitsForThePreviousConnection(t *testing.T) {
	v := startVenue(t, Config{duplicateLogonWait: time.Minute, LogonTimeout: time.Minute}, "CLIENT1")
	first := v.logon("CLIENT1")
	second := v.dial("CLIENT1")
	second.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	time.Sleep(50 * time.Millisecond)
	_ = first.conn.Close()
	second.expect("A")
	second.trade("after-relogon")
}
