package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/ops"
)

// TestTermsRecordMovedAsideAsAdvised: ACME's band narrowed from 10% to 5%
// under a journal of two resting buys, one at 92.00 (outside the new
// band), the venue stopped with a snapshot. `fixvenue serve` refuses the
// change and advises moving terms.json aside; done, `journal book` and
// the start replay the whole journal under the configured band, loading
// no snapshot (taken under the recorded one): the buy at 92.00 is refused
// on replay, the other rests, the band is 95.00 to 105.00, and both say
// so again once the record is written. Before, the start and the book
// failed loading the snapshot (`bad snapshot: instrument 1 band [9000,
// 11000] does not fit the config's 1 with 1001 levels`).
func TestTermsRecordMovedAsideAsAdvised(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "terms-aside-token-0123456789"
	body := `[marketdata]
enabled = false
[admin]
addr = "127.0.0.1:0"
[[admin.token]]
operator = "ops"
sha256 = %q
[journal]
snapshot_interval = "50ms"
[session_defaults]
cancel_on_disconnect = false
[[session]]
comp_id = "CLIENT1"
%s`
	hash := ops.HashToken(token)
	cfg := writeVenueConfig(t, dir, body, hash, conftest.ACME+conftest.LOTS)
	v := startVenue(t, cfg)
	if strings.Contains(v.logs(), "no record of the terms") {
		t.Fatalf("a new data directory's start says it has no record of the terms of a journal:\n%s", v.logs())
	}
	c := logOn(t, v.fixAddr, "CLIENT1")
	for _, o := range []struct{ id, px string }{{"inside", "99.00"}, {"outside", "92.00"}} {
		if err := c.Send("D", fixclient.F(11, o.id), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
			fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, "1"), fixclient.F(40, "2"),
			fixclient.F(44, o.px), fixclient.F(59, "1")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: o.id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	data := filepath.Join(dir, "data")
	eventually(t, "a snapshot of both buys", func() error {
		if snaps, _ := filepath.Glob(filepath.Join(data, "journal", "*.snap")); len(snaps) == 0 {
			return errors.New("none yet")
		}
		return nil
	})
	v.stop(t)

	narrowed := writeVenueConfig(t, dir, body, hash, strings.Replace(conftest.ACME, "band_percent = 10", "band_percent = 5", 1)+conftest.LOTS)
	record := filepath.Join(data, "terms.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a venue that did start would serve until killed
	out, err := exec.CommandContext(ctx, binPath, "serve", "--config", narrowed, "--metrics-addr", "off").CombinedOutput()
	cancel()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "band_percent 10 recorded, 5 configured") ||
		!strings.Contains(string(out), "move "+record+" aside and start again: the start then replays the whole journal, archive included") {
		t.Fatalf("serve with ACME's band narrowed: %v\n%s", err, out)
	}
	if err := os.Rename(record, filepath.Join(dir, "terms.json.aside")); err != nil {
		t.Fatal(err)
	}

	const book = `{"symbol":"ACME","bids":[[99.00,1,1]],"asks":[]}`
	wantBook := func(stage string) {
		t.Helper()
		out, err := exec.Command(binPath, "journal", "book", "--config", narrowed, "--symbol", "ACME").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != book {
			t.Fatalf("journal book %s: %v\n%s\nwant %s", stage, err, out, book)
		}
	}
	wantListed := func(v *venueProc, stage string) {
		t.Helper()
		code, out, errs := adminRunner(t, v, token)("instruments", "--json")
		var list []ops.InstrumentInfo
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
			t.Fatalf("%s: instruments: %d %s %s", stage, code, out, errs)
		}
		if in := list[0]; in.Symbol != "ACME" || in.BandPercent != 5 || in.BandLow != "95.00" || in.BandHigh != "105.00" ||
			in.RestingOrders != 1 || in.Bid != "99.00" {
			t.Fatalf("%s: ACME is %+v, want the band 95.00 to 105.00 and the buy at 99.00 alone", stage, in)
		}
	}
	wantBook("with the record moved aside")
	v = startVenue(t, narrowed)
	if v.loadedSnapshot() || !strings.Contains(v.logs(), "no record of the terms the journal was written under") ||
		!strings.Contains(v.logs(), "replaying the whole journal, archive included, under the configured terms") {
		t.Fatalf("the start with the record moved aside does not replay the whole journal, saying so:\n%s", v.logs())
	}
	wantListed(v, "the start with the record moved aside")
	v.stop(t)
	wantBook("with the record written")
	v = startVenue(t, narrowed)
	wantListed(v, "the next start")
	v.stop(t)
}
