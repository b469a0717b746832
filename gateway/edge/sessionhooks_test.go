package edge

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
)

// size is the message's length on the wire.
func (f fixFields) size() int {
	n := 0
	for _, kv := range f {
		n += len(kv.tag) + len(kv.value) + 2
	}
	return n
}

// TestPacedSends shows the pacing hook the application uses: it calls
// SendToTarget for a session's next message only after the session's
// connection reports the previous one written. Every message arrives, in
// order, and OnWrite accounts for every byte the client receives.
func TestPacedSends(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{}, noDictionary, "CLIENT1")
	c := v.logon("CLIENT1")
	key := SessionKey{BeginString: "FIX.4.4", ClientCompID: "CLIENT1", VenueCompID: v.venueID}
	conn, ok := v.l.Session(key)
	if !ok || conn.Key() != key || !conn.Source().IsLoopback() {
		t.Fatalf("session %v not found", key)
	}
	sid := quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: v.venueID, TargetCompID: "CLIENT1"}
	select {
	case <-conn.Written(): // the Logon answer
	case <-time.After(5 * time.Second):
		t.Fatal("no Written for the Logon answer")
	}
	v.mu.Lock()
	bytesBefore := v.writes[key]
	v.mu.Unlock()

	const news = 200
	go func() {
		for i := range news {
			m := quickfix.NewMessage()
			m.Header.SetString(35, "B")
			m.Body.SetString(148, fmt.Sprintf("headline %d", i))
			if err := quickfix.SendToTarget(m, sid); err != nil {
				t.Errorf("send: %v", err)
				return
			}
			select {
			case <-conn.Written():
			case <-time.After(5 * time.Second):
				t.Errorf("message %d never written", i)
				return
			}
		}
	}()
	received := 0
	for i := range news {
		m := c.expect("B")
		if m.get("148") != fmt.Sprintf("headline %d", i) {
			t.Fatalf("got %q, want headline %d", m.get("148"), i)
		}
		received += m.size()
	}
	v.mu.Lock()
	written := v.writes[key] - bytesBefore
	v.mu.Unlock()
	if written != received {
		t.Fatalf("OnWrite reported %d bytes, the client received %d", written, received)
	}
}

// TestOnClose: every session the edge handed to QuickFIX/Go ends with one
// OnClose carrying why, and its slot is free for the next Logon.
func TestOnClose(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{}, noDictionary, "CLIENT1", "CLIENT2")
	c := v.logon("CLIENT1")
	c.sendMsg("5")
	c.expect("5")
	c.expectClosed(5 * time.Second)
	v.waitCloseEvent(t, 0, "CLIENT1", ReasonClosedBySession)

	c2 := v.logon("CLIENT2")
	_ = c2.conn.Close()
	v.waitCloseEvent(t, 1, "CLIENT2", ReasonPeerClosed)

	again := v.logon("CLIENT1")
	again.trade("again")
	if n := len(v.closeEvents()); n != 2 {
		t.Fatalf("%d OnClose calls, want 2", n)
	}
	waitStat(t, "sessions open", v.l.Stats().SessionsOpen.Load, 1)
}

// TestClientClosingOnTheLogoutAnswer: a client that closes its connection
// as soon as it reads the answer to its Logout was still logged out by
// the session: its end often reached the edge's reader before QuickFIX/Go
// closed the connection, and the close was counted as the client's.
func TestClientClosingOnTheLogoutAnswer(t *testing.T) {
	t.Parallel()
	// Several sessions, one logon each (a CompID's logons are rate
	// limited): the client's end reached the reader first often, not always.
	var comps []string
	for i := range 10 {
		comps = append(comps, fmt.Sprintf("CLIENT%d", i+1))
	}
	v := startVenueWith(t, Config{}, noDictionary, comps...)
	for i, comp := range comps {
		c := v.logon(comp)
		c.sendMsg("5")
		c.expect("5")
		_ = c.conn.Close()
		v.waitCloseEvent(t, i, comp, ReasonClosedBySession)
	}
}

