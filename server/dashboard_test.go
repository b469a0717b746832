package server

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardQueriesExportedMetrics checks that every metric the shipped
// Grafana dashboard queries is exported by a running venue.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../deploy/grafana/fixvenue.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, t.TempDir(), riskDashboardExtra)
	withMarketData(t, cfg) // the feed's panels
	s := startServer(t, cfg, Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "r1", sym: "NOPE", side: "1", qty: "1", px: "1"}) // one reject, so the reason vector exists
	expectER(t, c, map[int]string{11: "r1", 150: "8"})
	exported := riskMetricsExported(t, s, c)
	name := regexp.MustCompile(`\b((?:fixvenue|go|process)_[a-z_]+)`)
	checked := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !strings.Contains(exported, "\n"+base) && !strings.Contains(exported, "# TYPE "+base+" ") {
					t.Errorf("panel %q queries %s, which the venue does not export", p.Title, m)
				}
				checked++
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d metric references found in the dashboard", checked)
	}
}
