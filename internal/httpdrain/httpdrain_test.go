package httpdrain

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// serve starts srv on a loopback listener, tracked, and returns its
// address and the listener.
func serve(t *testing.T, h http.Handler) (*http.Server, *Tracker, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	srv.SetKeepAlivesEnabled(false)
	tr := Track(srv)
	go func() { _ = srv.Serve(ln) }()
	return srv, tr, ln
}

// A call being served when the drain begins is answered in full, and the
// drain ends once it is, well before its deadline.
func TestDrainAnswersTheCallInFlight(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	srv, tr, ln := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "answered")
	}))
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-entered
	_ = ln.Close()
	drained := make(chan struct{})
	go func() {
		Drain(srv, tr, time.Now().Add(time.Minute))
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("the drain ended with a call still being served")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if b := <-got; b != "answered" {
		t.Fatalf("the call in flight got %q, want its answer", b)
	}
	select {
	case <-drained:
	case <-time.After(30 * time.Second):
		t.Fatal("the drain did not end once its one call was answered")
	}
}

// A connection that sends nothing is closed at the deadline.
func TestDrainClosesAnIdleConnectionAtItsDeadline(t *testing.T) {
	srv, tr, ln := serve(t, http.NotFoundHandler())
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); tr.count() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the server never counted the connection")
		}
		time.Sleep(time.Millisecond)
	}
	_ = ln.Close()
	Drain(srv, tr, time.Now().Add(100*time.Millisecond))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the idle connection was still open after the drain")
	}
}
