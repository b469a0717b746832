package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Sessions); got != 32 {
		t.Fatalf("default sessions = %d, want 32", got)
	}
	if c.Sessions[0].CompID != "CLIENT1" || c.Sessions[31].CompID != "CLIENT32" {
		t.Fatalf("sessions = %s … %s", c.Sessions[0].CompID, c.Sessions[31].CompID)
	}
	if c.FIX.Addr != "127.0.0.1:9878" || c.Metrics.Addr != "127.0.0.1:9464" || c.Venue.SenderCompID != "VENUE" {
		t.Fatalf("addresses: %+v %+v", c.FIX, c.Metrics)
	}
	acme := c.Instruments[0]
	if acme.Symbol != "ACME" || acme.RefPriceTicks != 10000 || acme.Tick.Scale != 2 || acme.BandPercent != 10 {
		t.Fatalf("ACME = %+v", acme)
	}
	if !c.CancelOnDisconnect(&c.Sessions[3]) {
		t.Fatal("demo sessions should cancel on disconnect")
	}
	if qf := c.QuickFIXSettings(&c.Sessions[0]); qf["HeartBtInt"] != "30" {
		t.Fatalf("quickfix settings = %v", qf)
	}
	if c.Journal.FIXStoreSync.Duration != 100*time.Millisecond {
		t.Fatalf("journal.fix_store_sync = %s, want 100ms", c.Journal.FIXStoreSync.Duration)
	}
}

func TestOverrides(t *testing.T) {
	text := `
[fix]
addr = "127.0.0.1:19878"
[journal]
fsync = "none"
[[session]]
comp_id = "TW"
venue_comp_id = "ISLD"
cancel_on_disconnect = false
[session.quickfix]
HeartBtInt = "5"
`
	c, err := Parse([]byte(text), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.FIX.Addr != "127.0.0.1:19878" || c.Journal.Fsync != "none" || c.Engine.WaitStrategy != "park" {
		t.Fatalf("overrides not applied over defaults: %+v", c)
	}
	if len(c.Sessions) != 1 || c.VenueCompID(&c.Sessions[0]) != "ISLD" || c.CancelOnDisconnect(&c.Sessions[0]) {
		t.Fatalf("sessions = %+v", c.Sessions)
	}
	if len(c.Instruments) != 3 {
		t.Fatalf("default instruments should stay when none are given, got %d", len(c.Instruments))
	}
	if qf := c.QuickFIXSettings(&c.Sessions[0]); qf["HeartBtInt"] != "5" || qf["ResetOnLogon"] != "N" {
		t.Fatalf("quickfix = %v", qf)
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	tests := []struct{ text, key string }{
		{"[fix]\nadr = \"x\"", "fix.adr"},
		{"[engine]\nwait_strategy = \"sleep\"", "engine.wait_strategy"},
		{"[engine]\ncommand_ring_slots = 1000", "engine.command_ring_slots"},
		{"[engine]\nevent_ring_slots = 64", "engine.event_ring_slots: 64 is below 256"},
		{"[journal]\nfsync = \"always\"", "journal.fsync"},
		{"[journal]\nfix_store_sync = \"0s\"", "journal.fix_store_sync"},
		{"[journal]\nfix_store_sync = \"1m\"", "journal.fix_store_sync"},
		{"[fix]\naddr = \"nowhere\"", "fix.addr"},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 2\nref_price = \"1\"\nband_percent = 5", "instrument[0].tick_size"},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0.05\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 2\nref_price = \"1.01\"\nband_percent = 5", "instrument[0].ref_price"},
		{"[[session]]\ncomp_id = \"A\"\n[[session]]\ncomp_id = \"A\"", "session[1].comp_id"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nSenderCompID = \"B\"", "session[0].quickfix.SenderCompID"},
		{"[[session]]\ncomp_id = \"C%d\"\nrange = [3, 1]", "session[0].range"},
		{"[venue]\nsender_comp_id = \"\"", "venue.sender_comp_id"},
		{"this is not toml", "test.toml"},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.text), "test.toml")
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("config %q: error %v does not name %s", tc.text, err, tc.key)
		}
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "venue.toml")
	if err := os.WriteFile(p, []byte("[metrics]\naddr = \"127.0.0.1:19464\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || c.Metrics.Addr != "127.0.0.1:19464" {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.toml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// The matcher's thread is locked when configured so, else only with the
// busy-spin wait strategy.
func TestMatcherThreadLocked(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", false},
		{"[engine]\nwait_strategy = \"park\"\n", false},
		{"[engine]\nwait_strategy = \"yield\"\n", false},
		{"[engine]\nwait_strategy = \"spin\"\n", true},
		{"[engine]\nlock_os_thread = true\n", true},
		{"[engine]\nlock_os_thread = false\n", false},
		{"[engine]\nwait_strategy = \"spin\"\nlock_os_thread = false\n", false},
	} {
		c, err := Parse([]byte(tc.text), "test.toml")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Engine.MatcherThreadLocked(); got != tc.want {
			t.Errorf("%q: MatcherThreadLocked = %v, want %v", tc.text, got, tc.want)
		}
	}
}
