package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// snapshotFuzzSeed is the snapshot of cfg's matcher after commands of
// the property test's generator.
func snapshotFuzzSeed(tb testing.TB, cfg Config, seed uint64, commands int) []byte {
	tb.Helper()
	m, err := NewMatcher(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	gen := newCommandGen(cfg, seed, newRefModel(cfg))
	sink := NewBufferSink(64)
	for range commands {
		cmd := gen.next()
		gen.model.apply(cmd, NewBufferSink(16))
		sink.Reset()
		_ = m.Apply(cmd, sink)
	}
	return snapshotOf(tb, m)
}

// FuzzReadSnapshot loads arbitrary bytes as a matcher snapshot (a file a
// restart reads, or one a cluster node was sent by its leader). The body
// is the snapshot without its trailer; unless raw, the harness appends the
// body's right CRC-32C, so that mutations reach the checks after the
// checksum and the restored state's invariants. Whatever the bytes, loading
// never panics; a refused snapshot is an ErrSnapshot that leaves the
// matcher empty and usable; an accepted one writes the same bytes again
// and keeps every invariant under the commands that follow.
func FuzzReadSnapshot(f *testing.F) {
	cfg := propertyConfigs()[2] // risk limits, a volatility band, an opening call
	for i, commands := range []int{0, 8, 40} {
		snap := snapshotFuzzSeed(f, cfg, uint64(i+1), commands)
		f.Add(false, snap[:len(snap)-4])
	}
	f.Add(true, []byte("FVCORE\x00\x08"))
	var termless bytes.Buffer
	m, err := NewMatcher(cfg)
	if err != nil {
		f.Fatal(err)
	}
	if err := m.writeSnapshot(&termless, snapshotVersionTermless); err != nil {
		f.Fatal(err)
	}
	f.Add(false, termless.Bytes()[:termless.Len()-4])
	// Halted instruments, one of them closed before: the status each halt
	// interrupted, kept (the current version) and not (version 7).
	var buf [cmdSlotSize]byte
	for i, a := range []operatorArgs{
		{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusClosed, instrument: 2},
		{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted},
	} {
		a.seq = uint64(i + 1)
		if err := m.Apply(encodeOperator(buf[:], a), NewBufferSink(8)); err != nil {
			f.Fatal(err)
		}
	}
	for _, version := range []byte{snapshotMagic[7], snapshotVersionNoHaltOrigin} {
		var halted bytes.Buffer
		if err := m.writeSnapshot(&halted, version); err != nil {
			f.Fatal(err)
		}
		f.Add(false, halted.Bytes()[:halted.Len()-4])
	}
	f.Add(false, []byte{})
	after := fuzzSeed(cfg, 99, 60)
	f.Fuzz(func(t *testing.T, raw bool, body []byte) {
		data := body
		if !raw {
			data = binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
		}
		m, err := NewMatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ReadSnapshot(bytes.NewReader(data)); err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("refused with %v, not an ErrSnapshot", err)
			}
			if m.RestingOrders() != 0 || m.Counters() != (Counters{}) {
				t.Fatalf("refused (%v) but the matcher is not left empty", err)
			}
			if err := m.CheckInvariants(); err != nil {
				t.Fatalf("refused, then: %v", err)
			}
			return
		}
		// What was read is written back: the snapshot holds the logical
		// state only, so an accepted one has a single encoding (bytes after
		// the trailer are not read), in the version it was read in.
		var again bytes.Buffer
		if err := m.writeSnapshot(&again, data[7]); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, again.Bytes()) {
			t.Fatalf("accepted %d bytes, writes %d other bytes back", len(data), again.Len())
		}
		sink := NewBufferSink(64)
		i := 0
		fuzzFrames(after, func(cmd []byte) {
			i++
			sink.Reset()
			_ = m.Apply(cmd, sink)
			if err := m.CheckInvariants(); err != nil {
				t.Fatalf("command %d after the restore: %v", i, err)
			}
		})
	})
}
