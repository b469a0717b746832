package httpbound

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// serve runs an http.Server bounded to max connections on 127.0.0.1, with
// a header timeout of an hour: only the bound closes a silent connection.
// GET /block waits until release is closed; the handler says when it is in.
func serve(t *testing.T, max int) (addr string, b *Counts, entered chan struct{}, release chan struct{}) {
	t.Helper()
	entered, release = make(chan struct{}, 64), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /block", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		io.WriteString(w, "released\n")
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour}
	b = Bound(srv, max)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), b, entered, release
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// get sends GET path on c and reads the answer's status line.
func get(t *testing.T, c net.Conn, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return line
}

// closed waits (bounded by c's deadline) until the server closes c.
func closed(t *testing.T, c net.Conn) bool {
	t.Helper()
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// waiting counts the connections waiting for a request.
func waiting(b *Counts) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.conns {
		if !at.IsZero() {
			n++
		}
	}
	return n
}

func waitOpen(t *testing.T, b *Counts, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); b.Open() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", b.Open(), n)
		}
	}
}

// TestBoundClosesTheLongestWaiting: at the bound, a new connection closes
// the one that has waited longest for a request, and is served; one kept
// alive after its answer waits again.
func TestBoundClosesTheLongestWaiting(t *testing.T) {
	addr, b, _, _ := serve(t, 3)
	first := dial(t, addr)
	waitOpen(t, b, 1)
	second := dial(t, addr)
	if got := get(t, second, "/"); got != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("answer %q", got)
	}
	// The server marks second idle once its answer is written, which the
	// client may read first.
	for deadline := time.Now().Add(10 * time.Second); waiting(b) != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections wait, want 2", waiting(b))
		}
	}
	third := dial(t, addr)
	waitOpen(t, b, 3)
	fourth := dial(t, addr)
	if !closed(t, first) {
		t.Fatal("the connection that waited longest was not closed for a new one")
	}
	if got := get(t, fourth, "/"); got != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("the new connection: %q", got)
	}
	// second is idle since its answer, before third was opened.
	dial(t, addr)
	if !closed(t, second) {
		t.Fatal("the idle connection was not closed for a new one")
	}
	if b.Evicted() != 2 || b.Refused() != 0 {
		t.Fatalf("evicted %d, refused %d", b.Evicted(), b.Refused())
	}
	_ = third
}

// TestBoundRefusesWhenEveryOneServes: with every connection serving a
// request, a new one is closed at once, and those served are answered.
func TestBoundRefusesWhenEveryOneServes(t *testing.T) {
	addr, b, entered, release := serve(t, 2)
	answers := make(chan string, 2)
	for range 2 {
		c := dial(t, addr)
		go func() {
			_, _ = io.WriteString(c, "GET /block HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			answers <- line
		}()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the blocking request was not served")
		}
	}
	if !closed(t, dial(t, addr)) {
		t.Fatal("a connection past the bound was kept with every one serving")
	}
	close(release)
	for range 2 {
		if got := <-answers; got != "HTTP/1.1 200 OK\r\n" {
			t.Fatalf("a request served at the bound was answered %q", got)
		}
	}
	if b.Refused() != 1 || b.Evicted() != 0 {
		t.Fatalf("refused %d, evicted %d", b.Refused(), b.Evicted())
	}
}
