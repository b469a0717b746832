package admintest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// CallTimeout bounds one call, the answer's body included.
const CallTimeout = 30 * time.Second

// BodyBytesMax bounds the answer's body a call reads.
const BodyBytesMax = 1 << 20

var client = &http.Client{Timeout: CallTimeout}

// Answer is the answer to one call.
type Answer struct {
	Status      int
	ContentType string
	Allow       string // the Allow header (a 405's methods)
	RetryAfter  string // the Retry-After header (a 503's)
	Header      http.Header
	Body        []byte // up to BodyBytesMax; what arrived when reading stopped
}

// Call sends method url with body and, when token is set, the operator's
// bearer token.
func Call(t testing.TB, method, url, token, body string) Answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return Do(t, req)
}

// Do sends req (its headers as the caller set them) and returns the answer.
func Do(t testing.TB, req *http.Request) Answer {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// A read cut short (a stream's timeout) still returns what arrived: the
	// callers judge the status and the part they need.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, BodyBytesMax))
	return Answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		Allow: resp.Header.Get("Allow"), RetryAfter: resp.Header.Get("Retry-After"), Header: resp.Header, Body: b}
}
