package core

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

var writeFuzzCorpus = flag.Bool("write-fuzz-corpus", false, "regenerate testdata/fuzz/FuzzMatcher seed files")

// fuzzFrames splits fuzz input into commands: each is a little-endian uint16
// length (capped to a ring slot) followed by that many bytes.
func fuzzFrames(data []byte, yield func([]byte)) {
	for len(data) >= 2 {
		n := min(int(binary.LittleEndian.Uint16(data)), cmdSlotSize, len(data)-2)
		yield(data[2 : 2+n])
		data = data[2+n:]
	}
}

// FuzzMatcher applies arbitrary command bytes, each shown to Prefetch first.
// The matcher must never panic,
// must write no event when it refuses bytes, must keep every invariant after
// every command, and must agree byte for byte with the reference model.
func FuzzMatcher(f *testing.F) { fuzzAgainstModel(f, propertyConfigs()[1]) }

// FuzzMatcherRisk is FuzzMatcher on a venue with risk limits
// (propertyRisk), whose seeds include the risk commands.
func FuzzMatcherRisk(f *testing.F) { fuzzAgainstModel(f, propertyConfigs()[2]) }

func fuzzAgainstModel(f *testing.F, cfg Config) {
	for seed := uint64(1); seed <= 4; seed++ {
		f.Add(fuzzSeed(cfg, seed, 12))
	}
	f.Add(fuzzSeed(cfg, 5, 200))
	f.Add(fuzzAuctionSeed(cfg))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := NewMatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		model := newRefModel(cfg)
		got, want := NewBufferSink(16), NewBufferSink(16)
		f := newEventFormatter(cfg.Instruments)
		i := 0
		fuzzFrames(data, func(cmd []byte) {
			i++
			got.Reset()
			want.Reset()
			m.Prefetch(cmd) // takes any bytes and changes nothing
			err := m.Apply(cmd, got)
			ok := model.apply(cmd, want)
			if err != nil && got.Len() != 0 {
				t.Fatalf("command %d: Apply failed (%v) but wrote %d events", i, err, got.Len())
			}
			if (err == nil) != ok || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("command %d %x: matcher (err %v)\n%s model (ok %v)\n%s", i, cmd, err, eventsText(f, got), ok, eventsText(f, want))
			}
			if err := m.CheckInvariants(); err != nil {
				t.Fatalf("command %d %x: %v", i, cmd, err)
			}
		})
	})
}

// fuzzSeed frames a run of the property test's command generator.
func fuzzSeed(cfg Config, seed uint64, commands int) []byte {
	gen := newCommandGen(cfg, seed, newRefModel(cfg))
	sink := NewBufferSink(16)
	var out []byte
	for range commands {
		cmd := gen.next()
		sink.Reset()
		gen.model.apply(cmd, sink) // the generator aims at the model's live orders
		out = binary.LittleEndian.AppendUint16(out, uint16(len(cmd)))
		out = append(out, cmd...)
	}
	return out
}

// fuzzAuctionSeed frames an opening call on the first instrument (orders
// that cross, market orders on both sides, an order at the opening, a
// replace), the uncross, and a sweep through the dynamic band when the
// instrument has one, then a tick past the volatility auction's end.
func fuzzAuctionSeed(cfg Config) []byte {
	in := cfg.Instruments[0]
	ref, lot := in.RefPriceTicks, in.MinQty
	var out []byte
	var seq uint64
	add := func(cmd []byte) {
		seq++
		binary.LittleEndian.PutUint64(cmd[8:], seq) // every command's block starts with seq
		out = binary.LittleEndian.AppendUint16(out, uint16(len(cmd)))
		out = append(out, cmd...)
	}
	var buf [cmdSlotSize]byte
	order := func(id string, side venue.Side, typ venue.OrdType, tif venue.TimeInForce, px int64) {
		add(encodeNewOrder(buf[:], &orderArgs{ts: int64(seq) * 10, session: 1, side: side, ordType: typ, instrument: in.ID,
			tif: tif, px: px, qty: lot, clOrdID: id}))
	}
	add(encodeTradingStatus(buf[:], 0, 1, in.ID, venue.TradingStatusOpeningCall))
	order("a1", venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceDay, ref+1)
	order("a2", venue.SideSell, venue.OrdTypeLimit, venue.TimeInForceDay, ref-1)
	order("a3", venue.SideBuy, venue.OrdTypeMarket, venue.TimeInForceDay, 0)
	order("a4", venue.SideSell, venue.OrdTypeMarket, venue.TimeInForceDay, 0)
	order("a5", venue.SideBuy, venue.OrdTypeLimit, venue.TimeInForceAtTheOpening, ref)
	add(encodeReplace(buf[:], &orderArgs{ts: int64(seq) * 10, session: 1, side: venue.SideBuy, ordType: venue.OrdTypeLimit,
		instrument: in.ID, px: ref + 2, qty: 2 * lot, clOrdID: "a1b", origClOrdID: "a1"}))
	add(encodeTradingStatus(buf[:], 0, int64(seq)*10, in.ID, venue.TradingStatusOpen))
	for k := int64(1); k <= 4; k++ {
		order(fmt.Sprintf("s%d", k), venue.SideSell, venue.OrdTypeLimit, venue.TimeInForceDay, ref+4*k)
	}
	add(encodeNewOrder(buf[:], &orderArgs{ts: int64(seq) * 10, session: 2, side: venue.SideBuy, ordType: venue.OrdTypeMarket,
		instrument: in.ID, qty: 4 * lot, clOrdID: "sweep"}))
	add(encodeTick(buf[:], 0, 1<<40))
	return out
}

// TestWriteFuzzCorpus regenerates the committed seed corpus on demand
// (go test -run TestWriteFuzzCorpus -write-fuzz-corpus); the corpus is what
// `go test` replays through FuzzMatcher on every run.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*writeFuzzCorpus {
		t.Skip("run with -write-fuzz-corpus to regenerate testdata/fuzz/FuzzMatcher")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzMatcher")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := propertyConfigs()[1]
	for seed := uint64(10); seed < 18; seed++ {
		data := fuzzSeed(cfg, seed, 25)
		text := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", seed)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