// captureLogs is a QuickFIX/Go LogFactory that keeps every line.
type captureLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captureLogs) Create() (quickfix.Log, error) { return c, nil }
func (c *captureLogs) CreateSessionLog(quickfix.SessionID) (quickfix.Log, error) {
	return c, nil
}
func (c *captureLogs) write(s string) {
	c.mu.Lock()
	c.buf.WriteString(s + "\n")
	c.mu.Unlock()
}
func (c *captureLogs) OnIncoming(b []byte)                 { c.write("in " + string(b)) }
func (c *captureLogs) OnOutgoing(b []byte)                 { c.write("out " + string(b)) }
func (c *captureLogs) OnEvent(s string)                    { c.write(s) }
func (c *captureLogs) OnEventf(f string, a ...interface{}) { c.write(fmt.Sprintf(f, a...)) }
func (c *captureLogs) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// TestPasswordsNeverLogged logs on with passwords (right, wrong, and a
// refused NewPassword), then greps every log — QuickFIX/Go's message and event
// logs, the application's view of the messages, the edge's own log at debug
// level — for them: the edge removes 554 and 925 before QuickFIX/Go sees a
// Logon and never logs message contents.
func TestPasswordsNeverLogged(t *testing.T) {
	t.Parallel()
	var edgeLog bytes.Buffer
	var edgeLogMu sync.Mutex
	qfLogs := &captureLogs{}
	app := &testApp{}
	secrets := map[string]string{"CLIENT1": "s3cret-one", "CLIENT2": "s3cret-two"}
	l, err := Listen(Config{
		Address:       "127.0.0.1:0",
		Authenticator: Credentials{"CLIENT1": {Password: secrets["CLIENT1"]}, "CLIENT2": {Password: secrets["CLIENT2"]}},
		Logger:        slog.New(slog.NewTextHandler(lockedBuffer{&edgeLogMu, &edgeLog}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	venueID := nextVenueID()
	acceptor := startAcceptorWith(t, app, l, qfLogs, map[string]string{"SenderCompID": venueID, "DataDictionary": "none"}, "CLIENT1", "CLIENT2")
	t.Cleanup(func() { acceptor.Stop(); _ = l.Close() })
	v := &venue{t: t, l: l, venueID: venueID, writes: map[SessionKey]int{}}

	// A NewPassword is refused (the table does not change), and not logged.
	asked := v.dial("CLIENT1")
	asked.sendMsg("A", "98=0", "108=30", "141=Y", "554="+secrets["CLIENT1"], "925=n3w-s3cret")
	expectRefused(t, asked, NewPasswordRefused)
	c1 := v.dial("CLIENT1")
	c1.sendMsg("A", "98=0", "108=30", "141=Y", "554="+secrets["CLIENT1"])
	c1.expect("A")
	c1.trade("pw-1")
	bad := v.dial("CLIENT2")
	bad.sendMsg("A", "98=0", "108=30", "141=Y", "554=wr0ng-guess")
	expectRefused(t, bad, "Logon refused")
	c2 := v.dial("CLIENT2")
	c2.sendMsg("A", "98=0", "108=30", "141=Y", "554="+secrets["CLIENT2"])
	c2.expect("A")
	c2.trade("pw-2")
	// A Logon inside a session is stripped too; QuickFIX/Go answers it.
	c1.sendMsg("A", "98=0", "108=30", "554=in-s3ssion-secret")
	if m, err := c1.read(5 * time.Second); err != nil {
		t.Fatalf("in-session Logon unanswered: %v %v", m, err)
	}

	app.mu.Lock()
	appSeen := strings.Join(app.incoming, "\n")
	app.mu.Unlock()
	edgeLogMu.Lock()
	edgeText := edgeLog.String()
	edgeLogMu.Unlock()
	if !strings.Contains(qfLogs.String(), "35=A") || !strings.Contains(appSeen, "35=A") || !strings.Contains(edgeText, "logon refused") {
		t.Fatalf("logs are missing the Logons they must show")
	}
	for where, text := range map[string]string{"QuickFIX/Go log": qfLogs.String(), "application": appSeen, "edge log": edgeText} {
		for _, secret := range []string{secrets["CLIENT1"], secrets["CLIENT2"], "n3w-s3cret", "wr0ng-guess", "in-s3ssion-secret", "554=", "925="} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains %q", where, secret)
			}
		}
	}
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestDisconnectKeepsTheSessionUntilQuickFIXSeesIt: a connection the
// application ends (Conn.Disconnect: a client not reading, an operator's
// logout) stays its session's until QuickFIX/Go, done with what it was
// doing, has seen the end and closed it. The client's Logon made
// meanwhile waits for that and is answered. Released at once, it reached
// QuickFIX/Go while the session was still connected there, and
// QuickFIX/Go closed it with no answer.
func TestDisconnectKeepsTheSessionUntilQuickFIXSeesIt(t *testing.T) {
	t.Parallel()
	v := startVenueWith(t, Config{duplicateLogonWait: 10 * time.Second}, noDictionary, "CLIENT1")
	_, conn, key, release := holdSessionGoroutine(t, v)
	conn.Disconnect()
	<-conn.Done()
	if _, held := v.l.Session(key); !held {
		t.Fatal("the session was released before QuickFIX/Go saw its connection end")
	}
	go func() {
		// QuickFIX/Go goes on once the Logon below has reached the edge.
		time.Sleep(100 * time.Millisecond)
		release()
	}()
	v.logon("CLIENT1")
}

// TestLogonWaitsForAnEndedConnectionBeyondTheDuplicateWait: a client whose
// connection ended while QuickFIX/Go's session goroutine was busy (here in
// FromApp; a resend or a mass status it is writing in the venue) logs on
// again. Its old connection has ended, so the Logon waits for QuickFIX/Go
// to release it, up to the Logon's deadline, and is answered: it was
// refused as a duplicate once duplicateLogonWait had passed, a bound meant
// for a connection still open.
func TestLogonWaitsForAnEndedConnectionBeyondTheDuplicateWait(t *testing.T) {
	t.Parallel()
	const openWait = 20 * time.Millisecond
	v := startVenueWith(t, Config{duplicateLogonWait: openWait, LogonTimeout: time.Minute}, noDictionary, "CLIENT1")
	c, conn, key, release := holdSessionGoroutine(t, v)
	_ = c.conn.Close()
	for deadline := time.Now().Add(5 * time.Second); !conn.ended(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the edge never saw the client's close")
		}
	}
	again := v.dial("CLIENT1")
	again.sendMsg("A", logonBody(testPassword("CLIENT1"))...)
	time.Sleep(10 * openWait) // past the wait for an open connection
	if _, held := v.l.Session(key); !held {
		t.Fatal("the session was released before QuickFIX/Go saw its connection end")
	}
	release()
	again.expect("A")
	again.trade("after-relogon")
}

// holdSessionGoroutine logs CLIENT1 on and holds QuickFIX/Go's session
// goroutine in the application (an order "hold" in FromApp) until release,
// called at the test's end at the latest. It returns the client, the
// edge's connection and its key.
func holdSessionGoroutine(t *testing.T, v *venue) (c *fixClient, conn *Conn, key SessionKey, release func()) {
	t.Helper()
	var once sync.Once
	release = func() { once.Do(func() { close(v.app.hold) }) }
	t.Cleanup(release)
	c = v.logon("CLIENT1")
	key = SessionKey{BeginString: "FIX.4.4", ClientCompID: "CLIENT1", VenueCompID: v.venueID}
	conn, ok := v.l.Session(key)
	if !ok {
		t.Fatal("CLIENT1 has no connection")
	}
	c.newOrder("hold")
	for deadline := time.Now().Add(5 * time.Second); !v.app.holding.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("QuickFIX/Go never took the held order")
		}
	}
	return c, conn, key, release
}

