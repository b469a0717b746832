package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The snapshot file format is drawn in doc.go.
const (
	snapshotMagic       = "FVSNAPSH"
	snapshotEndMagic    = "SNPE"
	snapshotVersion     = uint16(1)
	SnapshotHeaderBytes = 32
	// SnapshotTrailerBytes is the fixed trailer: payload length (8),
	// CRC32C of header and payload (4), end magic (4).
	SnapshotTrailerBytes = 16
	snapshotPrefix       = "snapshot-"
	snapshotSuffix       = ".snap"
	// snapshotBufferBytes is the buffered writer in front of the file.
	snapshotBufferBytes = 1 << 20
)

// ErrBadSnapshot is wrapped by every snapshot validation failure.
var ErrBadSnapshot = errors.New("journal: bad snapshot")

// SnapshotFile names a snapshot on disk.
type SnapshotFile struct {
	Path         string
	Seq          uint64 // the last command whose effect the state includes
	PayloadBytes int64
}

// SnapshotName is the file name of the snapshot taken after command seq.
func SnapshotName(seq uint64) string {
	return fmt.Sprintf("%s%020d%s", snapshotPrefix, seq, snapshotSuffix)
}

func parseSnapshotName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, snapshotPrefix) || !strings.HasSuffix(name, snapshotSuffix) {
		return 0, false
	}
	v, err := strconv.ParseUint(name[len(snapshotPrefix):len(name)-len(snapshotSuffix)], 10, 64)
	return v, err == nil && v <= maxSeq
}

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w     io.Writer
	crc   hash.Hash32
	bytes int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc.Write(p[:n])
	c.bytes += int64(n)
	return n, err
}

// WriteSnapshot writes the state produced by fill as the snapshot taken
// after command seq, crash-safely: into a .tmp file, then fsync, rename and
// a directory fsync, so a snapshot with its final name is always complete.
// fill is typically the matcher's WriteSnapshot; it runs on the calling
// goroutine and must not run concurrently with Apply. sync nil means
// DefaultSync.
//
// Call it only once command seq is durable in the journal (Snapshotter
// waits for that). Otherwise a power cut could lose command seq while its
// snapshot survives, and once new, different commands are journaled under
// the same seqs, recovery would load a state that never happened.
func WriteSnapshot(dir string, seq uint64, fill func(io.Writer) error, sync SyncFunc) (SnapshotFile, error) {
	if sync == nil {
		sync = DefaultSync
	}
	tmp, err := writeSnapshotTemp(dir, seq, fill, sync)
	if err != nil {
		return SnapshotFile{}, err
	}
	return publishSnapshot(dir, tmp, sync)
}

// writeSnapshotTemp writes and fsyncs the snapshot file under its .tmp name.
func writeSnapshotTemp(dir string, seq uint64, fill func(io.Writer) error, sync SyncFunc) (SnapshotFile, error) {
	if seq > maxSeq {
		return SnapshotFile{}, fmt.Errorf("journal: snapshot seq %d too large", seq)
	}
	final := filepath.Join(dir, SnapshotName(seq))
	tmp := final + tmpSuffix
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: snapshot: %w", err)
	}
	fail := func(step string, err error) (SnapshotFile, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return SnapshotFile{}, fmt.Errorf("journal: write snapshot %s: %s: %w", filepath.Base(final), step, err)
	}
	bw := bufio.NewWriterSize(f, snapshotBufferBytes)
	cw := &crcWriter{w: bw, crc: crc32.New(castagnoli)}
	var hdr [SnapshotHeaderBytes]byte
	copy(hdr[0:], snapshotMagic)
	binary.LittleEndian.PutUint16(hdr[8:], snapshotVersion)
	binary.LittleEndian.PutUint16(hdr[10:], SnapshotHeaderBytes)
	binary.LittleEndian.PutUint64(hdr[16:], seq)
	binary.LittleEndian.PutUint32(hdr[28:], crc32.Checksum(hdr[:28], castagnoli))
	if _, err := cw.Write(hdr[:]); err != nil {
		return fail("header", err)
	}
	if err := fill(cw); err != nil {
		return fail("state", err)
	}
	payloadBytes := cw.bytes - SnapshotHeaderBytes
	var tr [SnapshotTrailerBytes]byte
	binary.LittleEndian.PutUint64(tr[0:], uint64(payloadBytes))
	binary.LittleEndian.PutUint32(tr[8:], cw.crc.Sum32())
	copy(tr[12:], snapshotEndMagic)
	if _, err := bw.Write(tr[:]); err != nil {
		return fail("trailer", err)
	}
	if err := bw.Flush(); err != nil {
		return fail("write", err)
	}
	if err := sync(f, SyncFile); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		return fail("close", err)
	}
	return SnapshotFile{Path: tmp, Seq: seq, PayloadBytes: payloadBytes}, nil
}

