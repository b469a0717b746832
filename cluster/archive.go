package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/fixvenue/fixvenue/journal"
)

// The archive of a replica's journal (doc.go, "Archive"): the segments
// before the checkpoint a start restored move to the journal's archive
// directory, and raft.archived says where the live log starts.
const (
	archivedFile  = "raft.archived"
	archivedMagic = "FVRARCHV"
	// archivedBytes: magic 8 | index u64 | term u64 | next seq u64 |
	// crc32c u32 of bytes 0..32 | reserved u32.
	archivedBytes = 40
)

// archivedPoint is the last entry whose commands may be in the archive
// only: the live log holds the entries after it.
type archivedPoint struct {
	index, term, next uint64
}

func readArchivedPoint(dir string) (*archivedPoint, error) {
	path := filepath.Join(dir, archivedFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(b) != archivedBytes || string(b[:8]) != archivedMagic ||
		binary.LittleEndian.Uint32(b[32:]) != crc32.Checksum(b[:32], castagnoli) {
		return nil, fmt.Errorf("%w: %s is damaged", ErrCorrupt, path)
	}
	return &archivedPoint{index: binary.LittleEndian.Uint64(b[8:]), term: binary.LittleEndian.Uint64(b[16:]),
		next: binary.LittleEndian.Uint64(b[24:])}, nil
}

func writeArchivedPoint(dir string, p archivedPoint) error {
	b := make([]byte, archivedBytes)
	copy(b, archivedMagic)
	binary.LittleEndian.PutUint64(b[8:], p.index)
	binary.LittleEndian.PutUint64(b[16:], p.term)
	binary.LittleEndian.PutUint64(b[24:], p.next)
	binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], castagnoli))
	return writeReplacing(dir, filepath.Join(dir, archivedFile), b)
}

// startIndex is the index the live log starts after: the base's, or the
// archived point's when later.
func (l *Log) startIndex() uint64 {
	if l.archived != nil && l.archived.index > l.baseIndex() {
		return l.archived.index
	}
	return l.baseIndex()
}

// archiveBefore moves the segments before checkpoint s, restored by this
// start, to the journal's archive (archiveThrough), and the live log then
// starts after it. No writer is open.
func (l *Log) archiveBefore(s *raftpb.Snapshot) error {
	if s.GetMetadata().GetIndex() <= l.startIndex() {
		return nil
	}
	p, err := archiveThrough(l.dir, s, l.jcfg.Sync, l.logger)
	if p != nil {
		l.archived, l.jcfg.FirstSeq = p, p.next // SeqEnd of the start
	}
	return err
}

// archiveThrough moves the segments before checkpoint s (kept, its
// commands all applied and committed) to the journal's archive, once
// raft.archived records s's entry as where the live log starts, and
// returns that point. A crash in between leaves segments live, which the
// next checkpoint, or start, moves. At a start no writer is open; while
// the replica runs, a build's goroutine calls it beside the writer, which
// appends to the last segment (never moved), and readers, which follow a
// segment moved under them (journal.MoveToArchive); the replica's own
// reopenings of the journal (an install, a truncation) stop the build
// first.
func archiveThrough(dir string, s *raftpb.Snapshot, sync journal.SyncFunc, logger *slog.Logger) (*archivedPoint, error) {
	md := s.GetMetadata()
	next, _, err := snapshotNext(s)
	if err != nil {
		return nil, err
	}
	p := archivedPoint{index: md.GetIndex(), term: md.GetTerm(), next: next}
	if err := writeArchivedPoint(dir, p); err != nil {
		return nil, err
	}
	moved, err := journal.MoveToArchive(dir, next, sync)
	if moved > 0 {
		logger.Info("cluster: segments before the checkpoint moved to the journal's archive", "segments", moved,
			"before_seq", next, "dir", filepath.Join(dir, journal.ArchiveDirName))
	}
	return &p, err
}
