package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

// TestSnapshotThenSuffixEqualsFullReplay: a matcher restored from a snapshot
// taken after command k, fed commands k+1…n, writes exactly the events the
// original wrote for them, and ends in the same state (same snapshot bytes).
func TestSnapshotThenSuffixEqualsFullReplay(t *testing.T) {
	for ci, cfg := range propertyConfigs() {
		const commands = 6000
		gen := newCommandGen(cfg, uint64(100+ci), newRefModel(cfg))
		cmds := make([][]byte, commands)
		for i := range cmds {
			cmd := gen.next()
			cmds[i] = append([]byte(nil), cmd...)
			gen.model.apply(cmd, NewBufferSink(4)) // the generator follows the model's live orders
		}
		full, err := NewMatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cuts := map[int]bool{0: true, 1: true, 777: true, 3001: true, commands - 1: true}
		snaps := map[int][]byte{}
		events := make([][]byte, commands) // events of command i
		sink := NewBufferSink(64)
		for i, cmd := range cmds {
			if cuts[i] {
				snaps[i] = snapshotOf(t, full)
			}
			sink.Reset()
			_ = full.Apply(cmd, sink)
			events[i] = append([]byte(nil), sink.Bytes()...)
		}
		final := snapshotOf(t, full)
		// Each cut is restored into a new matcher (whose pool and tables
		// resetState leaves as they are) and into one that has just
		// replayed everything (which it empties first).
		used, err := NewMatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{0, 1, 777, 3001, commands - 1} {
			snap := snaps[cut]
			restoredNew, err := NewMatcher(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, restored := range []*Matcher{restoredNew, used} {
				if err := restored.ReadSnapshot(bytes.NewReader(snap)); err != nil {
					t.Fatalf("config %d cut %d: %v", ci, cut, err)
				}
				for i := cut; i < commands; i++ {
					sink.Reset()
					_ = restored.Apply(cmds[i], sink)
					if !bytes.Equal(sink.Bytes(), events[i]) {
						t.Fatalf("config %d cut %d (reused %v): command %d gives other events after the restore", ci, cut, restored == used, i)
					}
				}
				if !bytes.Equal(snapshotOf(t, restored), final) {
					t.Fatalf("config %d cut %d (reused %v): final state differs", ci, cut, restored == used)
				}
			}
		}
	}
}

// TestReadSnapshotRefusesBadInput: truncation, a flipped byte, another
// venue's instruments, and too small a matcher are clear errors that leave
// the matcher empty and usable.
func TestReadSnapshotRefusesBadInput(t *testing.T) {
	cfg := propertyConfigs()[0]
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gen := newCommandGen(cfg, 9, newRefModel(cfg))
	sink := NewBufferSink(64)
	// The generator picks live orders from the model's maps, so a stream
	// can end just after a mass cancel: run on until orders rest.
	for i := 0; i < 3000 || (m.RestingOrders() == 0 && i < 6000); i++ {
		cmd := gen.next()
		gen.model.apply(cmd, NewBufferSink(4))
		_ = m.Apply(cmd, sink)
		sink.Reset()
	}
	if m.RestingOrders() == 0 {
		t.Fatal("the workload left no resting orders; the test would prove little")
	}
	snap := snapshotOf(t, m)

	other := cfg
	other.Instruments = append([]InstrumentConfig(nil), cfg.Instruments...)
	// A band is state (an operator may move it within the configured
	// levels), but it never outgrows the levels the configuration allocates.
	other.Instruments[0].BandPercent--
	small := cfg
	small.OrdersMax = 1
	small.ClOrdIDsMax = 1
	flipped := append([]byte(nil), snap...)
	flipped[len(flipped)/2] ^= 0x40

	cases := []struct {
		name string
		cfg  Config
		data []byte
	}{
		{"empty", cfg, nil},
		{"truncated", cfg, snap[:len(snap)-5]},
		{"flipped byte", cfg, flipped},
		{"not a snapshot", cfg, []byte("definitely not a matcher snapshot at all")},
		{"band wider than the levels", other, snap},
		{"too small", small, snap},
	}
	for _, c := range cases {
		r, err := NewMatcher(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = r.ReadSnapshot(bytes.NewReader(c.data))
		if !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: got %v, want ErrSnapshot", c.name, err)
		}
		if r.RestingOrders() != 0 || r.Counters() != (Counters{}) {
			t.Errorf("%s: the matcher is not left empty", c.name)
		}
		if err := r.CheckInvariants(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// snapshotOf returns m's snapshot, failing the test if it cannot be written.
func snapshotOf(tb testing.TB, m *Matcher) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := m.WriteSnapshot(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// TestReadSnapshotRefusesACallListedTwice: a snapshot whose list of calls
// names an instrument twice is refused. Taken, the instrument stayed
// listed once its call ended (leaving a call takes one entry out), so the
// matcher went on treating an open book as a call's.
func TestReadSnapshotRefusesACallListedTwice(t *testing.T) {
	cfg := propertyConfigs()[0] // CCC starts in its opening call
	m, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, m)
	body := snap[:len(snap)-4]
	off := len(snapshotMagic) + 4 + len(cfg.Instruments)*(snapshotInstrumentSize+snapshotAuctionSize) // the calls
	if n := binary.LittleEndian.Uint32(body[off:]); n != 1 || binary.LittleEndian.Uint32(body[off+4:]) != 7 {
		t.Fatalf("the calls section does not list CCC alone: %x", body[off:off+8])
	}
	twice := binary.LittleEndian.AppendUint32(append([]byte(nil), body[:off]...), 2)
	twice = append(twice, body[off+4:off+8]...)
	twice = append(twice, body[off+4:]...)
	twice = binary.LittleEndian.AppendUint32(twice, crc32.Checksum(twice, castagnoli))
	r, err := NewMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReadSnapshot(bytes.NewReader(twice)); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a call listed twice: %v, want ErrSnapshot naming it", err)
	}
	if err := r.ReadSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatalf("the snapshot itself: %v", err)
	}
}

// TestReadSnapshotRefusesARepeatedRecord: a snapshot whose ClOrdID
// records hold one twice (the same session's ClOrdID, the same order) is
// refused. Taken, the copy was found in place of the record, or counted
// as an order of its own.
func TestReadSnapshotRefusesARepeatedRecord(t *testing.T) {
	cfg := propertyConfigs()[2]
	snap := snapshotFuzzSeed(t, cfg, 2, 40)
	body := snap[:len(snap)-4]
	off := len(snapshotMagic) + 4 + len(cfg.Instruments)*(snapshotInstrumentSize+snapshotAuctionSize) // the calls
	off += 4 + 4*int(binary.LittleEndian.Uint32(body[off:])) + 7*8                                    // the records' count
	recs := int(binary.LittleEndian.Uint32(body[off:]))
	if recs < 2 {
		t.Fatalf("%d records: the workload proves nothing", recs)
	}
	end := off + 4 + recs*snapshotRecordSize
	for ri := range recs {
		rec := body[off+4+ri*snapshotRecordSize : off+4+(ri+1)*snapshotRecordSize]
		again := binary.LittleEndian.AppendUint32(append([]byte(nil), body[:off]...), uint32(recs+1))
		again = append(again, body[off+4:end]...)
		again = append(again, rec...)
		again = append(again, body[end:]...)
		again = binary.LittleEndian.AppendUint32(again, crc32.Checksum(again, castagnoli))
		r, err := NewMatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.ReadSnapshot(bytes.NewReader(again)); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("record %d of %d twice: %v, want ErrSnapshot", ri, recs, err)
		}
	}
}

// TestReadSnapshotOlderVersions: a snapshot of version 5, whose records
// did not keep an ended order's terms, or of version 6, whose records kept
// a stop's stop price and a GTD order's expire time but not an iceberg's
// display size nor post-only, is refused, naming its version, while it
// holds the record of an order that ended or was replaced and could have
// had what it lacks: a status request for that order would be answered
// without them, and unlike by a matcher that replayed the journal. Once
// EndOfDay forgot those records (every snapshot of an end of day), it
// reads back into the state the current version holds.
func TestReadSnapshotOlderVersions(t *testing.T) {
	for _, version := range []byte{snapshotVersionTermless, snapshotVersionStopGTDTerms} {
		t.Run(fmt.Sprintf("version %d", version), func(t *testing.T) {
			cfg := propertyConfigs()[0]
			m, err := NewMatcher(cfg)
			if err != nil {
				t.Fatal(err)
			}
			gen := newCommandGen(cfg, 5, newRefModel(cfg))
			sink := NewBufferSink(64)
			lacking := func() int {
				n := 0
				for ri := range m.index.recsUsed {
					if lacksTerms(&m.index.recs[ri], version) {
						n++
					}
				}
				return n
			}
			for i := 0; i < 3000 || (lacking() == 0 && i < 6000); i++ {
				cmd := gen.next()
				gen.model.apply(cmd, NewBufferSink(4))
				sink.Reset()
				_ = m.Apply(cmd, sink)
			}
			if lacking() == 0 {
				t.Fatal("no order that could have had terms ended: the workload proves nothing")
			}
			older := func() []byte {
				var b bytes.Buffer
				if err := m.writeSnapshot(&b, version); err != nil {
					t.Fatal(err)
				}
				return b.Bytes()
			}
			r, err := NewMatcher(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.ReadSnapshot(bytes.NewReader(older())); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", version)) {
				t.Fatalf("version %d with %d records lacking their terms: %v, want ErrSnapshot naming the version", version, lacking(), err)
			}
			if r.RestingOrders() != 0 || r.Counters() != (Counters{}) {
				t.Fatal("refused, but the matcher is not left empty")
			}

			sink.Reset()
			if err := m.Apply(encodeEndOfDay(make([]byte, 256), 1<<40, m.nowNs), sink); err != nil {
				t.Fatal(err)
			}
			if m.RestingOrders() == 0 {
				t.Fatal("no order outlived the end of day: the workload proves little")
			}
			if err := r.ReadSnapshot(bytes.NewReader(older())); err != nil {
				t.Fatalf("version %d of an end of day: %v", version, err)
			}
			if !bytes.Equal(snapshotOf(t, r), snapshotOf(t, m)) {
				t.Fatalf("version %d of an end of day reads into another state than the current version holds", version)
			}
		})
	}
}