// publishSnapshot renames a synced temporary snapshot into place and
// fsyncs the directory.
func publishSnapshot(dir string, tmp SnapshotFile, sync SyncFunc) (SnapshotFile, error) {
	final := strings.TrimSuffix(tmp.Path, tmpSuffix)
	if err := os.Rename(tmp.Path, final); err != nil {
		_ = os.Remove(tmp.Path)
		return SnapshotFile{}, fmt.Errorf("journal: publish snapshot: %w", err)
	}
	if err := SyncDirectory(dir, sync); err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: publish snapshot: %w", err)
	}
	tmp.Path = final
	return tmp, nil
}

// ListSnapshots returns the snapshot files of dir by name, newest (highest
// seq) first, without validating them. An entry named like a snapshot that
// is not a regular file (a directory, a named pipe) is an error naming it:
// passed over, it hid a snapshot that was meant to be there, and opened, a
// named pipe waits for a writer for ever.
func ListSnapshots(dir string) ([]SnapshotFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: list snapshots: %w", err)
	}
	var out []SnapshotFile
	for _, e := range entries {
		if seq, ok := parseSnapshotName(e.Name()); ok {
			if err := notRegular(dir, e, "a snapshot"); err != nil {
				return nil, err
			}
			out = append(out, SnapshotFile{Path: filepath.Join(dir, e.Name()), Seq: seq})
		}
	}
	slices.SortFunc(out, func(a, b SnapshotFile) int {
		switch {
		case a.Seq > b.Seq:
			return -1
		case a.Seq < b.Seq:
			return 1
		}
		return 0
	})
	return out, nil
}

// CheckSnapshot validates a snapshot file completely (header, name, size,
// trailer, CRC over everything) and returns its description.
func CheckSnapshot(path string) (SnapshotFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	return checkSnapshot(f, path)
}

func checkSnapshot(f *os.File, path string) (SnapshotFile, error) {
	bad := func(format string, a ...any) (SnapshotFile, error) {
		return SnapshotFile{}, fmt.Errorf("%w %s: %s", ErrBadSnapshot, path, fmt.Sprintf(format, a...))
	}
	st, err := f.Stat()
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: %w", err)
	}
	size := st.Size()
	if size < SnapshotHeaderBytes+SnapshotTrailerBytes {
		return bad("%d bytes is too short", size)
	}
	var hdr [SnapshotHeaderBytes]byte
	if err := readFull(f, hdr[:], 0); err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: read %s: %w", path, err)
	}
	switch {
	case string(hdr[:8]) != snapshotMagic:
		return bad("magic %q", hdr[:8])
	case binary.LittleEndian.Uint32(hdr[28:]) != crc32.Checksum(hdr[:28], castagnoli):
		return bad("header crc")
	case binary.LittleEndian.Uint16(hdr[8:]) != snapshotVersion:
		return bad("version %d", binary.LittleEndian.Uint16(hdr[8:]))
	case binary.LittleEndian.Uint16(hdr[10:]) != SnapshotHeaderBytes:
		return bad("header length %d", binary.LittleEndian.Uint16(hdr[10:]))
	}
	seq := binary.LittleEndian.Uint64(hdr[16:])
	if nameSeq, ok := parseSnapshotName(filepath.Base(path)); ok && nameSeq != seq {
		return bad("header seq %d differs from the name's %d", seq, nameSeq)
	}
	var tr [SnapshotTrailerBytes]byte
	if err := readFull(f, tr[:], size-SnapshotTrailerBytes); err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: read %s: %w", path, err)
	}
	payloadBytes := size - SnapshotHeaderBytes - SnapshotTrailerBytes
	if string(tr[12:]) != snapshotEndMagic {
		return bad("no end marker (incomplete file?)")
	}
	if got := int64(binary.LittleEndian.Uint64(tr[0:])); got != payloadBytes {
		return bad("trailer says %d payload bytes, file holds %d", got, payloadBytes)
	}
	crc := crc32.New(castagnoli)
	if _, err := io.Copy(crc, io.NewSectionReader(f, 0, size-SnapshotTrailerBytes)); err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: read %s: %w", path, err)
	}
	if got, want := binary.LittleEndian.Uint32(tr[8:]), crc.Sum32(); got != want {
		return bad("crc32c %08x, computed %08x", got, want)
	}
	return SnapshotFile{Path: path, Seq: seq, PayloadBytes: payloadBytes}, nil
}

