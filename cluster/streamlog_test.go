package cluster

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestClosedStreamsLoggedOnce: a peer configured otherwise redials ten times
// a second; each kind of closed stream is logged once per streamLogEvery,
// another kind at once.
func TestClosedStreamsLoggedOnce(t *testing.T) {
	var out bytes.Buffer
	tr := &Transport{cfg: TransportConfig{Logger: slog.New(slog.NewTextHandler(&out, nil))}}
	for range 20 {
		tr.logStreamClosed("127.0.0.1:1", errors.New("cluster: peer sent a hello from unknown node 1"))
	}
	tr.logStreamClosed("127.0.0.1:2", errors.New("cluster: peer sent a hello from unknown node 2"))
	if n := strings.Count(out.String(), "peer stream closed"); n != 2 {
		t.Fatalf("%d lines logged, want 2:\n%s", n, out.String())
	}
}
