package journal

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The archive: sealed segments that a snapshot has made unnecessary for
// start-up are moved, gzip-compressed, to the archive subdirectory of the
// journal directory (see "Archive" in doc.go). A Reader still reads them,
// transparently, when it is asked for records they hold, so `journal
// verify` and a replay from the first command cover archive and live
// segments as one chain; a replay from a snapshot taken after them never
// opens them.
const (
	// ArchiveDirName is the archive's directory inside a journal directory.
	ArchiveDirName  = "archive"
	archivedSuffix  = ".gz"
	archiveGzipMode = gzip.BestSpeed
	// archivedSegmentBytesMax bounds the decompressed size of one archived
	// segment a Reader accepts (it is read into memory): a segment is at
	// most SegmentBytesLimit.
	archivedSegmentBytesMax = SegmentBytesLimit
)

// ArchiveResult says what ArchiveSegments moved.
type ArchiveResult struct {
	Segments        int   // segments moved to the archive
	RawBytes        int64 // their size in the live directory
	CompressedBytes int64 // their size in the archive
}

// ArchiveSegments moves every sealed segment whose records all have a seq
// at most throughSeq (the seq of a durable snapshot) to the archive, in
// order. Each is compressed to a temporary file, synced, renamed into
// place and the archive directory synced before the live segment is
// removed and the journal directory synced, so that a crash at any point
// leaves every record in the live directory, the archive, or both (a Reader
// prefers the live copy). The last segment, which the writer appends to,
// is never moved.
func ArchiveSegments(dir string, throughSeq uint64, sync SyncFunc) (ArchiveResult, error) {
	var res ArchiveResult
	if sync == nil {
		sync = DefaultSync
	}
	segs, err := listSegments(dir)
	if err != nil {
		return res, err
	}
	archive := filepath.Join(dir, ArchiveDirName)
	for i := 0; i+1 < len(segs); i++ {
		// Segment i holds seqs up to segs[i+1].firstSeq-1.
		if segs[i+1].firstSeq > throughSeq+1 {
			break
		}
		if res.Segments == 0 {
			if err := os.MkdirAll(archive, 0o750); err != nil {
				return res, fmt.Errorf("journal: archive: %w", err)
			}
		}
		raw, compressed, err := archiveSegment(dir, archive, segs[i], sync)
		if err != nil {
			return res, err
		}
		res.Segments++
		res.RawBytes += raw
		res.CompressedBytes += compressed
	}
	return res, nil
}

// MoveToArchive moves, uncompressed, every sealed segment that a segment
// starting before beforeSeq follows (so it holds no record from beforeSeq
// on, not even the Raft entry mark of a command from there), to the
// archive, where a Reader reads it as an archived segment decompressed in
// place. A rename, no copy: a replicated journal, which must not spend
// seconds of a running node's CPU compressing, uses it (cluster/doc.go,
// "Archive"). The
// archive directory is synced before the journal directory, each once.
// It returns how many segments moved. A writer may append meanwhile (the
// last segment never moves), and a Reader that listed a segment live reads
// it from the archive.
func MoveToArchive(dir string, beforeSeq uint64, sync SyncFunc) (int, error) {
	if sync == nil {
		sync = DefaultSync
	}
	segs, err := listSegments(dir)
	if err != nil {
		return 0, err
	}
	archive := filepath.Join(dir, ArchiveDirName)
	moved := 0
	for i := 0; i+1 < len(segs) && segs[i+1].firstSeq < beforeSeq; i++ {
		if moved == 0 {
			if err := os.MkdirAll(archive, 0o750); err != nil {
				return 0, fmt.Errorf("journal: archive: %w", err)
			}
		}
		if err := os.Rename(segs[i].path, filepath.Join(archive, segs[i].name)); err != nil {
			return moved, fmt.Errorf("journal: archive %s: %w", segs[i].name, err)
		}
		moved++
	}
	if moved == 0 {
		return 0, nil
	}
	if err := SyncDirectory(archive, sync); err != nil {
		return moved, err
	}
	return moved, SyncDirectory(dir, sync)
}

