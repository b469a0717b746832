package journal_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/fixvenue/fixvenue/journal"
)

// sectorBytes is the unit a disk writes atomically (or tears).
const sectorBytes = 512

// diskModel records what a power cut would keep: the content of each file
// (by inode, since a segment is synced under its .tmp name and renamed) as
// of its last fsync or fdatasync, and the directory listing as of the last
// directory fsync.
type diskModel struct {
	mu       sync.Mutex
	dir      string
	images   map[uint64][]byte
	durNames map[string]bool
}

func newDiskModel(dir string) *diskModel {
	return &diskModel{dir: dir, images: map[uint64][]byte{}, durNames: map[string]bool{}}
}

func inode(t testing.TB, fi os.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal("no inode")
	}
	return st.Ino
}

func (m *diskModel) sync(t testing.TB) journal.SyncFunc {
	// The model is the disk here: what survives the simulated cut is what
	// it recorded, so the real fsync would only slow the test down.
	return func(f *os.File, kind journal.SyncKind) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if kind == journal.SyncDir {
			entries, err := os.ReadDir(m.dir)
			if err != nil {
				return err
			}
			clear(m.durNames)
			for _, e := range entries {
				m.durNames[e.Name()] = true
			}
			return nil
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		img := make([]byte, fi.Size())
		if _, err := f.ReadAt(img, 0); err != nil {
			return err
		}
		m.images[inode(t, fi)] = img
		return nil
	}
}

// diskState is what a power cut at one moment leaves: per durable name,
// the bytes the file would hold.
type diskState map[string][]byte

// powerCut computes the disk as it could look after losing power now:
// names not durable vanish; each file holds its synced image plus a random
// prefix of the bytes written since, whose last sector is torn. The result
// is applied with apply, after the writer has been closed.
func (m *diskModel) powerCut(t testing.TB, rng *rand.Rand) diskState {
	m.mu.Lock()
	defer m.mu.Unlock()
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	state := diskState{}
	for _, e := range entries {
		if !m.durNames[e.Name()] {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		cur, err := os.ReadFile(filepath.Join(m.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		img, ok := m.images[inode(t, fi)]
		if !ok || len(img) != len(cur) {
			t.Fatalf("%s: durable name without a durable image of its size", e.Name())
		}
		state[e.Name()] = tornImage(img, cur, rng)
	}
	return state
}

// apply makes dir hold exactly state.
func (s diskState) apply(t testing.TB, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := s[e.Name()]; !ok {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, content := range s {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// tornImage keeps img, then a random prefix of the unsynced changes in cur,
// and fills the end of the last sector written with garbage.
func tornImage(img, cur []byte, rng *rand.Rand) []byte {
	out := append([]byte(nil), img...)
	first, last := -1, -1
	for i := range cur {
		if cur[i] != img[i] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return out
	}
	kept := rng.IntN(last + 2 - first) // bytes of the unsynced range that reached the disk
	copy(out[first:first+kept], cur[first:first+kept])
	if kept > 0 && rng.IntN(2) == 0 {
		end := first + kept
		sectorStart := max(first, (end-1)/sectorBytes*sectorBytes)
		from := sectorStart + rng.IntN(end-sectorStart)
		for i := from; i < end; i++ {
			out[i] = byte(rng.Uint32())
		}
	}
	return out
}

// TestPowerCut runs a random workload, cuts the power at a random moment,
// and checks the recovery property: every record that was durable (and so
// could have been acknowledged) survives, records come back exactly as
// appended and in order, and nothing is invented.
func TestPowerCut(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(round), 99))
			dir := t.TempDir()
			model := newDiskModel(dir)
			cfg := smallConfig()
			cfg.Sync = model.sync(t)
			w := openWriter(t, dir, cfg)
			var next uint64
			steps := 1 + rng.IntN(60)
			for range steps {
				for range rng.IntN(12) {
					if err := w.Append(next, payloadFor(next)); err != nil {
						t.Fatal(err)
					}
					next++
				}
				if rng.IntN(3) > 0 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			durable := w.Durable()
			state := model.powerCut(t, rng)
			// Closing flushes the rest, which the power cut has lost: the
			// files are overwritten with the cut state afterwards.
			_ = w.Close()
			state.apply(t, dir)

			cfg.Sync = skipSync
			w, err := journal.Open(dir, cfg)
			if err != nil {
				t.Fatalf("recovery after power cut (durable %d, appended %d): %v", durable, next, err)
			}
			got := w.Recovery().LastSeq
			if got < durable || got >= int64(next) {
				t.Fatalf("recovered up to %d; durable was %d, appended up to %d", got, durable, int64(next)-1)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			seqs, tail := readAll(t, dir) // checks every payload
			if tail != nil || int64(len(seqs)) != got+1 {
				t.Fatalf("after recovery: %d records, tail %+v", len(seqs), tail)
			}
		})
	}
}
