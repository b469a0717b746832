package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestConfiguredInstrumentsMatchTheJournal: a resting order's price is in
// ticks of ACME's configured tick size. A restart whose configuration gives
// ACME another tick size, or drops it, is refused before anything is
// replayed, naming the difference; an instrument new to the configuration
// is accepted and recorded, and the order still rests.
func TestConfiguredInstrumentsMatchTheJournal(t *testing.T) {
	dir := t.TempDir()
	s, c, _ := restingGTC(t, dir, "gtc1", "99.00")
	c.Close()
	s.Close()

	changed := testConfig(t, dir, "")
	changed.Instruments[0].TickSize = "0.05"
	if _, err := New(changed, Options{Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), "instrument id 1: tick_size 0.01 recorded, 0.05 configured") {
		t.Fatalf("a restart with ACME's tick size changed: %v", err)
	}
	dropped := testConfig(t, dir, "")
	dropped.Instruments = dropped.Instruments[1:]
	if _, err := New(dropped, Options{Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), "instrument id 1 (ACME) is no longer configured") {
		t.Fatalf("a restart without ACME: %v", err)
	}

	s = startServer(t, testConfig(t, dir, `[[instrument]]
id = 3
symbol = "NEWCO"
tick_size = "0.01"
lot_size = 1
min_qty = 1
max_qty = 1000
ref_price = "20.00"
band_percent = 10
`), Options{})
	c = logon(t, s, "CLIENT1", true)
	if err := c.Send("H", fixclient.F(11, "gtc1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, c, map[int]string{11: "gtc1", 150: "I", 39: "0", 44: "99.00"})
	raw, err := os.ReadFile(filepath.Join(dir, instrumentRecordFile))
	if err != nil {
		t.Fatal(err)
	}
	var recorded []recordedInstrument
	if err := json.Unmarshal(raw, &recorded); err != nil || len(recorded) != 3 || recorded[2].Terms["symbol"] != "NEWCO" {
		t.Fatalf("record after adding NEWCO: %v %s", err, raw)
	}
}
