package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/journal"
)

// Verify is `fixvenue journal verify` for a replica's directory: when its
// log starts after a Raft snapshot (raft.snapshot), the snapshot's matcher
// and events hash, then the journal after it; otherwise journal.Verify. The
// result counts the commands the snapshot covers, so every replica of a
// cluster prints the same line (doc.go, "Raft snapshots").
func Verify(dir string, cfg core.Config, progress func(journal.Progress)) (journal.VerifyResult, error) {
	base, err := readSnapshotFile(filepath.Join(dir, snapshotFile), nil)
	if err != nil {
		return journal.VerifyResult{}, err
	}
	if base == nil {
		return journal.Verify(dir, cfg, progress)
	}
	next, data, err := snapshotNext(base)
	if err != nil {
		return journal.VerifyResult{}, err
	}
	st, err := NewMatcherState(cfg, nil)
	if err != nil {
		return journal.VerifyResult{}, err
	}
	if err := st.Load(data); err != nil {
		return journal.VerifyResult{}, err
	}
	return journal.VerifyFrom(dir, st.Matcher, st.Hash, next, progress)
}

// Base is the state a replica's journal continues from: when its log
// starts after a Raft snapshot (raft.snapshot), the snapshot's matcher and
// the seq of the first command after it; otherwise nil and 0, the journal
// holding every command from the first. Readers that rebuild events from a
// replica's journal (the event export's catch-up) start there, as Verify
// does: the commands before it are in no segment of this replica.
func Base(dir string, cfg core.Config) (*core.Matcher, uint64, error) {
	base, err := readSnapshotFile(filepath.Join(dir, snapshotFile), nil)
	if err != nil || base == nil {
		return nil, 0, err
	}
	next, data, err := snapshotNext(base)
	if err != nil {
		return nil, 0, err
	}
	st, err := NewMatcherState(cfg, nil)
	if err != nil {
		return nil, 0, err
	}
	if err := st.Load(data); err != nil {
		return nil, 0, err
	}
	return st.Matcher, next, nil
}

// StartsFromSnapshot reports whether the replica in dir caught up from a
// Raft snapshot (raft.snapshot): its journal then holds no command before
// the snapshot's. A single venue's directory never does.
func StartsFromSnapshot(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// SnapshotNext is the seq of the first command after the Raft snapshot the
// replica in dir caught up from (raft.snapshot); ok is false when it did
// not. Its journal holds no command before that seq. Only the file's header
// is read: Verify and a start check the whole file.
func SnapshotNext(dir string) (next uint64, ok bool, err error) {
	f, err := os.Open(filepath.Join(dir, snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cluster: %w", err)
	}
	defer f.Close()
	h := make([]byte, snapshotHeaderBytes)
	if _, err := io.ReadFull(f, h); err != nil || string(h[:8]) != snapshotMagic {
		return 0, false, fmt.Errorf("%w: %s is damaged", ErrCorrupt, f.Name())
	}
	return binary.LittleEndian.Uint64(h[24:]), true, nil
}