// archiveSegment compresses one sealed segment into the archive and then
// removes it from the live directory.
func archiveSegment(dir, archive string, seg segmentFile, sync SyncFunc) (raw, compressed int64, err error) {
	final := filepath.Join(archive, seg.name+archivedSuffix)
	tmp := final + tmpSuffix
	in, err := os.Open(seg.path)
	if err != nil {
		return 0, 0, fmt.Errorf("journal: archive: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return 0, 0, fmt.Errorf("journal: archive: %w", err)
	}
	fail := func(step string, err error) (int64, int64, error) {
		_ = out.Close()
		_ = os.Remove(tmp)
		return 0, 0, fmt.Errorf("journal: archive %s: %s: %w", seg.name, step, err)
	}
	zw, err := gzip.NewWriterLevel(out, archiveGzipMode)
	if err != nil {
		return fail("compress", err)
	}
	zw.Name = seg.name
	if raw, err = io.Copy(zw, in); err != nil {
		return fail("compress", err)
	}
	if err := zw.Close(); err != nil {
		return fail("compress", err)
	}
	if err := sync(out, SyncFile); err != nil {
		return fail("sync", err)
	}
	if compressed, err = out.Seek(0, io.SeekEnd); err != nil {
		return fail("size", err)
	}
	if err := out.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return 0, 0, fmt.Errorf("journal: archive %s: %w", seg.name, err)
	}
	if err := SyncDirectory(archive, sync); err != nil {
		return 0, 0, err
	}
	if err := os.Remove(seg.path); err != nil {
		return 0, 0, fmt.Errorf("journal: archive: remove %s: %w", seg.name, err)
	}
	return raw, compressed, SyncDirectory(dir, sync)
}

// SyncDirectory makes the entries of directory dir durable (renames, removals,
// new files) with sync's SyncDir. A cluster replica's small files use it too.
func SyncDirectory(dir string, sync SyncFunc) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := sync(d, SyncDir); err != nil {
		return fmt.Errorf("journal: sync %s: %w", dir, err)
	}
	return nil
}

// listArchived returns the archived segments of the journal in dir that
// come before its first live segment (firstLive; all of them when the live
// directory is empty), in sequence order. A segment in both places is read
// from the live directory.
func listArchived(dir string, firstLive uint64, haveLive bool) ([]segmentFile, error) {
	archive := filepath.Join(dir, ArchiveDirName)
	entries, err := os.ReadDir(archive)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: list %s: %w", archive, err)
	}
	var segs []segmentFile
	for _, e := range entries {
		// A segment decompressed in place (gunzip, to read it, or restored
		// so from other storage) is the segment byte for byte: it is read
		// as it is, not passed over, which left its records missing from
		// the directory that holds them.
		name, compressed := strings.CutSuffix(e.Name(), archivedSuffix)
		if !strings.HasPrefix(name, segmentPrefix) || !compressed && !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		first, ok := parseSegmentName(name)
		if !ok {
			return nil, fmt.Errorf("journal: %s: unexpected archived segment name", filepath.Join(archive, e.Name()))
		}
		if err := notRegular(archive, e, "an archived journal segment"); err != nil {
			return nil, err
		}
		if haveLive && first >= firstLive {
			continue
		}
		seg := segmentFile{path: filepath.Join(archive, e.Name()), name: name, firstSeq: first, archived: true, plain: !compressed}
		// ReadDir sorts by name, so names sort by first seq (twenty digits)
		// and a segment's decompressed copy comes just before the
		// compressed one, which the venue wrote and is read instead.
		if n := len(segs); n > 0 && segs[n-1].firstSeq == first {
			segs[n-1] = seg
			continue
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// FirstLiveSeq is the seq of the journal directory's first record (its
// first segment's first seq); ok is false when it has no segment. Records
// before it are archived, or gone.
func FirstLiveSeq(dir string) (seq uint64, ok bool, err error) {
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		return 0, false, err
	}
	return segs[0].firstSeq, true, nil
}

// readArchived decompresses an archived segment into memory.
func readArchived(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: open archived segment: %w", err)
	}
	defer f.Close()
	// The offset an error names is in the file it names, the compressed
	// one (the decompressed count alone named offsets past its end):
	// gzip reads a ByteReader byte by byte, so in.n is what it consumed.
	in := &countingReader{r: bufio.NewReader(f)}
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, &CorruptionError{Segment: path, Offset: in.n, Reason: "archived segment: " + err.Error()}
	}
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(zr, archivedSegmentBytesMax+1))
	if err != nil {
		return nil, &CorruptionError{Segment: path, Offset: in.n, Reason: fmt.Sprintf("archived segment: %v (%d bytes decompressed before it)", err, n)}
	}
	if n > archivedSegmentBytesMax {
		return nil, &CorruptionError{Segment: path, Offset: in.n, Reason: fmt.Sprintf("archived segment larger than a segment may be (over %d bytes decompressed)", archivedSegmentBytesMax)}
	}
	return b.Bytes(), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
