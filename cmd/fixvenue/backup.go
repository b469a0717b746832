package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fixvenue/fixvenue/gateway/fixstore"
	"github.com/fixvenue/fixvenue/journal"
)

const backupUsage = `usage: fixvenue backup [--data DIR] [--config FILE] --to DIR

copies the data directory of a single venue, running or stopped, to --to (a new or empty
directory) as a set a venue starts from, under another path or on another machine: every order
acknowledged before the backup began, the books, each session's FIX sequence numbers and stored
messages, the market-data feed's and the console's states, the schedule's and the risk state.

A plain copy of a running venue's directory (cp -a, rsync, tar) is not such a set: files copied
in the file system's order can leave a snapshot, or a FIX store's report, after the journal's end
(the start refuses the copy, naming them), and a file read while the venue writes it can hold a
record torn in its middle with whole ones after it (refused as damage). backup copies in the order
the venue makes things durable, each file up to its last whole record: the sessions' FIX stores,
the snapshots, the states kept beside them and the data directory's records, then the journal's
archive and its segments. Bytes after a file's last whole record that do not change while it is
copied (a torn tail, damage) are not a write in progress: they are copied as they are, said on
stderr, for the restored venue to judge as this one would, and no damage is hidden by the copy. LOCK is not copied (the copy is not in use), nor nats/ (an embedded
event stream's store, which a live copy could tear: the restored venue's export finds its stream
new and exports every event again from the journal).

--data defaults to venue.data_dir of the configuration (the embedded demo configuration unless
--config is given). Progress is drawn on a terminal; the last line, on standard output, says what
the copy holds.

Exit status: 0 when the copy is complete and synced; 1 when it is not (the reason on stderr: the
source unreadable, damage in a sealed journal segment, --to not empty, a disk full); 2 for a
usage error.
`

func cmdBackup(args []string) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	dataDir := fs.String("data", "", "data directory to copy (default: venue.data_dir of the config)")
	cfgPath := fs.String("config", "", "configuration file (TOML) naming the data directory; default: the embedded demo configuration")
	to := fs.String("to", "", "directory to copy to: new, or empty")
	fs.Usage = func() { fmt.Fprint(fs.Output(), backupUsage+"\noptions:\n"); fs.PrintDefaults() }
	cfg, exit := parseWithConfig("backup", fs, args, cfgPath)
	if cfg == nil {
		return exit
	}
	if *to == "" {
		fmt.Fprint(os.Stderr, "fixvenue backup: --to is required\n\n")
		fs.SetOutput(os.Stderr)
		fs.Usage()
		return 2
	}
	if *dataDir == "" {
		*dataDir = cfg.Venue.DataDir
	}
	if cfg.Cluster.Enabled() {
		fmt.Fprint(os.Stderr, "fixvenue backup: a cluster node's data directory is not copied this way: "+
			"its journal holds Raft entries, and every other node holds the same commands\n")
		return 1
	}
	b := &backup{src: *dataDir, dst: *to, bar: newProgressBar(os.Stderr)}
	// Stopped by Ctrl-C or SIGTERM, the copy is left as far as it got: say
	// so, naming it, as a failure does, rather than end without a word and
	// leave a partial copy to be taken for a backup.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		nl, incomplete := "", ""
		if b.bar.tty {
			nl = "\n" // after the progress line
		}
		if b.started.Load() {
			incomplete = fmt.Sprintf(" (the copy in %s is incomplete: remove it before backing up there again)", b.dst)
		}
		fmt.Fprintf(os.Stderr, "%sfixvenue backup: stopped by %v%s\n", nl, s, incomplete)
		os.Exit(1)
	}()
	sum, err := b.run()
	b.bar.done()
	if err != nil {
		incomplete := ""
		if b.started.Load() {
			incomplete = fmt.Sprintf(" (the copy in %s is incomplete: remove it before backing up there again)", b.dst)
		}
		fmt.Fprintf(os.Stderr, "fixvenue backup: %v%s\n", err, incomplete)
		return 1
	}
	if _, err := fmt.Println(sum); err != nil {
		fmt.Fprintf(os.Stderr, "fixvenue backup: %v\n", err)
		return 1
	}
	return 0
}

// backup is one copy of a data directory (cmdBackup).
type backup struct {
	src, dst string
	bar      *progressBar
	done     int64 // bytes copied
	total    int64 // bytes to copy, as listed at the start
	dirs     []string
	started  atomic.Bool // files written to dst
}