// TestLogonTakesTheSessionOfAConnectionItsClientDropped: a client drops its
// connection (a reset, or a close) right after its Logon, before
// QuickFIX/Go has read anything from it, and logs on again at once. No one
// reads the old connection yet (QuickFIX/Go takes it once its session
// goroutine is free), so only the kernel knows it ended: the new Logon was
// refused as a duplicate once duplicateLogonWait had passed. The edge asks
// the kernel, and the new Logon waits for QuickFIX/Go to release the old
// connection, up to its deadline, and is then handed over; the session
// never has two connections. The test plays QuickFIX/Go.
func TestLogonTakesTheSessionOfAConnectionItsClientDropped(t *testing.T) {
	t.Parallel()
	for _, reset := range []bool{true, false} {
		name := "close"
		if reset {
			name = "reset"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const openWait = 20 * time.Millisecond
			l, err := Listen(Config{Address: "127.0.0.1:0", Authenticator: testCredentials("CLIENT1"),
				duplicateLogonWait: openWait, LogonTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			key := SessionKey{BeginString: "FIX.4.4", ClientCompID: "CLIENT1", VenueCompID: "VENUE"}
			first := dialPlain(t, l.Addr().String())
			newFixClient(t, first, "CLIENT1").sendMsg("A", logonBody(testPassword("CLIENT1"))...)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if _, held := l.Session(key); held {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the first Logon never passed the gate")
				}
			}
			if reset {
				_ = first.(*net.TCPConn).SetLinger(0)
			}
			_ = first.Close()
			second := dialPlain(t, l.Addr().String())
			newFixClient(t, second, "CLIENT1").sendMsg("A", logonBody(testPassword("CLIENT1"))...)
			time.Sleep(10 * openWait) // past the wait for an open connection
			if n := l.Stats().Count(ReasonLogonDuplicate); n != 0 {
				t.Fatalf("the new Logon was refused as a duplicate (%d)", n)
			}

			// QuickFIX/Go takes the old connection, reads its Logon and its
			// end, and closes it; the new one is handed over then.
			accepted := make(chan *Conn, 2)
			go func() {
				for range 2 {
					nc, err := l.Accept()
					if err != nil {
						return
					}
					accepted <- nc.(*Conn)
				}
			}()
			old := receiveConn(t, accepted)
			if old.RemoteAddr().String() != first.LocalAddr().String() {
				t.Fatalf("first handed over: %v, want the old connection %v", old.RemoteAddr(), first.LocalAddr())
			}
			buf := make([]byte, 4096)
			_ = old.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				if _, err := old.Read(buf); err != nil {
					if isTimeout(err) {
						t.Fatal("the old connection's end was never read")
					}
					break
				}
			}
			select {
			case c := <-accepted:
				t.Fatalf("the new connection %v was handed over while the old one was the session's", c.RemoteAddr())
			case <-time.After(50 * time.Millisecond):
			}
			_ = old.Close()
			next := receiveConn(t, accepted)
			t.Cleanup(func() { _ = next.Close() })
			if next.RemoteAddr().String() != second.LocalAddr().String() {
				t.Fatalf("handed over: %v, want the new connection %v", next.RemoteAddr(), second.LocalAddr())
			}
			if _, held := l.Session(key); !held {
				t.Fatal("the new connection does not hold the session")
			}
		})
	}
}

// receiveConn waits, bounded, for a connection the listener handed over.
func receiveConn(t *testing.T, accepted <-chan *Conn) *Conn {
	t.Helper()
	select {
	case c := <-accepted:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no connection handed over")
		return nil
	}
}