// ReadSnapshot validates the snapshot at path completely, and only then
// hands its payload to read (typically the matcher's ReadSnapshot), so
// that a damaged file never reaches the state machine.
func ReadSnapshot(path string, read func(io.Reader) error) (SnapshotFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	sf, err := checkSnapshot(f, path)
	if err != nil {
		return SnapshotFile{}, err
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, SnapshotHeaderBytes, sf.PayloadBytes), snapshotBufferBytes)
	if err := read(br); err != nil {
		return SnapshotFile{}, fmt.Errorf("journal: load snapshot %s: %w", path, err)
	}
	return sf, nil
}

// ErrJournalBehindSnapshot: a valid snapshot is ahead of the journal's last
// record (LatestSnapshot).
var ErrJournalBehindSnapshot = errors.New("journal: a snapshot is ahead of the journal")

// LatestSnapshot returns the newest valid snapshot of dir whose seq lies in
// [minSeq, maxSeq], or ok=false. Invalid snapshots are logged and passed
// over: a snapshot only saves replay time, the journal holds everything.
// maxSeq is the journal's last seq; a snapshot ahead of it is passed over
// (ReplayOptions.RefuseSnapshotAhead says when it is an error instead).
func LatestSnapshot(dir string, minSeq, maxSeq int64, logger *slog.Logger) (SnapshotFile, bool, error) {
	return latestSnapshot(dir, minSeq, maxSeq, nil, false, logger)
}

// latestSnapshot is LatestSnapshot that also passes over the snapshots
// usable refuses (nil: none) and, with refuseAhead, refuses a valid one
// ahead of maxSeq (ErrJournalBehindSnapshot): a snapshot is published only
// once its command is durable (Snapshotter), so the journal lost durable
// records, and a start from it would lose orders that were answered.
func latestSnapshot(dir string, minSeq, maxSeq int64, usable func(uint64) bool, refuseAhead bool, logger *slog.Logger) (SnapshotFile, bool, error) {
	if logger == nil {
		logger = slog.Default()
	}
	snaps, err := ListSnapshots(dir)
	if err != nil {
		return SnapshotFile{}, false, err
	}
	for _, s := range snaps {
		if int64(s.Seq) > maxSeq && !refuseAhead {
			logger.Info("journal: snapshot ahead of the journal ignored (a venue writing it?)", "snapshot", filepath.Base(s.Path),
				"seq", s.Seq, "journal_last", maxSeq)
			continue
		}
		if int64(s.Seq) > maxSeq {
			if _, err := CheckSnapshot(s.Path); err != nil {
				logger.Warn("journal: invalid snapshot ignored", "snapshot", filepath.Base(s.Path), "err", err)
				continue
			}
			return SnapshotFile{}, false, fmt.Errorf("%w: %s is at seq %d and the journal ends at seq %d, so records up to seq %d are missing "+
				"(a segment lost, or a copy or restore of the data directory that was partial): restore the journal's segments; "+
				"to start from the journal as it is, losing those records, move the snapshots after seq %d out of %s",
				ErrJournalBehindSnapshot, filepath.Base(s.Path), s.Seq, maxSeq, s.Seq, maxSeq, dir)
		}
		if int64(s.Seq) < minSeq {
			logger.Info("journal: snapshot before the journal ignored", "snapshot", filepath.Base(s.Path),
				"seq", s.Seq, "journal_first_usable", minSeq, "journal_last", maxSeq)
			continue
		}
		if usable != nil && !usable(s.Seq) {
			// Why is the caller's to say (a state kept beside it missing,
			// terms it predates).
			logger.Info("journal: snapshot passed over as not usable", "snapshot", filepath.Base(s.Path), "seq", s.Seq)
			continue
		}
		sf, err := CheckSnapshot(s.Path)
		if err != nil {
			logger.Warn("journal: invalid snapshot ignored", "snapshot", filepath.Base(s.Path), "err", err)
			continue
		}
		return sf, true, nil
	}
	return SnapshotFile{}, false, nil
}

// PruneSnapshots deletes all but the keep newest snapshots of dir, so that
// their number stays bounded.
func PruneSnapshots(dir string, keep int) error {
	snaps, err := ListSnapshots(dir)
	if err != nil {
		return err
	}
	for i := max(keep, 0); i < len(snaps); i++ {
		if err := os.Remove(snaps[i].Path); err != nil {
			return fmt.Errorf("journal: prune snapshot: %w", err)
		}
	}
	return nil
}
