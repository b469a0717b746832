package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Checkpoints (doc.go, "Checkpoints"): every snapshot a replica builds is
// also kept on its disk, so that its next start restores the newest one and
// replays only the journal after it, and its next build starts from it.
const (
	checkpointPrefix = "checkpoint-"
	checkpointSuffix = ".snap"
	// checkpointPartSuffix marks a checkpoint being written: not the
	// journal's ".tmp", which a journal.Open (a truncation's) removes.
	checkpointPartSuffix = ".part"
	// checkpointsKept is how many checkpoints a replica keeps: the newest,
	// and one before it in case the newest is damaged.
	checkpointsKept = 2
)

// CheckpointIntervalMin is the least time between two builds that
// compactions start by default (NodeConfig.CheckpointInterval, the
// config's cluster.checkpoint_interval): a build loads and saves the whole
// state, whatever the commands since the last, so a busy replica, whose
// window may fill in seconds, builds at most one a minute. A follower
// behind the compaction point has one built whenever it needs it.
const CheckpointIntervalMin = time.Minute

// CheckpointStats are a replica's checkpoint figures, read from any
// goroutine.
type CheckpointStats struct {
	// Index is the Raft index of the newest checkpoint kept (0: none).
	Index atomic.Uint64
	// Failures counts snapshot builds and checkpoint writes that failed.
	Failures atomic.Uint64
	// Built counts the checkpoints kept since start, and LastBuildNanos is
	// the last one's time from the start of its build (the load, the replay,
	// the save) to its file on disk, its archiving not included.
	Built          atomic.Uint64
	LastBuildNanos atomic.Int64
}

func checkpointPath(dir string, index uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%020d%s", checkpointPrefix, index, checkpointSuffix))
}

// checkpointFile is one checkpoint on disk.
type checkpointFile struct {
	index uint64
	path  string
}

// listCheckpoints returns the checkpoint files in dir, newest first (a
// name that does not parse is not one; a file being written neither).
func listCheckpoints(dir string) ([]checkpointFile, error) {
	names, err := filepath.Glob(filepath.Join(dir, checkpointPrefix+"*"+checkpointSuffix))
	if err != nil {
		return nil, err
	}
	var out []checkpointFile
	for _, p := range names {
		num := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), checkpointPrefix), checkpointSuffix)
		index, err := strconv.ParseUint(num, 10, 64)
		if err != nil || len(num) != 20 {
			continue
		}
		out = append(out, checkpointFile{index: index, path: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index > out[j].index })
	return out, nil
}

// writeCheckpoint keeps s in dir as the checkpoint of its index: written
// to a .part file, synced, renamed into place and the directory
// synced, so a crash leaves the whole file or none. The checkpoints beyond
// checkpointsKept are then removed, oldest first.
func writeCheckpoint(dir string, s *raftpb.Snapshot) error {
	if _, _, err := snapshotNext(s); err != nil {
		return err
	}
	if err := writeReplacing(dir, checkpointPath(dir, s.GetMetadata().GetIndex()), append(snapshotFileHeader(s), s.GetData()...)); err != nil {
		return err
	}
	all, err := listCheckpoints(dir)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	var errs []error
	for _, old := range all[min(len(all), checkpointsKept):] {
		if err := os.Remove(old.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCheckpoints removes every checkpoint in dir, returning how many
// there were.
func removeCheckpoints(dir string) (int, error) {
	all, err := listCheckpoints(dir)
	if err != nil {
		return 0, fmt.Errorf("cluster: %w", err)
	}
	for _, c := range all {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("cluster: %w", err)
		}
	}
	if len(all) > 0 {
		return len(all), syncDir(dir)
	}
	return 0, nil
}

// openCheckpoint makes the newest valid checkpoint built, the one Open
// restores, and returns the oldest valid one, which Open moves the segments
// before to the archive (the newer stays a fallback: doc.go, "Archive");
// or it removes them all when drop is set. A node that cannot build
// snapshots (no NewState) has none to restore.
func (l *Log) openCheckpoint(all []entryMeta, drop bool) (*raftpb.Snapshot, error) {
	// A write a crash interrupted (no build runs yet).
	parts, _ := filepath.Glob(filepath.Join(l.dir, checkpointPrefix+"*"+checkpointPartSuffix))
	for _, p := range parts {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	if drop {
		n, err := removeCheckpoints(l.dir)
		if n > 0 {
			l.logger.Info("cluster: checkpoints removed: the configuration adds sessions or instruments they do not hold; this start replays the journal from its base",
				"removed", n)
		}
		return nil, err
	}
	if l.newState == nil {
		return nil, nil
	}
	valid, err := l.loadCheckpoints(all)
	if err != nil || len(valid) == 0 {
		return nil, err
	}
	l.built = valid[0]
	l.checkpoints.Index.Store(l.built.GetMetadata().GetIndex())
	return valid[len(valid)-1], nil
}

// loadCheckpoints returns the checkpoints a start may restore, newest
// first: valid (a damaged one is passed over, with a warning), after the
// base, at or after the live log's start (archive.go), at or before the
// commit index, and at an entry boundary of the log read (all, the entries
// after the start, or the archive's point), its next seq the one after
// that entry's commands.
func (l *Log) loadCheckpoints(all []entryMeta) ([]*raftpb.Snapshot, error) {
	files, err := listCheckpoints(l.dir)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	base, start := l.baseIndex(), l.startIndex()
	var valid []*raftpb.Snapshot
	for _, f := range files {
		if f.index <= base || f.index < start || f.index > l.state.commit {
			continue // from before a Raft snapshot replaced the log or the archive's point, or (never written so) past what is committed
		}
		s, err := readSnapshotFile(f.path, l.voters)
		if err == nil && s.GetMetadata().GetIndex() != f.index {
			err = fmt.Errorf("%w: %s holds the snapshot of index %d", ErrCorrupt, f.path, s.GetMetadata().GetIndex())
		}
		var next uint64
		if err == nil {
			next, _, err = snapshotNext(s)
		}
		if err == nil {
			term, want, ok := uint64(0), uint64(0), false
			if f.index == start { // the one the archive's point was taken at
				term, want, ok = l.archived.term, l.archived.next, true
			} else if k := f.index - start - 1; k < uint64(len(all)) {
				term, want, ok = all[k].term, all[k].nextSeq(), true
			}
			if !ok || term != s.GetMetadata().GetTerm() || want != next {
				err = fmt.Errorf("%w: %s (index %d, next seq %d) does not match the log's entry", ErrCorrupt, f.path, f.index, next)
			}
		}
		if err != nil {
			l.logger.Warn("cluster: checkpoint passed over", "file", f.path, "err", err)
			continue
		}
		valid = append(valid, s)
	}
	return valid, nil
}
