package loadgen

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
)

// openEchoJournal opens a journal in a fresh directory whose fdatasyncs go
// through sync (nil: the real one).
func openEchoJournal(t *testing.T, sync journal.SyncFunc) (*journal.Writer, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := journal.Open(dir, journal.Config{SegmentBytes: 1 << 20, PayloadBytesMax: messageBytesMax, Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	return w, dir
}

// journaled reads every record of a closed journal.
func journaled(t *testing.T, dir string) [][]byte {
	t.Helper()
	r, err := journal.NewReader(dir, journal.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, bytes.Clone(rec.Payload))
	}
}

// A durable echo answers everything the load generator sends, over real
// TCP with real fdatasyncs, and its journal holds every order and cancel.
func TestDurableEchoJournalsEveryOrder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, dir := openEchoJournal(t, nil)
	e := NewDurableEcho(ln, "VENUE", w)
	cfg := testConfig(e.Addr(), 2000, 250*time.Millisecond)
	cfg.Sessions = 3
	res := runOK(t, cfg)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Lost() != 0 || res.OrdersSent != 500 || res.ERs != res.OrdersSent+res.CancelsSent {
		t.Fatalf("sent %d orders and %d cancels, got %d ERs, lost %d", res.OrdersSent, res.CancelsSent, res.ERs, res.Lost())
	}
	recs := journaled(t, dir)
	if int64(len(recs)) != res.OrdersSent+res.CancelsSent {
		t.Fatalf("journal holds %d records, want %d", len(recs), res.OrdersSent+res.CancelsSent)
	}
	var m inbound
	for i, rec := range recs {
		if err := m.parse(rec); err != nil {
			t.Fatalf("record %d is not a FIX message: %v", i, err)
		}
		if !is(m.msgType, "D") && !is(m.msgType, "F") {
			t.Fatalf("record %d has MsgType %q", i, m.msgType)
		}
	}
}

// heldSync holds every fdatasync until release is closed.
func heldSync(entered chan<- struct{}, release <-chan struct{}) journal.SyncFunc {
	return func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData {
			entered <- struct{}{}
			<-release
		}
		return journal.DefaultSync(f, kind)
	}
}

// dialEcho logs CLIENT1 on to the echo at addr.
func dialEcho(t *testing.T, addr string) *fixclient.Client {
	t.Helper()
	c, err := fixclient.Dial(addr, "CLIENT1", "VENUE")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Logon(true); err != nil {
		t.Fatalf("no Logon answer: %v", err)
	}
	return c
}

// sendOrder sends a NewOrderSingle with ClOrdID 11=ORD1 and returns its bytes.
func sendOrder(t *testing.T, c *fixclient.Client) []byte {
	t.Helper()
	F := fixclient.F
	order := fixclient.Build(F(35, "D"), F(49, c.Sender), F(56, c.Target), F(34, strconv.Itoa(c.NextOut)),
		F(52, "20261130-12:00:00.000"), F(11, "ORD1"), F(55, "ACME"), F(54, "1"), F(38, "5"), F(40, "2"), F(44, "99.5"))
	c.NextOut++
	if err := c.SendRaw(order); err != nil {
		t.Fatal(err)
	}
	return order
}

// No answer leaves before its order's fdatasync has returned, and the
// journal holds the order exactly as it came.
func TestDurableEchoAnswersOnlyWhenDurable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	w, dir := openEchoJournal(t, heldSync(entered, release))
	e := NewDurableEcho(ln, "VENUE", w)
	c := dialEcho(t, e.Addr())
	order := sendOrder(t, c)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the order was never synced")
	}
	var ne net.Error
	if m, err := c.ReadAny(300 * time.Millisecond); err == nil {
		t.Fatalf("answered while its fdatasync was held: %v", m)
	} else if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatal(err)
	}
	close(release)
	if _, err := c.Expect(5*time.Second, "8", map[int]string{11: "ORD1"}); err != nil {
		t.Fatalf("no ExecutionReport after the sync: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := journaled(t, dir); len(recs) != 1 || !bytes.Equal(recs[0], order) {
		t.Fatalf("journal holds %q, want the order %q", recs, order)
	}
}

// A failed fdatasync answers nothing: the connection closes.
func TestDurableEchoFailedSyncClosesWithoutAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := openEchoJournal(t, func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData {
			return syscall.EIO
		}
		return journal.DefaultSync(f, kind)
	})
	e := NewDurableEcho(ln, "VENUE", w)
	defer e.Close()
	c := dialEcho(t, e.Addr())
	sendOrder(t, c)
	if m, err := c.ReadAny(5 * time.Second); !errors.Is(err, io.EOF) {
		t.Fatalf("read %v, %v; want the connection closed without an answer", m, err)
	}
}