// run copies in the order the venue makes things durable, so that each part
// copied is no newer than what the parts after it hold: a FIX store keeps
// only reports of durable commands, a snapshot is published once its
// command is durable, and a side state or record file (the schedule's, a
// disabled session's) is written before a snapshot that depends on it; the
// journal, copied last, then holds every command any of them shows, and
// the start finds a set it accepts (docs/ARCHITECTURE.md, "Start-up and
// shutdown").
func (b *backup) run() (string, error) {
	st, err := os.Stat(filepath.Join(b.src, "journal"))
	if err != nil {
		return "", fmt.Errorf("no journal in %s: %w", b.src, err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("no journal in %s: %s is not a directory", b.src, filepath.Join(b.src, "journal"))
	}
	if err := os.MkdirAll(b.dst, 0o755); err != nil {
		return "", err
	}
	if names, err := os.ReadDir(b.dst); err != nil {
		return "", err
	} else if len(names) > 0 {
		return "", fmt.Errorf("%s is not empty: a backup goes to a new or empty directory", b.dst)
	}
	b.total = dirBytes(b.src)
	b.started.Store(true)
	started := time.Now()

	stores, err := b.copyDir("fixstore", copyFIXStore)
	if err != nil {
		return "", err
	}
	jsrc, jdst := filepath.Join(b.src, "journal"), filepath.Join(b.dst, "journal")
	if err := b.mkdir(jdst); err != nil {
		return "", err
	}
	// Listed before the journal's segments are: a snapshot is published
	// only once its command is durable, so the segments copied after it
	// hold every command it describes.
	snaps, err := journal.ListSnapshots(jsrc)
	if err != nil {
		return "", err
	}
	var newest uint64
	copied := 0
	for _, sf := range snaps {
		ok, err := b.copyFile(sf.Path, filepath.Join(jdst, filepath.Base(sf.Path)), copyWhole, false)
		if err != nil {
			return "", err
		}
		if ok {
			newest = max(newest, sf.Seq)
			copied++
		}
	}
	// The states kept beside the snapshots are written at a command after
	// theirs, so they are copied after the snapshots: a snapshot copied
	// without its states is passed over by the start for an older one.
	for _, d := range []string{"mdstate", "consolestate", "spec"} {
		if _, err := b.copyDir(d, copyWhole); err != nil {
			return "", err
		}
	}
	if err := b.copyRecords(); err != nil {
		return "", err
	}
	// The segments are listed before the archive is copied: a segment an
	// end of day archives meanwhile is then found in one place or the
	// other (it is written to the archive before it leaves the journal).
	segs, err := journal.ListSegments(jsrc)
	if err != nil {
		return "", err
	}
	if err := b.copyArchive(); err != nil {
		return "", err
	}
	var next uint64
	gone := false
	prev, prevEnd := "", int64(0) // the segment copied just before ("" after one archived meanwhile) and its end
	for i, path := range segs {
		n, end, ok, err := b.copySegment(path, filepath.Join(jdst, filepath.Base(path)), i == len(segs)-1)
		if err != nil {
			return "", err
		}
		if !ok {
			gone = true
			prev = ""
			continue
		}
		// Each segment starts where the one before ended, as a start
		// checks: a segment missing between two (removed, not restored)
		// leaves a copy the start refuses, which is no backup.
		if first, _ := journal.SegmentFirstSeq(filepath.Base(path)); prev != "" && first != next {
			return "", fmt.Errorf("%s: %w", prev, &journal.CorruptionError{Segment: prev, Offset: prevEnd,
				Reason: fmt.Sprintf("data ends before sequence %d but the next segment %s starts at %d", next, filepath.Base(path), first)})
		}
		prev, prevEnd = path, end
		next = n
	}
	if gone {
		// Archived while this copy ran: the archive has it now.
		if err := b.copyArchive(); err != nil {
			return "", err
		}
	}
	if err := b.syncDirs(); err != nil {
		return "", err
	}
	return fmt.Sprintf("backup of %s to %s: journal through seq %d, %d snapshots (newest seq %d), %d FIX stores, %d bytes, in %s",
		b.src, b.dst, int64(next)-1, copied, newest, stores, b.done, time.Since(started).Round(time.Millisecond)), nil
}

// copyRecords copies the data directory's own files (terms.json,
// schedule.state, phases.json, sessions.disabled, end_of_day.json, …),
// each written whole by a rename, but not LOCK, which only says the
// directory is in use.
func (b *backup) copyRecords() error {
	entries, err := os.ReadDir(b.src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if _, err := b.copyFile(filepath.Join(b.src, e.Name()), filepath.Join(b.dst, e.Name()), copyWhole, false); err != nil {
			return err
		}
	}
	return nil
}

// copyArchive copies the archived segments not copied yet (each is renamed
// into place whole and never changes).
func (b *backup) copyArchive() error {
	src := filepath.Join(b.src, "journal", journal.ArchiveDirName)
	entries, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	dst := filepath.Join(b.dst, "journal", journal.ArchiveDirName)
	if err := b.mkdir(dst); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dst, e.Name())); err == nil {
			continue
		}
		if _, err := b.copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), copyWhole, false); err != nil {
			return err
		}
	}
	return nil
}

// copyDir copies the regular files of the data directory's subdirectory
// name, each with copy, and returns how many it copied; a directory the
// source lacks is left out.
func (b *backup) copyDir(name string, copy wholeRecords) (int, error) {
	src, dst := filepath.Join(b.src, name), filepath.Join(b.dst, name)
	entries, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	if err := b.mkdir(dst); err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		ok, err := b.copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), copy, false)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (b *backup) mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.dirs = append(b.dirs, dir)
	return nil
}

