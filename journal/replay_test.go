package journal_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestVerifyIsDeterministic: two replays of the same journal give the same
// line, and it equals the event stream the matcher produced live.
func TestVerifyIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	cfg := journal.Config{SegmentBytes: 64 << 10} // several segments
	live := writeWorkload(t, dir, cfg, 1, 5000)
	if n := len(segmentPaths(t, dir)); n < 5 {
		t.Fatalf("%d segments; want several", n)
	}
	first := mustVerify(t, dir)
	second := mustVerify(t, dir)
	if first != second {
		t.Fatalf("two replays differ:\n%v\n%v", first, second)
	}
	if first.Records != live.Records || first.LastSeq != live.LastSeq || first.Events != live.Events ||
		first.EventBytes != live.EventBytes || first.EventsHash != live.EventsHash {
		t.Fatalf("replay %+v, live %+v", first, live)
	}
	if first.Events <= first.Records {
		t.Fatalf("%d events for %d commands: the workload does not trade", first.Events, first.Records)
	}
	if !strings.HasPrefix(first.String(), "records=5000 last_seq=4999 events_hash=") {
		t.Fatalf("line %q", first.String())
	}
	// A different journal gives a different hash.
	other := t.TempDir()
	writeWorkload(t, other, cfg, 2, 5000)
	third := mustVerify(t, other)
	if third.EventsHash == first.EventsHash {
		t.Fatal("two different workloads hash alike")
	}
}

func TestVerifyReportsProgress(t *testing.T) {
	dir := t.TempDir()
	writeWorkload(t, dir, journal.Config{SegmentBytes: 1 << 20}, 3, 3000)
	var calls []journal.Progress
	if _, err := journal.Verify(dir, matcherConfig(), func(p journal.Progress) { calls = append(calls, p) }); err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("no progress reported")
	}
	lastCall := calls[len(calls)-1]
	if lastCall.BytesDone != lastCall.BytesTotal || lastCall.BytesTotal != 1<<20 || lastCall.Records != 3000 {
		t.Fatalf("final progress %+v", lastCall)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].BytesDone < calls[i-1].BytesDone || calls[i].Records < calls[i-1].Records {
			t.Fatalf("progress went backwards: %+v then %+v", calls[i-1], calls[i])
		}
	}
}

func TestReplayStopsAtARefusedCommand(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, journal.Config{SegmentBytes: 1 << 20})
	gen := newWorkload(4)
	buf := make([]byte, 256)
	for i := range uint64(10) {
		if err := w.Append(i, gen.next(t, buf, i)); err != nil {
			t.Fatal(err)
		}
	}
	var ev venue.OrderAccepted // an event is not a command: the matcher refuses it
	if err := ev.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(10, buf[:ev.EncodedLength()]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := newMatcher(t)
	_, err := journal.Replay(dir, m, nil, journal.ReplayOptions{})
	if !errors.Is(err, core.ErrUnknownTemplate) || !strings.Contains(err.Error(), "seq 10") {
		t.Fatalf("replay: %v", err)
	}
}

