package metricstest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/admintest"
)

// Scrape returns the metrics text served at addr (host:port)/metrics.
func Scrape(t testing.TB, addr string) string {
	t.Helper()
	a := admintest.Call(t, http.MethodGet, "http://"+addr+"/metrics", "", "")
	if a.Status != http.StatusOK {
		t.Fatalf("%s/metrics: status %d: %s", addr, a.Status, a.Body)
	}
	return string(a.Body)
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