// wholeRecords returns the end of a file's whole records, from its start:
// the bytes after it are zeros, or a record cut by a write the copy read
// half done, or damage.
type wholeRecords func(data []byte) (end int, err error)

// settleWait is how long a copy waits to read again the bytes after a
// file's whole records: a write the copy met is done by then.
const settleWait = 100 * time.Millisecond

// copyFile copies src to dst, synced, whole (scan nil: a file written
// whole by a rename, in pieces) or up to the end of its whole records
// (scan), the rest zeros when keepSize says the file keeps its size (a
// journal segment, preallocated). Bytes after that end that are not zeros
// are read again after settleWait: changed, they were a write in progress,
// whose records no part copied before shows (the file is cut there);
// unchanged, they are what the file holds, a torn tail or damage, copied as
// they are, so that the restored venue judges them as this one would (a
// torn tail cut, damage refused) and no damage is hidden by the copy. ok
// is false when src is gone (a snapshot pruned, a segment archived, a
// store compacted away while the copy ran).
func (b *backup) copyFile(src, dst string, scan wholeRecords, keepSize bool) (ok bool, err error) {
	if scan == nil {
		return b.streamFile(src, dst)
	}
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	end, err := scan(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", src, err)
	}
	out := data
	if !allZero(data[end:]) {
		time.Sleep(settleWait)
		again, err := os.ReadFile(src)
		switch {
		case err == nil && len(again) >= len(data) && bytes.Equal(again[end:len(data)], data[end:]):
			fmt.Fprintf(os.Stderr, "fixvenue backup: %s: bytes after its last whole record, at offset %d, unchanged while copied: "+
				"copied as they are, for the start to judge as it would here (a torn tail is cut, damage refused)\n", src, end)
		case keepSize:
			clear(data[end:])
		default:
			out = data[:end]
		}
	} else if !keepSize {
		out = data[:end]
	}
	if err := writeSynced(dst, out); err != nil {
		return false, err
	}
	b.done += int64(len(data))
	b.bar.update(journal.Progress{BytesDone: b.done, BytesTotal: b.total})
	return true, nil
}

// copySegment copies a journal segment up to its last whole record, the
// rest of its size zeros as preallocation leaves it: read while the venue
// writes it, the last segment may end in a batch half copied, a record cut
// or a page of it still zero with whole records after it, which a start
// would refuse as damage. Those records were not yet acknowledged (their
// fdatasync had not returned when the snapshots and FIX stores before them
// were copied), so cutting them loses nothing the copy's other files show.
// Bytes there that stay as they are while copied are the segment's own,
// copied as they are (copyFile). A sealed segment is complete: a bad
// record in it is damage, refused.
// next is the seq after the segment's last record copied, end its offset.
func (b *backup) copySegment(src, dst string, last bool) (next uint64, end int64, ok bool, err error) {
	ok, err = b.copyFile(src, dst, func(data []byte) (int, error) {
		e, n, err := journal.SegmentCopyEnd(src, data, !last)
		next, end = n, e
		return int(e), err
	}, true)
	return next, end, ok, err
}

// copyFIXStore keeps a FIX store's records up to the first that is not
// whole (gateway/fixstore/doc.go), as its open would, so that a record
// read in the middle of the venue's write does not leave good records
// after a bad one, which the store refuses to open. What is cut is a
// store a moment older, whose missing reports the start rebuilds from the
// journal ("Answers lost at a crash"); bytes that stay as they are while
// copied are the store's own, copied as they are (copyFile).
func copyFIXStore(data []byte) (int, error) { return int(fixstore.WholeRecordsEnd(data)), nil }

// copyWhole, given to copyFile, copies a file written whole by a rename
// (a snapshot, a state beside one, an archived segment, a record), as it
// is, in pieces: a snapshot of a full book is large.
var copyWhole wholeRecords

// streamFile is copyFile for copyWhole.
func (b *backup) streamFile(src, dst string) (ok bool, err error) {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer in.Close()
	err = copySynced(dst, in, func(n int) {
		b.done += int64(n)
		b.bar.update(journal.Progress{BytesDone: b.done, BytesTotal: b.total})
	})
	return err == nil, err
}

func allZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// writeSynced writes data to a new file at path, synced.
func writeSynced(path string, data []byte) error {
	return copySynced(path, bytes.NewReader(data), nil)
}

// copySynced copies r to a new file at path (never one there: the copy's
// files are its own), in pieces, each counted (when counted is not nil),
// and syncs it.
func copySynced(path string, r io.Reader, counted func(n int)) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
			if counted != nil {
				counted(n)
			}
		}
		if rerr == io.EOF {
			break
		} else if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncDirs makes the copy's names durable, the directories made and the
// copy's own.
func (b *backup) syncDirs() error {
	for _, d := range append(slices.Clone(b.dirs), b.dst) {
		f, err := os.Open(d)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	return nil
}

// dirBytes is the size of the regular files under dir, for the progress
// bar.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
