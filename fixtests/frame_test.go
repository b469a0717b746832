package fixtests

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

func TestVerifyChecksum(t *testing.T) {
	head := "8=FIX.4.4|9=5|35=0|"
	good := fix(head + "10=" + sumOf(string(fix(head))) + "|")
	if err := verifyChecksum(good); err != nil {
		t.Fatalf("good message: %v", err)
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)-2]++ // last digit, possibly past '9', which must also fail
	err := verifyChecksum(bad)
	if want := "CheckSum field says " + string(bad[len(bad)-4:len(bad)-1]) + " but the bytes sum to " + sumOf(string(fix(head))); err == nil || err.Error() != want {
		t.Fatalf("bad checksum: %v, want %q", err, want)
	}
}

// TestMessageReaderSplitsStream feeds two messages in awkward pieces through
// a real connection and checks that they come out whole and in order.
func TestMessageReaderSplitsStream(t *testing.T) {
	// A TCP connection, not net.Pipe: a pipe's SetReadDeadline fails once
	// the other end has closed, which a socket's never does, so a pipe would
	// make the end of the stream an error that the runner never meets.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	m1 := fix("8=FIX.4.4|9=5|35=0|10=" + sumOf(string(fix("8=FIX.4.4|9=5|35=0|"))) + "|")
	m2 := fix("8=FIX.4.4|9=10|35=1|112=|10=" + sumOf(string(fix("8=FIX.4.4|9=10|35=1|112=|"))) + "|")
	stream := append(append([]byte(nil), m1...), m2...)
	go func() {
		for i := 0; i < len(stream); i += 7 {
			if _, err := server.Write(stream[i:min(i+7, len(stream))]); err != nil {
				return
			}
		}
		server.Close()
	}()
	r := newMessageReader(client)
	deadline := time.Now().Add(10 * time.Second)
	for _, want := range [][]byte{m1, m2} {
		got, err := r.next(deadline)
		if err != nil || string(got) != string(want) {
			t.Fatalf("got %s, %v; want %s", showMessage(got), err, showMessage(want))
		}
	}
	if _, err := r.next(deadline); !errors.Is(err, errPeerClosed) {
		t.Fatalf("after the stream: %v, want errPeerClosed", err)
	}
}

// TestMessageReaderReportsFraming checks that bytes that cannot be a FIX
// message fail with a framing error and stay available for the report.
func TestMessageReaderReportsFraming(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	sent := []byte("HTTP/1.1 400 Bad Request\r\n")
	go func() {
		_, _ = server.Write(sent)
		server.Close()
	}()
	r := newMessageReader(client)
	_, err := r.next(time.Now().Add(10 * time.Second))
	if !errors.Is(err, fixwire.ErrBeginString) || string(r.buffered()) != string(sent) {
		t.Fatalf("next = %v with %q buffered; want ErrBeginString with %q", err, r.buffered(), sent)
	}
}
