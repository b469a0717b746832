package ring

import (
	"testing"
	"unsafe"
)

// TestHotCountersSitOnTheirOwnCacheLines guards the padding: every counter
// that one goroutine writes while another reads something else must be at
// least cacheLinePadBytes away from its neighbours, or each write
// invalidates the other core's copy of the neighbour (false sharing).
func TestHotCountersSitOnTheirOwnCacheLines(t *testing.T) {
	var r Ring
	header := unsafe.Offsetof(r.setupMu) + unsafe.Sizeof(r.setupMu) // read-only after New
	groups := []struct {
		name  string
		start uintptr
		end   uintptr
	}{
		{"read-only header", 0, header},
		{"highWater", unsafe.Offsetof(r.highWater), unsafe.Offsetof(r.highWater) + 8},
		{"gateCache", unsafe.Offsetof(r.gateCache), unsafe.Offsetof(r.gateCache) + 8},
		{"single producer state", unsafe.Offsetof(r.single), unsafe.Offsetof(r.single) + unsafe.Sizeof(r.single)},
		{"sleeper counters", unsafe.Offsetof(r.sleepers), unsafe.Offsetof(r.storeWaiters) + 8},
		{"busyCount and closed", unsafe.Offsetof(r.busyCount), unsafe.Offsetof(r.closed) + 1},
	}
	for i := 1; i < len(groups); i++ {
		prev, cur := groups[i-1], groups[i]
		if cur.start < prev.end+cacheLinePadBytes {
			t.Errorf("Ring: %s ends at %d and %s starts at %d, want %d bytes between them",
				prev.name, prev.end, cur.name, cur.start, cacheLinePadBytes)
		}
	}
	if last := groups[len(groups)-1]; unsafe.Sizeof(r) < last.end+cacheLinePadBytes {
		t.Errorf("Ring: %s ends %d bytes before the end of the struct, want %d", last.name, unsafe.Sizeof(r)-last.end, cacheLinePadBytes)
	}

	var s Sequence
	if before, after := unsafe.Offsetof(s.value), unsafe.Sizeof(s)-unsafe.Offsetof(s.value); before < cacheLinePadBytes || after < cacheLinePadBytes {
		t.Errorf("Sequence: %d bytes before the value and %d from it to the end, want %d each", before, after, cacheLinePadBytes)
	}

	var b Barrier
	header = unsafe.Offsetof(b.wake) + unsafe.Sizeof(b.wake) // read-only after NewBarrier
	flags := unsafe.Offsetof(b.parked)
	if flags < header+cacheLinePadBytes || unsafe.Sizeof(b)-flags < cacheLinePadBytes {
		t.Errorf("Barrier: parked/alerted at %d, fields before them end at %d, struct size %d: want %d bytes of padding on each side",
			flags, header, unsafe.Sizeof(b), cacheLinePadBytes)
	}
}

// TestMarkersArePermutedAcrossCacheLines: every slot has its own
// availability marker, and consecutive sequences (up to markersPerLine of
// them) land on different 64-byte lines of the marker array.
func TestMarkersArePermutedAcrossCacheLines(t *testing.T) {
	for _, slots := range []int{1, 2, 4, 8, 16, 64, 1024} {
		r := mustNew(t, Config{Slots: slots, SlotSize: 64, Producer: MultiProducer})
		seen := make([]bool, slots)
		for seq := int64(0); seq < int64(2*slots); seq++ {
			m := r.marker(seq)
			if m < 0 || m >= int64(slots) {
				t.Fatalf("slots %d: marker(%d) = %d, out of range", slots, seq, m)
			}
			if seq < int64(slots) {
				if seen[m] {
					t.Fatalf("slots %d: marker(%d) = %d is shared with an earlier sequence of the lap", slots, seq, m)
				}
				seen[m] = true
			} else if m != r.marker(seq-int64(slots)) {
				t.Fatalf("slots %d: marker(%d) = %d, but the same slot a lap earlier has %d", slots, seq, m, r.marker(seq-int64(slots)))
			}
		}
		if slots < markersPerLine*markersPerLine {
			continue // too few markers to give each neighbour its own line
		}
		for seq := int64(0); seq+markersPerLine <= int64(slots); seq++ {
			lines := map[int64]bool{}
			for s := seq; s < seq+markersPerLine; s++ {
				lines[r.marker(s)/markersPerLine] = true
			}
			if len(lines) != markersPerLine {
				t.Fatalf("slots %d: sequences %d..%d share cache lines of the marker array", slots, seq, seq+markersPerLine-1)
			}
		}
	}
}
