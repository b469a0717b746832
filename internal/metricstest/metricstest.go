package metricstest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ScrapeTimeout bounds one scrape, the answer's body included.
const ScrapeTimeout = 5 * time.Second

// BodyBytesMax bounds the metrics text a scrape reads.
const BodyBytesMax = 4 << 20

var client = &http.Client{Timeout: ScrapeTimeout}

// Scrape returns the metrics text served at addr (host:port)/metrics.
func Scrape(t testing.TB, addr string) string {
	t.Helper()
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, BodyBytesMax))
	if err != nil {
		t.Fatalf("%s/metrics: %v", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s/metrics: status %d: %s", addr, resp.StatusCode, b)
	}
	return string(b)
}

// Value returns the value of the metric name in text, as written: name is
// the whole series name, its labels included when it has any.
func Value(t testing.TB, text, name string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("metric %s not found", name)
	return ""
}

// Float is Value read as a number.
func Float(t testing.TB, text, name string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(Value(t, text, name), 64)
	if err != nil {
		t.Fatalf("metric %s: %v", name, err)
	}
	return f
}
