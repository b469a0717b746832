package loadgen

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

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

// echoClient logs on to addr over raw TCP.
type echoClient struct {
	t   *testing.T
	c   net.Conn
	w   *fixWriter
	seq uint64
}

func dialEcho(t *testing.T, addr string) *echoClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ec := &echoClient{t: t, c: c, w: newFixWriter(adminBytesMax)}
	ec.send("A", func(w *fixWriter) { w.str(98, "0"); w.str(108, "30") })
	if got := ec.read(5 * time.Second); !bytes.Contains(got, []byte("\x0135=A\x01")) {
		t.Fatalf("no Logon answer: %q", got)
	}
	return ec
}

func (ec *echoClient) send(msgType string, body func(*fixWriter)) []byte {
	ec.seq++
	ec.w.reset()
	ec.w.header(msgType, "CLIENT1", "VENUE", ec.seq, []byte("20261130-12:00:00.000"))
	body(ec.w)
	msg, _ := ec.w.finish()
	msg = bytes.Clone(msg)
	if _, err := ec.c.Write(msg); err != nil {
		ec.t.Fatal(err)
	}
	return msg
}

// read returns what arrives within d (nil on timeout).
func (ec *echoClient) read(d time.Duration) []byte {
	ec.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	n, err := ec.c.Read(buf)
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		ec.t.Fatal(err)
	}
	return buf[:n]
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
	order := c.send("D", func(w *fixWriter) {
		w.str(11, "ORD1")
		w.str(55, "ACME")
		w.str(54, "1")
		w.str(38, "5")
		w.str(40, "2")
		w.str(44, "99.5")
	})
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the order was never synced")
	}
	if got := c.read(300 * time.Millisecond); len(got) != 0 {
		t.Fatalf("answered while its fdatasync was held: %q", got)
	}
	close(release)
	if got := c.read(5 * time.Second); !bytes.Contains(got, []byte("\x0111=ORD1\x01")) || !bytes.Contains(got, []byte("\x0135=8\x01")) {
		t.Fatalf("no ExecutionReport after the sync: %q", got)
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
	c.send("D", func(w *fixWriter) { w.str(11, "ORD1") })
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c.c)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %q, %v; want the connection closed without an answer", got, err)
	}
}
