package gateway

import "testing"

// TestReplayFaultFailsTheRequest: a fault while a drop-copy replay renders
// its events fails that request with an error; the venue goes on.
func TestReplayFaultFailsTheRequest(t *testing.T) {
	g, err := New(Config{
		Sessions: []SessionConfig{{DropCopy: &DropCopyGrant{All: true}}},
		ReplayEvents: func(stop <-chan struct{}, fn func(ev []byte) bool) error {
			var stale []byte
			fn(stale[:1]) // a fault while the replay runs
			return nil
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := g.replayCopies(g.sessions[0], replayRequest{toNs: 1<<63 - 1})
	if err == nil || n != 0 {
		t.Fatalf("a replay that faulted: %d reports, err %v", n, err)
	}
}
