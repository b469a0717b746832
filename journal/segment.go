package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/fixvenue/fixvenue/internal/regularfile"
)

const (
	segmentPrefix = "journal-"
	segmentSuffix = ".seg"
	tmpSuffix     = ".tmp"
	// zeroChunkBytes is the size of each write when a file system cannot
	// fallocate and the segment is preallocated by writing zeros.
	zeroChunkBytes = 1 << 20
)

// segmentName is the file name of the segment whose first record is firstSeq.
// Twenty digits keep lexical order equal to numeric order.
func segmentName(firstSeq uint64) string {
	return fmt.Sprintf("%s%020d%s", segmentPrefix, firstSeq, segmentSuffix)
}

// SegmentFirstSeq is the seq of the first record of the segment file name
// (its base name, journal-<20 digits>.seg); ok is false for another name.
func SegmentFirstSeq(name string) (seq uint64, ok bool) { return parseSegmentName(name) }

// parseSegmentName returns the first sequence encoded in a segment name.
func parseSegmentName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, segmentPrefix) || !strings.HasSuffix(name, segmentSuffix) {
		return 0, false
	}
	digits := name[len(segmentPrefix) : len(name)-len(segmentSuffix)]
	if len(digits) != 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || v > maxSeq {
		return 0, false
	}
	return v, true
}

// segmentFile names one segment on disk.
type segmentFile struct {
	path     string
	name     string
	firstSeq uint64
	archived bool // in the archive directory (archive.go), gzip-compressed
	// plain marks an archived segment stored decompressed (gunzipped in
	// place): read as a live one is.
	plain bool
}

// label is the segment's path in the journal directory (Record.Segment).
func (s segmentFile) label() string {
	if s.archived {
		return ArchiveDirName + "/" + filepath.Base(s.path)
	}
	return s.name
}

// notRegular refuses an entry of a journal directory that is named like a
// segment or a snapshot (what) but is not a regular file, or a symbolic
// link to one: opening a named pipe to read waits for a writer for ever
// (the start and the journal tools hung on one), and passing over a
// directory could hide what was meant to be there (package doc, "Segment
// files").
func notRegular(dir string, e fs.DirEntry, what string) error {
	if e.Type().IsRegular() {
		return nil
	}
	path := filepath.Join(dir, e.Name())
	st, err := os.Stat(path) // follows a symbolic link
	if err == nil && st.Mode().IsRegular() {
		return nil
	}
	var kind string
	if err != nil {
		kind = fmt.Sprintf("not a readable file (%v)", err)
	} else {
		kind = regularfile.Kind(st.Mode())
	}
	return fmt.Errorf("journal: %s is named like %s but is %s: move it out of %s", path, what, kind, dir)
}

// listSegments returns the segments of dir in sequence order. Files that
// are not segments are ignored; a segment name that does not parse, or one
// that is not a regular file, is an error, because silently skipping it
// could hide a gap.
func listSegments(dir string) ([]segmentFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: list %s: %w", dir, err)
	}
	var segs []segmentFile
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, segmentPrefix) || !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		first, ok := parseSegmentName(name)
		if !ok {
			return nil, fmt.Errorf("journal: %s: unexpected segment file name", filepath.Join(dir, name))
		}
		if err := notRegular(dir, e, "a journal segment"); err != nil {
			return nil, err
		}
		segs = append(segs, segmentFile{path: filepath.Join(dir, name), name: name, firstSeq: first})
	}
	slices.SortFunc(segs, func(a, b segmentFile) int {
		switch {
		case a.firstSeq < b.firstSeq:
			return -1
		case a.firstSeq > b.firstSeq:
			return 1
		}
		return 0
	})
	return segs, nil
}

// removeTempFiles deletes leftovers of segment or snapshot creation that a
// crash interrupted before the rename made them visible, those whose name
// starts with prefix ("": all). They never held acknowledged data: a file
// is renamed into place only once complete. A missing dir has none.
func removeTempFiles(dir, prefix string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: list %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), tmpSuffix) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("journal: remove leftover %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// createSegment makes a new segment atomically: a temporary file is
// preallocated, given its header and synced, then renamed into place and
// the directory synced. A segment with its final name therefore always has
// a valid header and its full size, and a crash can only leave a .tmp file
// behind, which Open deletes. The returned file is open for reading and
// writing.
func createSegment(dir string, dirFile *os.File, firstSeq uint64, segmentBytes int64, zeroFill bool, sync SyncFunc) (*os.File, string, error) {
	final := filepath.Join(dir, segmentName(firstSeq))
	if _, err := os.Stat(final); err == nil {
		return nil, "", fmt.Errorf("journal: segment %s already exists", final)
	}
	tmp := final + tmpSuffix
	_ = os.Remove(tmp) // a stale temporary from an earlier failed attempt
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return nil, "", fmt.Errorf("journal: create segment: %w", err)
	}
	fail := func(step string, err error) (*os.File, string, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, "", fmt.Errorf("journal: create segment %s: %s: %w", filepath.Base(final), step, err)
	}
	if err := preallocate(f, segmentBytes, zeroFill); err != nil {
		return fail("preallocate", err)
	}
	var hdr [SegmentHeaderBytes]byte
	encodeSegmentHeader(hdr[:], segmentHeader{firstSeq: firstSeq, segmentBytes: segmentBytes})
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return fail("write header", err)
	}
	if err := sync(f, SyncFile); err != nil {
		return fail("sync", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail("rename", err)
	}
	if err := sync(dirFile, SyncDir); err != nil {
		// The rename happened; the file stays (it is valid) but the caller
		// must treat the journal as failed.
		_ = f.Close()
		return nil, "", fmt.Errorf("journal: create segment %s: sync directory: %w", filepath.Base(final), err)
	}
	return f, final, nil
}

// preallocate gives f its full size with zeros in every byte. fallocate
// reserves the blocks so that later writes cannot fail with ENOSPC; where
// the file system does not support it, or when zeroFill asks for it, the
// zeros are written explicitly (which also spares the first fdatasync of
// each block the cost of converting an unwritten extent).
func preallocate(f *os.File, sizeBytes int64, zeroFill bool) error {
	if !zeroFill {
		err := syscall.Fallocate(int(f.Fd()), 0, 0, sizeBytes)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.ENOSYS) && !errors.Is(err, syscall.EINVAL) {
			return err
		}
	}
	return writeZeros(f, 0, sizeBytes)
}

// writeZeros writes zeros over [off, off+n) of f in bounded chunks.
func writeZeros(f *os.File, off, n int64) error {
	zeros := make([]byte, min(n, zeroChunkBytes))
	for n > 0 {
		chunk := min(n, int64(len(zeros)))
		if _, err := f.WriteAt(zeros[:chunk], off); err != nil {
			return err
		}
		off += chunk
		n -= chunk
	}
	return nil
}

// readFull reads len(buf) bytes at off, reporting a short file as
// io.ErrUnexpectedEOF.
func readFull(f io.ReaderAt, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ListSegments returns the paths of dir's live segments, oldest first
// (archived ones, in the archive directory, are not listed).
func ListSegments(dir string) ([]string, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[i] = s.path
	}
	return paths, nil
}