func TestDump(t *testing.T) {
	dir := t.TempDir()
	writeWorkload(t, dir, journal.Config{SegmentBytes: 1 << 20}, 5, 200)
	w := openWriter(t, dir, journal.Config{SegmentBytes: 1 << 20})
	if err := w.Append(200, []byte("not sbe at all")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := journal.Dump(dir, &out, journal.DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 202 {
		t.Fatalf("%d lines, want 201 records and a summary", len(lines))
	}
	if !strings.HasPrefix(lines[0], "journal-00000000000000000000.seg@64 seq=0 NewOrder seq=0 timestampNs=2026-") ||
		!strings.Contains(lines[0], `clOrdId="o1" account="acct`) {
		t.Fatalf("first line %q", lines[0])
	}
	kinds := map[string]int{}
	for _, l := range lines[:200] {
		kinds[strings.Fields(l)[2]]++
	}
	for _, k := range []string{"NewOrder", "CancelOrder", "ReplaceOrder", "Tick"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in the dump (%v)", k, kinds)
		}
	}
	if !strings.Contains(lines[200], "seq=200 undecodable") || !strings.Contains(lines[200], "hex=6e6f742073626520") {
		t.Fatalf("undecodable record printed as %q", lines[200])
	}
	if lines[201] != "# records=201 last_seq=200 segments=1" {
		t.Fatalf("summary %q", lines[201])
	}
	// From a seq on.
	out.Reset()
	if err := journal.Dump(dir, &out, journal.DumpOptions{FromSeq: 150}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "seq=150 ") || strings.Contains(out.String(), "seq=149 ") {
		t.Fatal("FromSeq not honoured")
	}
}

// TestDumpFromBeforeItsFirstSegment: a dump asked from a seq no segment
// holds (the first moved away) tells Missing, once, which seq it starts
// at, or logs it without one; from a seq a segment holds it says nothing.
func TestDumpFromBeforeItsFirstSegment(t *testing.T) {
	dir := t.TempDir()
	writeWorkload(t, dir, journal.Config{SegmentBytes: 16 << 10}, 5, 1000)
	segs, _ := filepath.Glob(filepath.Join(dir, "journal-*.seg"))
	if len(segs) < 2 {
		t.Fatalf("%d segments, want 2 or more", len(segs))
	}
	if err := os.Remove(segs[0]); err != nil {
		t.Fatal(err)
	}
	first, ok, err := journal.FirstLiveSeq(dir)
	if err != nil || !ok || first == 0 {
		t.Fatalf("first live seq %d, %v, %v", first, ok, err)
	}
	for _, from := range []uint64{0, first - 1, first, first + 1} {
		var out bytes.Buffer
		var told []string
		err := journal.Dump(dir, &out, journal.DumpOptions{FromSeq: from, Missing: func(from, first uint64) {
			told = append(told, fmt.Sprintf("%d-%d", from, first))
		}})
		want := []string(nil)
		if from < first {
			want = []string{fmt.Sprintf("%d-%d", from, first)}
		}
		if err != nil || !slices.Equal(told, want) || !strings.Contains(out.String(), fmt.Sprintf(" seq=%d ", max(from, first))) {
			t.Errorf("dump from %d: %v, told %q, want %q", from, err, told, want)
		}
	}
	var logged bytes.Buffer
	var out bytes.Buffer
	if err := journal.Dump(dir, &out, journal.DumpOptions{Logger: slog.New(slog.NewTextHandler(&logged, nil))}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("from=0 first=%d", first); !strings.Contains(logged.String(), want) {
		t.Errorf("dump from 0 without Missing logged %q, want %q", logged.String(), want)
	}
}

// ledger is a small deterministic state machine with snapshots, so that the
// snapshot logic is tested apart from the matcher: its state is a running
// hash and count of the commands, and each command yields one event that
// depends on the whole state.
type ledger struct {
	count uint64
	h     uint64
}

func (l *ledger) Apply(cmd []byte, sink core.EventSink) error {
	if _, err := journal.CommandLength(cmd); err != nil {
		return err
	}
	l.count++
	l.h = xxhash.Sum64(append(binary.LittleEndian.AppendUint64(nil, l.h), cmd...))
	slot := sink.Claim()
	var ev venue.TradingStatusChanged
	if err := ev.WrapEncode(slot, 0); err != nil {
		return err
	}
	ev.SetCauseSeq(binary.LittleEndian.Uint64(cmd[venue.MessageHeaderSize:]))
	ev.SetTimestampNs(int64(l.h))
	ev.SetInstrumentID(uint32(l.count))
	sink.Commit()
	return nil
}

func (l *ledger) WriteSnapshot(w io.Writer) error {
	return binary.Write(w, binary.LittleEndian, [2]uint64{l.count, l.h})
}

func (l *ledger) ReadSnapshot(r io.Reader) error {
	var s [2]uint64
	if err := binary.Read(r, binary.LittleEndian, &s); err != nil {
		return err
	}
	l.count, l.h = s[0], s[1]
	return nil
}

// TestSnapshotPlusSuffixEqualsFullReplay with the ledger machine: loading a
// snapshot and replaying the records after it gives the same state and the
// same later events as replaying everything.
func TestSnapshotPlusSuffixEqualsFullReplay(t *testing.T) {
	dir := t.TempDir()
	live := &ledger{}
	const n = 4000
	journalWithSnapshots(t, dir, journal.Config{SegmentBytes: 64 << 10}, live, 6, n, 999, 2499)

	full := &ledger{}
	fullSink := core.NewBufferSink(n)
	res, err := journal.Replay(dir, full, fullSink, journal.ReplayOptions{})
	if err != nil || res.Records != n || res.Snapshot != nil {
		t.Fatalf("full replay %+v: %v", res, err)
	}
	fromSnap := &ledger{}
	snapSink := core.NewBufferSink(n)
	res, err = journal.Replay(dir, fromSnap, snapSink, journal.ReplayOptions{UseSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == nil || res.Snapshot.Seq != 2499 || res.Records != n-2500 || res.FirstSeq != 2500 || res.LastSeq != n-1 {
		t.Fatalf("snapshot replay %+v", res)
	}
	if *fromSnap != *full || *full != *live {
		t.Fatalf("states differ: snapshot+suffix %+v, full %+v, live %+v", *fromSnap, *full, *live)
	}
	// The events of the suffix equal the last events of the full replay.
	fullEvents := fullSink.Bytes()
	suffix := fullEvents[len(fullEvents)-len(snapSink.Bytes()):]
	if snapSink.Len() != n-2500 || !bytes.Equal(suffix, snapSink.Bytes()) {
		t.Fatalf("suffix events differ (%d events)", snapSink.Len())
	}

	// A damaged newest snapshot is passed over for the older one.
	newest := filepath.Join(dir, journal.SnapshotName(2499))
	flipByte(t, newest, journal.SnapshotHeaderBytes+3)
	fromOlder := &ledger{}
	res, err = journal.Replay(dir, fromOlder, nil, journal.ReplayOptions{UseSnapshot: true, Logger: quietLogger()})
	if err != nil || res.Snapshot == nil || res.Snapshot.Seq != 999 || res.Records != n-1000 || *fromOlder != *full {
		t.Fatalf("replay past a bad snapshot: %+v %v", res, err)
	}
}

// TestSnapshotAheadOfJournalIsRefused: the Snapshotter publishes a snapshot
// only once its command is durable (TestSnapshotterWaitsForDurability), so
// at the venue's start a valid snapshot ahead of the journal's last record
// means the journal lost durable records (a segment deleted, a partial
// restore): that replay (RefuseSnapshotAhead) refuses, naming the snapshot
// and the journal's end, instead of starting from the shorter journal and
// losing orders that were answered. A tool's replay, which may read a
// running venue's journal, passes it over; a damaged snapshot ahead is
// passed over as any damaged snapshot is.
func TestSnapshotAheadOfJournalIsRefused(t *testing.T) {
	dir := t.TempDir()
	live := &ledger{}
	journalWithSnapshots(t, dir, journal.Config{SegmentBytes: 1 << 20}, live, 7, 100)
	if _, err := journal.WriteSnapshot(dir, 150, live.WriteSnapshot, nil); err != nil {
		t.Fatal(err)
	}
	// A tool reading a running venue's journal passes it over.
	if res, err := journal.Replay(dir, &ledger{}, nil, journal.ReplayOptions{UseSnapshot: true, Logger: quietLogger()}); err != nil || res.Snapshot != nil || res.Records != 100 {
		t.Fatalf("replay by a tool: %+v %v", res, err)
	}
	refuse := journal.ReplayOptions{UseSnapshot: true, RefuseSnapshotAhead: true, Logger: quietLogger()}
	_, err := journal.Replay(dir, &ledger{}, nil, refuse)
	if !errors.Is(err, journal.ErrJournalBehindSnapshot) || !strings.Contains(err.Error(), journal.SnapshotName(150)+" is at seq 150 and the journal ends at seq 99") {
		t.Fatalf("replay with a snapshot ahead: %v", err)
	}
	flipByte(t, filepath.Join(dir, journal.SnapshotName(150)), journal.SnapshotHeaderBytes+3)
	res, err := journal.Replay(dir, &ledger{}, nil, refuse)
	if err != nil || res.Snapshot != nil || res.Records != 100 {
		t.Fatalf("replay past a damaged snapshot ahead: %+v %v", res, err)
	}
	// Every segment gone, a snapshot left: refused too.
	empty := t.TempDir()
	if _, err := journal.WriteSnapshot(empty, 40, live.WriteSnapshot, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Replay(empty, &ledger{}, nil, refuse); !errors.Is(err, journal.ErrJournalBehindSnapshot) {
		t.Fatalf("replay of snapshots without segments: %v", err)
	}
}

func TestSnapshotFileValidation(t *testing.T) {
	dir := t.TempDir()
	payload := bytes.Repeat([]byte("state "), 100_000) // larger than the write buffer
	sf, err := journal.WriteSnapshot(dir, 42, func(w io.Writer) error { _, err := w.Write(payload); return err }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sf.Seq != 42 || sf.PayloadBytes != int64(len(payload)) || filepath.Base(sf.Path) != "snapshot-00000000000000000042.snap" {
		t.Fatalf("%+v", sf)
	}
	var got []byte
	if _, err := journal.ReadSnapshot(sf.Path, func(r io.Reader) error {
		got, err = io.ReadAll(r)
		return err
	}); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back %d bytes: %v", len(got), err)
	}
	info, err := os.Stat(sf.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Any single damaged byte is caught, and the state machine never sees it.
	for _, off := range []int64{0, 9, 16, 28, journal.SnapshotHeaderBytes, info.Size() / 2, info.Size() - 16, info.Size() - 8, info.Size() - 1} {
		flipByte(t, sf.Path, off)
		called := false
		_, err := journal.ReadSnapshot(sf.Path, func(io.Reader) error { called = true; return nil })
		if !errors.Is(err, journal.ErrBadSnapshot) || called {
			t.Errorf("byte %d damaged: err %v, state machine called %v", off, err, called)
		}
		flipByte(t, sf.Path, off)
	}
	// A truncated file (a crash before the rename cannot produce one, a
	// broken disk can) is caught too.
	if err := os.Truncate(sf.Path, info.Size()-1); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.CheckSnapshot(sf.Path); !errors.Is(err, journal.ErrBadSnapshot) {
		t.Fatalf("truncated snapshot: %v", err)
	}
	// A failing fill leaves no file behind.
	if _, err := journal.WriteSnapshot(dir, 43, func(io.Writer) error { return io.ErrClosedPipe }, nil); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("failing fill: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "snapshot-*43*")); len(m) != 0 {
		t.Fatalf("left behind: %v", m)
	}
}

func TestPruneSnapshots(t *testing.T) {
	dir := t.TempDir()
	for _, seq := range []uint64{5, 50, 500, 5000} {
		if _, err := journal.WriteSnapshot(dir, seq, func(w io.Writer) error { _, err := w.Write([]byte{1}); return err }, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := journal.PruneSnapshots(dir, 2); err != nil {
		t.Fatal(err)
	}
	snaps, err := journal.ListSnapshots(dir)
	if err != nil || len(snaps) != 2 || snaps[0].Seq != 5000 || snaps[1].Seq != 500 {
		t.Fatalf("after prune: %+v %v", snaps, err)
	}
}

func flipByte(t testing.TB, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x04
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMatcherSnapshotPlusSuffix is the same property with the real
// matcher: snapshot + suffix gives the same state (byte-identical
// snapshots) and the same later events as a full replay.
func TestMatcherSnapshotPlusSuffix(t *testing.T) {
	dir := t.TempDir()
	live := newMatcher(t)
	const n, snapSeq = 6000, 3999
	journalWithSnapshots(t, dir, journal.Config{SegmentBytes: 64 << 10}, live, 8, n, snapSeq)
	full := newMatcher(t)
	fullSink := core.NewBufferSink(4 * n)
	if _, err := journal.Replay(dir, full, fullSink, journal.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	restored := newMatcher(t)
	suffixSink := core.NewBufferSink(4 * n)
	res, err := journal.Replay(dir, restored, suffixSink, journal.ReplayOptions{UseSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot == nil || res.Snapshot.Seq != snapSeq || res.Records != n-snapSeq-1 {
		t.Fatalf("replay %+v", res)
	}
	if suffixSink.Len() == 0 || !bytes.HasSuffix(fullSink.Bytes(), suffixSink.Bytes()) {
		t.Fatalf("the %d events after the snapshot differ from the full replay's", suffixSink.Len())
	}
	// The suffix starts exactly at the first event of command snapSeq+1.
	first := suffixSink.Event(0)
	if got := binary.LittleEndian.Uint64(first[venue.MessageHeaderSize:]); got != snapSeq+1 {
		t.Fatalf("first suffix event caused by %d", got)
	}
	var a, b, c bytes.Buffer
	for m, out := range map[*core.Matcher]*bytes.Buffer{live: &a, full: &b, restored: &c} {
		if err := m.WriteSnapshot(out); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !bytes.Equal(b.Bytes(), c.Bytes()) {
		t.Fatal("live, fully replayed and snapshot-restored matchers hold different states")
	}
}

// TestSnapshotterWaitsForDurability: the snapshot file of command seq
// appears only once seq is durable; a capture while one is in flight is
// refused and counted; the published file loads.
func TestSnapshotterWaitsForDurability(t *testing.T) {
	dir := t.TempDir()
	durable := ring.NewSequence(-1)
	s, err := journal.NewSnapshotter(journal.SnapshotterConfig{Dir: dir, Durable: durable, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	state := &ledger{count: 7, h: 99}
	if err := s.Capture(10, state.WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	if err := s.Capture(11, state.WriteSnapshot); !errors.Is(err, journal.ErrSnapshotBusy) {
		t.Fatalf("second capture in flight: %v", err)
	}
	durable.Store(9)
	for range 50 { // the writer polls; give it many chances to misbehave
		if snaps, _ := journal.ListSnapshots(dir); len(snaps) != 0 {
			t.Fatalf("snapshot of seq 10 published while durable is 9: %+v", snaps)
		}
		time.Sleep(time.Millisecond)
	}
	durable.Store(10)
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Taken.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("snapshot never published")
		}
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if s.Stats().Skipped.Load() != 1 || s.Stats().LastSeq.Load() != 10 {
		t.Fatalf("stats skipped %d last %d", s.Stats().Skipped.Load(), s.Stats().LastSeq.Load())
	}
	loaded := &ledger{}
	if _, err := journal.ReadSnapshot(filepath.Join(dir, journal.SnapshotName(10)), loaded.ReadSnapshot); err != nil || *loaded != *state {
		t.Fatalf("loaded %+v: %v", *loaded, err)
	}
}

func TestSnapshotterDiscardsWhenNeverDurable(t *testing.T) {
	dir := t.TempDir()
	s, err := journal.NewSnapshotter(journal.SnapshotterConfig{Dir: dir, Durable: ring.NewSequence(-1),
		DurableWait: 20 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Capture(5, (&ledger{}).WriteSnapshot); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Stats().Failed.Load() != 1 || s.Stats().Taken.Load() != 0 {
		t.Fatalf("failed %d taken %d", s.Stats().Failed.Load(), s.Stats().Taken.Load())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	// A state larger than the bound is refused on capture.
	s, _ = journal.NewSnapshotter(journal.SnapshotterConfig{Dir: dir, Durable: ring.NewSequence(10), CaptureBytesMax: 8})
	defer s.Close()
	if err := s.Capture(5, (&ledger{}).WriteSnapshot); !errors.Is(err, journal.ErrSnapshotTooLarge) {
		t.Fatalf("oversized capture: %v", err)
	}
}
