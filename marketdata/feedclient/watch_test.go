package feedclient

import (
	"strings"
	"testing"
)

// TestBookViewSeq: the watch view shows the last sequence number applied,
// and "-" before the client has joined (after a failover it starts again
// from nothing; it showed 2^64-1).
func TestBookViewSeq(t *testing.T) {
	b := &Book{Symbol: "ACME"}
	if got := string(appendBookView(nil, b, nil, 5, 0)); !strings.Contains(got, "seq -  ") {
		t.Fatalf("not joined: %q", got)
	}
	if got := string(appendBookView(nil, b, nil, 5, 42)); !strings.Contains(got, "seq 41  ") {
		t.Fatalf("joined: %q", got)
	}
}
