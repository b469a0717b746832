package metricstest

import (
	"net"
	"net/http"
	"testing"
)

const sample = `# HELP venue_trades_total Trades.
# TYPE venue_trades_total counter
venue_trades_total 12
venue_trades_total_x 3
venue_status{instrument_id="7",symbol="ACME"} 2.5
`

func TestValueAndFloat(t *testing.T) {
	if v := Value(t, sample, "venue_trades_total"); v != "12" {
		t.Errorf("venue_trades_total = %q", v)
	}
	if f := Float(t, sample, `venue_status{instrument_id="7",symbol="ACME"}`); f != 2.5 {
		t.Errorf("venue_status = %v", f)
	}
}

func TestScrape(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(sample))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if got := Scrape(t, ln.Addr().String()); got != sample {
		t.Errorf("scraped %q", got)
	}
}
