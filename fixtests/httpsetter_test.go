package fixtests_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/fixtests"
)

// hookRecorder is a stand-in for the venue's test hook: it records each
// request and answers with the status it is given.
type hookRecorder struct {
	mu       sync.Mutex
	requests []*http.Request
	status   int
	body     string
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r)
	status, body := h.status, h.body
	h.mu.Unlock()
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func TestHTTPSetter(t *testing.T) {
	rec := &hookRecorder{status: http.StatusNoContent}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	setter := fixtests.HTTPSetter{Addr: strings.TrimPrefix(srv.URL, "http://")}
	ctx := context.Background()

	tests := []struct {
		name string
		seq  fixtests.SessionSeqNums
		want url.Values
	}{
		{"both", fixtests.SessionSeqNums{BeginString: "FIX.4.4", SenderCompID: "ISLD", TargetCompID: "TW", NextSenderSeqNum: 2000, NextTargetSeqNum: 1},
			url.Values{"session": {"FIX.4.4:ISLD->TW"}, "next_sender": {"2000"}, "next_target": {"1"}}},
		{"sender only", fixtests.SessionSeqNums{BeginString: "FIX.4.4", SenderCompID: "ISLD", TargetCompID: "TW", NextSenderSeqNum: 7},
			url.Values{"session": {"FIX.4.4:ISLD->TW"}, "next_sender": {"7"}}},
		{"target only", fixtests.SessionSeqNums{BeginString: "FIX.4.4", SenderCompID: "ISLD", TargetCompID: "TW", NextTargetSeqNum: 9},
			url.Values{"session": {"FIX.4.4:ISLD->TW"}, "next_target": {"9"}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := setter.SetNextSeqNums(ctx, tt.seq); err != nil {
				t.Fatalf("SetNextSeqNums: %v", err)
			}
			rec.mu.Lock()
			r := rec.requests[i]
			rec.mu.Unlock()
			if r.Method != http.MethodPost || r.URL.Path != fixtests.SeqNumsPath {
				t.Fatalf("request %s %s, want POST %s", r.Method, r.URL.Path, fixtests.SeqNumsPath)
			}
			if got := r.URL.Query(); got.Encode() != tt.want.Encode() {
				t.Fatalf("query %q, want %q", got.Encode(), tt.want.Encode())
			}
		})
	}
}

func TestHTTPSetterRefusals(t *testing.T) {
	rec := &hookRecorder{status: http.StatusNotFound, body: "unknown session FIX.4.4:ISLD->XX\n"}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	setter := fixtests.HTTPSetter{Addr: strings.TrimPrefix(srv.URL, "http://")}
	seq := fixtests.SessionSeqNums{BeginString: "FIX.4.4", SenderCompID: "ISLD", TargetCompID: "XX", NextSenderSeqNum: 1}
	err := setter.SetNextSeqNums(context.Background(), seq)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "unknown session FIX.4.4:ISLD->XX") {
		t.Fatalf("error %v, want the status and the venue's reason", err)
	}

	// 200 is not the hook's answer either: only 204 No Content means done.
	rec.mu.Lock()
	rec.status, rec.body = http.StatusOK, "ok"
	rec.mu.Unlock()
	if err := setter.SetNextSeqNums(context.Background(), seq); err == nil {
		t.Fatal("a 200 answer was taken for success")
	}

	if err := (fixtests.HTTPSetter{}).SetNextSeqNums(context.Background(), seq); err == nil {
		t.Fatal("an HTTPSetter without an address did not fail")
	}
	srv.Close()
	if err := setter.SetNextSeqNums(context.Background(), seq); err == nil {
		t.Fatal("a hook that is not listening did not fail")
	}
}
