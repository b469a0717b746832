package fixtests

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestParseFrame(t *testing.T) {
	hb := "8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=123|"
	tests := []struct {
		name    string
		in      string
		want    int // bytes of the first message; 0 = need more
		wantErr string
	}{
		{name: "empty", in: "", want: 0},
		{name: "partial begin", in: "8", want: 0},
		{name: "partial header", in: "8=FIX.4.4|9=4", want: 0},
		{name: "partial body", in: hb[:40], want: 0},
		{name: "whole", in: hb, want: len(hb)},
		{name: "whole and more", in: hb + "8=FIX", want: len(hb)},
		{name: "garbage first", in: "x=FIX", wantErr: "does not start"},
		{name: "begin too long", in: "8=" + strings.Repeat("F", 40), wantErr: "BeginString longer"},
		{name: "empty begin", in: "8=|9=1|", wantErr: "empty BeginString"},
		{name: "no body length", in: "8=FIX.4.4|35=0|", wantErr: "not BodyLength"},
		{name: "body length not a number", in: "8=FIX.4.4|9=4x|", wantErr: "not a number"},
		{name: "body length empty", in: "8=FIX.4.4|9=|", wantErr: "empty BodyLength"},
		{name: "body length too many digits", in: "8=FIX.4.4|9=12345678|", wantErr: "BodyLength longer"},
		{name: "too large", in: "8=FIX.4.4|9=99999|", wantErr: "longer than"},
		{name: "length too short", in: "8=FIX.4.4|9=48|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=123|", wantErr: "does not end"},
		{name: "two-digit checksum", in: "8=FIX.4.4|9=5|35=0|10=12|x", wantErr: "does not end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := parseFrame(fix(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("n=%d err=%v; want error containing %q", n, err, tt.wantErr)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("n=%d err=%v; want %d", n, err, tt.want)
			}
		})
	}
}

func TestVerifyChecksum(t *testing.T) {
	head := "8=FIX.4.4|9=5|35=0|"
	good := fix(head + "10=" + sumOf(string(fix(head))) + "|")
	if err := verifyChecksum(good); err != nil {
		t.Fatalf("good message: %v", err)
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)-2]++ // last digit, possibly past '9', which must also fail
	if err := verifyChecksum(bad); err == nil {
		t.Fatalf("bad checksum accepted: %s", showMessage(bad))
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

// FuzzParseFrame feeds arbitrary bytes to the framer, which reads what the
// acceptor sends: it must never panic, and a frame it accepts must lie
// within the input and end with a well-formed CheckSum field.
func FuzzParseFrame(f *testing.F) {
	f.Add(fix("8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=20261130-10:11:12.345|56=TW|10=123|"))
	f.Add(fix("8=FIX.4.4|9=5|35=0|10=12|x"))
	f.Add(fix("8=FIX.4.4|9=99999|"))
	f.Add([]byte("8=\x019="))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseFrame(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("n=%d with error %v", n, err)
			}
			return
		}
		if n < 0 || n > len(b) || n > MaxMessageBytes {
			t.Fatalf("n=%d for %d bytes", n, len(b))
		}
		if n > 0 {
			tr := b[n-trailerBytes : n]
			if string(tr[:3]) != "10=" || tr[6] != soh {
				t.Fatalf("accepted frame ends with %q", tr)
			}
			_ = verifyChecksum(b[:n])
		}
	})
}
