package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/ops"
)

// instrumentRecordFile, in the data directory, holds the configured
// instruments the journal was written under (docs/ARCHITECTURE.md, "The
// configured instruments and the journal").
const instrumentRecordFile = "instruments.json"

// recordedInstrument is what the matcher takes from a configured
// instrument, by configuration key: journaled commands carry instrument
// ids, prices in ticks and quantities, so replaying them under other values
// gives other events.
type recordedInstrument struct {
	ID    uint32            `json:"id"`
	Terms map[string]string `json:"terms"`
}

func recordOf(in *config.Instrument) recordedInstrument {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return recordedInstrument{ID: in.ID, Terms: map[string]string{"symbol": in.Symbol, "tick_size": in.TickSize,
		"lot_size": n(in.LotSize), "min_qty": n(in.MinQty), "max_qty": n(in.MaxQty), "ref_price": in.RefPrice,
		"band_percent": n(in.BandPercent), "status": in.Status.String(), "volatility_band_ticks": n(in.VolatilityBandTicks),
		"volatility_auction": in.VolatilityAuction.Duration.String()}}
}

// checkInstrumentRecord compares the configured instruments with those the
// data directory's journal was written under, before anything is replayed.
// A configured instrument whose values changed, or one that is gone, is
// refused with an error that names each difference: the journal's commands
// replayed under other values would give other events (a resting order
// outside a band it was inside of is refused on replay and disappears;
// prices in ticks change their value with the tick size). Instruments new to
// the configuration are added to the record. A missing record (a new data
// directory, or one from before the record) is written from the
// configuration. Moving the record aside accepts the configuration's values.
// With write false nothing is written (a tool that only reads the journal).
func checkInstrumentRecord(cfg *config.Config, write bool) error {
	path := filepath.Join(cfg.Venue.DataDir, instrumentRecordFile)
	current := make([]recordedInstrument, 0, len(cfg.Instruments))
	byID := make(map[uint32]recordedInstrument, len(cfg.Instruments))
	for i := range cfg.Instruments {
		r := recordOf(&cfg.Instruments[i])
		current = append(current, r)
		byID[r.ID] = r
	}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !write {
			return nil
		}
		return writeInstrumentRecord(path, current)
	case err != nil:
		return fmt.Errorf("configured instruments: %w", err)
	}
	var recorded []recordedInstrument
	if err := json.Unmarshal(raw, &recorded); err != nil {
		return fmt.Errorf("configured instruments: %s: %w", path, err)
	}
	var diffs []string
	known := make(map[uint32]bool, len(recorded))
	for _, was := range recorded {
		known[was.ID] = true
		now, ok := byID[was.ID]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("instrument id %d (%s) is no longer configured", was.ID, was.Terms["symbol"]))
			continue
		}
		if changes := termChanges(was, now); changes != "" {
			diffs = append(diffs, fmt.Sprintf("instrument id %d: %s", was.ID, changes))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the configuration's instruments differ from those the journal in %s was written under: %s. "+
			"Replaying its commands under other values would change the book (orders refused or repriced). Restore the "+
			"recorded values; or, to accept the new ones, move %s aside and start again",
			cfg.Venue.DataDir, strings.Join(diffs, "; "), path)
	}
	for _, r := range current {
		if !known[r.ID] && write {
			return writeInstrumentRecord(path, current) // a new instrument: recorded from now on
		}
	}
	return nil
}

// CheckInstrumentRecord refuses a configuration whose instruments differ
// from those the data directory's journal was written under, as a start
// does, and writes nothing: for the tools that replay a journal (fixvenue
// journal verify, dump and book), whose results would otherwise describe
// another venue.
func CheckInstrumentRecord(cfg *config.Config) error { return checkInstrumentRecord(cfg, false) }

// termChanges names the terms that differ, as "key recorded, configured",
// in key order.
func termChanges(was, now recordedInstrument) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now.Terms)) {
		if was.Terms[k] != now.Terms[k] {
			out = append(out, fmt.Sprintf("%s %s recorded, %s configured", k, was.Terms[k], now.Terms[k]))
		}
	}
	return strings.Join(out, ", ")
}

func writeInstrumentRecord(path string, list []recordedInstrument) error {
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := ops.WriteFileDurably(path, append(b, '\n')); err != nil {
		return fmt.Errorf("configured instruments: %w", err)
	}
	return nil
}
