package core

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
