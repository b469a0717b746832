package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/conftest"
)

// TestCancelOnDisconnectAfterACrash: kill -9 journals no disconnect, so
// after the restart a cancel-on-disconnect session that stays away for
// fix.cancel_grace has its DAY orders cancelled through a journaled
// command (as a disconnect would: GTC orders stay), and one that comes back
// in time keeps them.
func TestCancelOnDisconnectAfterACrash(t *testing.T) {
	cfg := writeVenueConfig(t, t.TempDir(), `cancel_grace = "2s"
[marketdata]
enabled = false
[session_defaults]
cancel_on_disconnect = true
[[session]]
comp_id = "CLIENT%%d"
range = [1, 2]
`)
	v := startVenue(t, cfg)
	orders := map[string]string{"CLIENT1": "away-1", "CLIENT2": "back-1"}
	for comp, id := range orders {
		restDayBuy(t, logOn(t, v.fixAddr, comp), id)
	}
	v.kill()
	v = startVenue(t, cfg)
	back := logOn(t, v.fixAddr, "CLIENT2") // within the grace
	// Once the grace has passed, only CLIENT2's order rests.
	deadline := time.Now().Add(20 * time.Second)
	for resting := -1; resting != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d orders rest 20 s after the restart, want 1:\n%s", resting, lastLines(v.logs(), 30))
		}
		time.Sleep(100 * time.Millisecond)
		resting = restingOrders(t, v.ready.AdminAddr)
	}
	if m, err := orderStatus(back, "ACME", "back-1"); err != nil || m.Get(39) != "0" {
		t.Fatalf("the order of the session that came back: %v %v, want 39=0", m, err)
	}
	away := logOn(t, v.fixAddr, "CLIENT1")
	if m, err := orderStatus(away, "ACME", "away-1"); err != nil || m.Get(39) != "4" {
		t.Fatalf("the order of the session that stayed away: %v %v, want 39=4", m, err)
	}
}

// restingOrders is the number of orders resting on every instrument, from
// the admin API.
func restingOrders(t *testing.T, adminAddr string) int {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/v1/instruments")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Resting int `json:"resting_orders"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range list {
		n += in.Resting
	}
	return n
}

// TestChangedTermsAreRefused: a venue that ran with ACME at tick 0.01 and
// sessions CLIENT1, CLIENT2 does not start again with tick 0.05, nor with the
// sessions swapped (CLIENT2 would own CLIENT1's order), nor does `fixvenue
// journal verify` replay its journal so; each names the difference and
// exits 1.
func TestChangedTermsAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := `[marketdata]
enabled = false
[[session]]
comp_id = "%s"
[[session]]
comp_id = "%s"
[[instrument]]
id = 1
symbol = "ACME"
tick_size = "%s"
lot_size = 1
min_qty = 1
max_qty = 1000
ref_price = "100.00"
band_percent = 10
`
	cfg := writeVenueConfig(t, dir, body, "CLIENT1", "CLIENT2", "0.01")
	v := startVenue(t, cfg)
	restDayBuy(t, logOn(t, v.fixAddr, "CLIENT1"), "before")
	v.stop(t)
	for _, change := range []struct {
		terms []any
		want  string
	}{
		{[]any{"CLIENT1", "CLIENT2", "0.05"}, "instrument id 1: tick_size 0.01 recorded, 0.05 configured"},
		{[]any{"CLIENT2", "CLIENT1", "0.01"}, "session index 0 is CLIENT1 in the journal, CLIENT2 configured"},
	} {
		cfg = writeVenueConfig(t, dir, body, change.terms...)
		for _, args := range [][]string{{"serve", "--config", cfg}, {"journal", "verify", "--config", cfg}} {
			// Bounded: a venue that did start would serve until killed.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			out, err := exec.CommandContext(ctx, binPath, args...).CombinedOutput()
			cancel()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), change.want) {
				t.Fatalf("fixvenue %s with %v: %v\n%s", strings.Join(args, " "), change.terms, err, out)
			}
			// A start is told how to start under the configuration; a tool,
			// which changes nothing, to give the venue's own.
			if tool := args[0] != "serve"; strings.Contains(string(out), "aside and start again") == tool ||
				strings.Contains(string(out), "Give --config the configuration the venue runs with") != tool {
				t.Fatalf("fixvenue %s with %v: the wrong advice\n%s", strings.Join(args, " "), change.terms, out)
			}
		}
	}
}

// snapshottingVenue is the body (writeVenueConfig) of a venue that
// snapshots every 50 ms, with one session, CLIENT1, whose DAY orders
// outlive its connection, and one instrument, ACME; %s takes more tables.
const snapshottingVenue = `[marketdata]
enabled = false
[journal]
snapshot_interval = "50ms"
[[session]]
comp_id = "CLIENT1"
cancel_on_disconnect = false
` + conftest.ACME + "%s"

// journalWithASnapshot runs a snapshottingVenue on dir until CLIENT1's DAY
// buy first rests and a snapshot is on disk, then has its DAY buys in more
// rest too, and stops the venue; it returns the configuration's path.
func journalWithASnapshot(t *testing.T, dir, first string, more ...string) string {
	t.Helper()
	cfg := writeVenueConfig(t, dir, snapshottingVenue, "")
	v := startVenue(t, cfg)
	c := logOn(t, v.fixAddr, "CLIENT1")
	restDayBuy(t, c, first)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if snaps, _ := filepath.Glob(filepath.Join(dir, "data", "journal", "snapshot-*.snap")); len(snaps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot within 10 s")
		}
	}
	for _, id := range more {
		restDayBuy(t, c, id)
	}
	v.stop(t)
	return cfg
}

// TestJournalBookWithAnAddedInstrument: with an [[instrument]] added to the
// configuration of a journal that has snapshots, `fixvenue journal book`
// replays the journal rather than load a snapshot from before it (which
// lists the instruments of its day and does not fit): before, it failed
// with `bad snapshot: 1 instruments, the config has 2`.
func TestJournalBookWithAnAddedInstrument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	journalWithASnapshot(t, dir, "before", "after")
	cfg := writeVenueConfig(t, dir, snapshottingVenue, `[[instrument]]
id = 2
symbol = "FRESH"
tick_size = "0.10"
lot_size = 1
min_qty = 1
max_qty = 100
ref_price = "10.00"
band_percent = 10
`)
	out, err := exec.Command(binPath, "journal", "book", "--config", cfg, "--symbol", "ACME").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"symbol":"ACME"`) || !strings.Contains(string(out), `[95`) {
		t.Fatalf("journal book with an added instrument: %v\n%s", err, out)
	}
}

// TestJournalToolsRefuseAJournalMissingRecords: the journal tools refuse a
// journal that ends before the terms record's journal_next_seq, or before
// a snapshot, as the venue's start does, instead of verifying it and
// printing books without the missing orders.
func TestJournalToolsRefuseAJournalMissingRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := journalWithASnapshot(t, dir, "kept")
	startVenue(t, cfg).stop(t) // records the journal's end in terms.json

	segments, _ := filepath.Glob(filepath.Join(dir, "data", "journal", "journal-*.seg"))
	aside := t.TempDir()
	for _, seg := range segments { // a restore that missed them
		if err := os.Rename(seg, filepath.Join(aside, filepath.Base(seg))); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		for _, sub := range []string{"verify", "dump", "book"} {
			code, stdout, stderr := runCLI(t, "", nil, "journal", sub, "--config", cfg)
			if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "records are missing") {
				t.Errorf("journal %s on a journal missing records: exit %d, want 1 and %q\n%s%s", sub, code, want, stdout, stderr)
			}
		}
	}
	check("when the venue last started or stopped cleanly it held every command before seq")
	if err := os.Rename(filepath.Join(dir, "data", "terms.json"), filepath.Join(aside, "terms.json")); err != nil {
		t.Fatal(err)
	}
	check("a snapshot is ahead of the journal")
}

// TestDamagedDurableRecordIsNotCut: a bad frame at the end of the journal
// whose record a published snapshot proves durable is damage, not a torn
// tail (docs/ARCHITECTURE.md, "Start-up and shutdown"): the start refuses
// it naming the segment and offset and leaves the file as it was, and
// `journal verify` names that record instead of a lost segment. Before, the
// start zeroed the record as a torn tail and only then refused the journal
// as behind the snapshot, and verify blamed a segment lost.
func TestDamagedDurableRecordIsNotCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := journalWithASnapshot(t, dir, "kept")
	// The terms record as a kill -9 leaves it, its start having found an
	// empty journal: the journal's end a clean stop records would prove
	// the record durable as well, and the snapshot is the proof here.
	record := filepath.Join(dir, "data", "terms.json")
	rec := map[string]any{}
	if b, err := os.ReadFile(record); err != nil || json.Unmarshal(b, &rec) != nil || rec["journal_next_seq"] == nil {
		t.Fatalf("%s: %v, no journal_next_seq in %v", record, err, rec)
	}
	delete(rec, "journal_next_seq")
	if b, err := json.Marshal(rec); err != nil || os.WriteFile(record, b, 0o640) != nil {
		t.Fatalf("%s: %v", record, err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "data", "journal", "snapshot-*.snap"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot")
	}
	newest := filepath.Base(snaps[len(snaps)-1]) // the names sort by seq
	snapSeq := strings.TrimLeft(strings.TrimSuffix(strings.TrimPrefix(newest, "snapshot-"), ".snap"), "0")
	// The record of the snapshot's command, journal-<seq>.seg@<offset>,
	// and the end of the data: the records after it are zeroed, lost with
	// it in a damaged block, so that the bad frame is the journal's end.
	code, out, stderr := runCLI(t, "", nil, "journal", "dump", "--config", cfg)
	var seg string
	var off, end int64 = -1, -1
	for _, r := range dumpedRecords(t, out) {
		if r.seq == "seq="+cmp.Or(snapSeq, "0") {
			seg, off = r.segment, r.offset
		} else if off >= 0 && r.segment != seg {
			t.Fatalf("the records after the snapshot's are in another segment:\n%s", out)
		}
		end = r.offset
	}
	if code != 0 || off < 0 {
		t.Fatalf("journal dump: exit %d, no record of %s\n%s%s", code, newest, out, stderr)
	}
	path := filepath.Join(dir, "data", "journal", seg)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off+12] ^= 0x40 // its seq: the CRC no longer matches
	if end > off {
		clear(b[off+16 : end+256]) // the records after it (each well under 256 bytes)
	}
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	damaged := fmt.Sprintf("%s holds a damaged record at offset %d", path, off)
	if code, _, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg); code != 1 || !strings.Contains(stderr, damaged) {
		t.Errorf("journal verify: exit %d, want 1 and %q\n%s", code, damaged, stderr)
	}
	code, log := serveAgain(t, cfg)
	want := fmt.Sprintf("corrupt segment %s at offset %d", path, off)
	evidence := fmt.Sprintf("(%s, written once seq %s was durable)", newest, cmp.Or(snapSeq, "0"))
	if code != 1 || !strings.Contains(log, want) || !strings.Contains(log, evidence) || !strings.Contains(log, "not a torn tail, so it is not cut") {
		t.Errorf("serve: exit %d, want 1, %q and %q\n%s", code, want, evidence, log)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, b) {
		t.Errorf("the start changed %s (%v)", seg, err)
	}
}

// TestDamagedLastRecordAfterACleanStopIsRefused: a clean stop records the
// journal's end in terms.json (journal_next_seq), so that damage to the
// last record, an operator's halt answered done just before the stop, is
// refused by the next start and by `journal verify`, naming both seqs,
// rather than cut as a torn tail: before, the start logged a torn tail
// cut and the instrument came back open, the halt gone without an error.
// A clean stop and start, and a kill -9 (which records nothing) and
// start, still start, each with the halt made before it.
func TestDamagedLastRecordAfterACleanStopIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v, _ := startCarolVenue(t, dir, "")
	cfg := filepath.Join(dir, "venue.toml")
	halt := func(v *venueProc, symbol string) uint64 {
		t.Helper()
		code, out, errs := runAdminCLI(t, v.ready.AdminAddr, cliToken, "halt", symbol, "--reason", "halted before the stop")
		m := regexp.MustCompile(`done by carol \(journal seq (\d+)`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("halt %s: exit %d\n%s%s", symbol, code, out, errs)
		}
		seq, _ := strconv.ParseUint(m[1], 10, 64)
		return seq
	}
	halted := func(v *venueProc, symbol string) {
		t.Helper()
		code, out, errs := runAdminCLI(t, v.ready.AdminAddr, cliToken, "instruments")
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); code == 0 && len(f) > 2 && f[0] == symbol {
				if f[2] != "Halted" {
					t.Fatalf("%s is %s after the restart, want Halted\n%s", symbol, f[2], out)
				}
				return
			}
		}
		t.Fatalf("instruments: exit %d, no %s\n%s%s", code, symbol, out, errs)
	}
	nextSeq := func() uint64 {
		t.Helper()
		var rec struct {
			JournalNextSeq uint64 `json:"journal_next_seq"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "data", "terms.json"))
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			t.Fatal(err)
		}
		return rec.JournalNextSeq
	}

	first := halt(v, "GLOBEX")
	v.stop(t)
	if got := nextSeq(); got != first+1 {
		t.Errorf("journal_next_seq after a clean stop is %d, want %d", got, first+1)
	}
	v = startVenue(t, cfg)
	halted(v, "GLOBEX")
	second := halt(v, "INITECH")
	v.kill() // records nothing: the start after it records the journal as it finds it
	if got := nextSeq(); got != first+1 {
		t.Errorf("journal_next_seq after a kill -9 is %d, want %d as the clean stop left it", got, first+1)
	}
	v = startVenue(t, cfg)
	halted(v, "INITECH")
	if got := nextSeq(); got != second+1 {
		t.Errorf("journal_next_seq after the start that followed a kill -9 is %d, want %d", got, second+1)
	}
	last := halt(v, "ACME")
	v.stop(t)

	// The last record of the journal, ACME's halt: one byte of it flipped.
	code, out, stderr := runCLI(t, "", nil, "journal", "dump", "--config", cfg)
	var seg, seq string
	var off int64 = -1
	if recs := dumpedRecords(t, out); len(recs) > 0 {
		r := recs[len(recs)-1]
		seg, seq, off = r.segment, r.seq, r.offset
	}
	if code != 0 || seq != fmt.Sprint("seq=", last) {
		t.Fatalf("journal dump: exit %d, the last record is %q, want the halt's, seq=%d\n%s%s", code, seq, last, out, stderr)
	}
	path := filepath.Join(dir, "data", "journal", seg)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off+40] ^= 0x01 // in its payload: the CRC no longer matches
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}

	ends := fmt.Sprintf("ends before seq %d", last)
	durable := fmt.Sprintf("when the venue last started or stopped cleanly it held every command before seq %d, durably", last+1)
	damaged := fmt.Sprintf("%s holds a damaged record at offset %d", path, off)
	if code, _, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg); code != 1 ||
		!strings.Contains(stderr, ends) || !strings.Contains(stderr, durable) || !strings.Contains(stderr, damaged) {
		t.Errorf("journal verify: exit %d, want 1, %q, %q and %q\n%s", code, ends, durable, damaged, stderr)
	}
	code, log := serveAgain(t, cfg)
	for _, want := range []string{fmt.Sprintf("corrupt segment %s at offset %d", path, off),
		fmt.Sprintf("where the journal ends before seq %d, but every record before seq %d was durable "+
			"(the journal held them when the venue last started or stopped cleanly, %s)", last, last+1, filepath.Join(dir, "data", "terms.json")),
		"not a torn tail, so it is not cut"} {
		if code != 1 || !strings.Contains(log, want) {
			t.Errorf("serve: exit %d, want 1 and %q\n%s", code, want, log)
		}
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, b) {
		t.Errorf("the refused start changed %s (%v)", seg, err)
	}
}

// segmentedJournal runs a venue with 64 KiB segments under load for 2 s
// and stops it; it returns its config and journal directory, and the
// segments it wrote (two or more), oldest first.
func segmentedJournal(t *testing.T) (cfg, jdir string, segs []string) {
	t.Helper()
	dir := t.TempDir()
	cfg = writeVenueConfig(t, dir, strings.Replace(snapshottingVenue, "[journal]\n", "[journal]\nsegment_bytes = 65536\n", 1), "")
	v := startVenue(t, cfg)
	out, err := exec.Command(binPath, "load", "--addr", v.fixAddr, "--sessions", "1", "--rate", "500", "--duration", "2s",
		"--drain", "2s", "--p99-max", "10s", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	v.stop(t)
	jdir = filepath.Join(dir, "data", "journal")
	if segs, _ = filepath.Glob(filepath.Join(jdir, "journal-*.seg")); len(segs) < 2 {
		t.Fatalf("%d segments, want 2 or more\n%s", len(segs), out)
	}
	return cfg, jdir, segs
}

// gzipped is raw compressed as the venue archives a segment
// (ArchiveSegments).
func gzipped(t *testing.T, raw []byte) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// TestDamagedArchiveNamesAnOffsetInIt: `journal verify` on an archived
// segment whose gzip stream is cut names an offset in that .seg.gz file,
// where the damage was met (journal/doc.go, "Archive"), not the count of
// bytes decompressed before it, which lay past the file's end.
func TestDamagedArchiveNamesAnOffsetInIt(t *testing.T) {
	t.Parallel()
	cfg, jdir, _ := segmentedJournal(t)
	first := filepath.Join(jdir, "journal-00000000000000000000.seg")
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	// Archived as the venue does, then cut in half.
	gz := gzipped(t, raw)
	archived := filepath.Join(jdir, "archive", "journal-00000000000000000000.seg.gz")
	if err := os.MkdirAll(filepath.Dir(archived), 0o750); err != nil {
		t.Fatal(err)
	}
	size := int64(len(gz) / 2)
	if err := os.WriteFile(archived, gz[:size], 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg)
	m := regexp.MustCompile(regexp.QuoteMeta(archived) + ` at offset (\d+): archived segment: unexpected EOF`).FindStringSubmatch(stderr)
	if code != 1 || m == nil {
		t.Fatalf("journal verify on a cut archive: exit %d, want 1 naming %s\n%s", code, archived, stderr)
	}
	if off, _ := strconv.ParseInt(m[1], 10, 64); off > size {
		t.Errorf("journal verify names offset %d of %s, a file of %d bytes\n%s", off, archived, size, stderr)
	}
}

// TestJournalDumpFromBeforeItsFirstSegment: `journal dump` asked for
// records that no segment holds (its archive moved away) says on stderr
// which seqs it cannot print and where it starts, prints from there and
// exits 1; it started silently at the first live seq, exit 0, read as every
// record asked for. With the archive in place it prints from seq 0 and says
// nothing, and `journal verify` refuses the journal without it.
func TestJournalDumpFromBeforeItsFirstSegment(t *testing.T) {
	t.Parallel()
	cfg, jdir, segs := segmentedJournal(t)
	// The first segment archived as the venue does (ArchiveSegments).
	raw, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(jdir, "archive")
	if err := os.MkdirAll(archive, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(archive, filepath.Base(segs[0])+".gz"), gzipped(t, raw), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(segs[0]); err != nil {
		t.Fatal(err)
	}
	firstLive := strings.TrimLeft(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(segs[1]), "journal-"), ".seg"), "0")
	first, err := strconv.ParseUint(firstLive, 10, 64)
	if err != nil || first < 10 {
		t.Fatalf("the second segment %s starts at %q", segs[1], firstLive)
	}
	// firstSeq is the seq of the first record a dump prints.
	firstSeq := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], "seq=") {
				return f[1]
			}
		}
		return ""
	}
	code, stdout, stderr := runCLI(t, "", nil, "journal", "dump", "--config", cfg)
	if code != 0 || firstSeq(stdout) != "seq=0" || strings.Contains(stderr, "the dump starts at") {
		t.Fatalf("journal dump with its archive: exit %d, first record %q, want 0 from seq=0\n%s", code, firstSeq(stdout), stderr)
	}
	if err := os.Rename(archive, filepath.Join(t.TempDir(), "archive")); err != nil { // to other storage
		t.Fatal(err)
	}
	for _, c := range []struct {
		from uint64
		code int
		said string
	}{
		{0, 1, fmt.Sprintf("seqs 0 to %d are in no segment of %s or %s (archived segments moved away, or lost): the dump starts at seq %d", first-1, jdir, archive, first)},
		{5, 1, fmt.Sprintf("seqs 5 to %d are in no segment", first-1)},
		{first - 1, 1, fmt.Sprintf("seq %d is in no segment", first-1)},
		{first, 0, ""},
	} {
		code, stdout, stderr := runCLI(t, "", nil, "journal", "dump", "--config", cfg, "--from", strconv.FormatUint(c.from, 10))
		said := c.said != "" && strings.Contains(stderr, c.said) || c.said == "" && !strings.Contains(stderr, "the dump starts at")
		if code != c.code || !said || firstSeq(stdout) != fmt.Sprintf("seq=%d", first) || !strings.Contains(stdout, "# records=") {
			t.Errorf("journal dump --from %d without its archive: exit %d, first record %q, want %d from seq=%d saying %q\n%s",
				c.from, code, firstSeq(stdout), c.code, first, c.said, stderr)
		}
	}
	want := fmt.Sprintf("the first record is seq %d but replay needs seq 0: earlier segments are missing", first)
	if code, _, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("journal verify without its archive: exit %d, want 1 and %q\n%s", code, want, stderr)
	}
}

// quietVenueTOML is the body (writeVenueConfig) of a venue with one
// session, CLIENT1, no feed and no snapshots: its journal holds every
// command from the first.
const quietVenueTOML = "[marketdata]\nenabled = false\n" + quietJournalTOML + "[[session]]\ncomp_id = \"CLIENT1\"\n"

// TestVerifyRefusesAJournalBehindTheFIXStores: a journal whose segments are
// lost after orders were answered and the venue killed (a volume not
// mounted, a restore of the journal without the FIX stores; after a clean
// stop the terms record's journal_next_seq refuses it first) is refused by
// the start, which finds a session's store holding reports of commands the
// journal lacks; `journal verify` refuses it the same way, naming the
// store and both ExecIDs, where it used to print an empty journal's line
// and exit 0.
func TestVerifyRefusesAJournalBehindTheFIXStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := threeOrdersVerified(t, dir, true) // a crash: records nothing of the journal's end
	segs, err := filepath.Glob(filepath.Join(dir, "data", "journal", "journal-*.seg"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	for _, s := range segs {
		if err := os.Remove(s); err != nil {
			t.Fatal(err)
		}
	}
	const want = "but session CLIENT1's FIX store holds ExecID 3"
	code, out, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, want) || out != "" {
		t.Errorf("journal verify of a journal behind the FIX stores: exit %d, want 1 and %q\nstdout: %s\nstderr: %s", code, want, out, stderr)
	}
	if code, log := serveAgain(t, cfg); code != 1 || !strings.Contains(log, want) {
		t.Errorf("serve: exit %d, want 1 and %q\n%s", code, want, log)
	}
}

// TestVerifyRefusesADamagedFIXStore: a FIX store with a damaged record in
// its middle, good ones after it, is refused by the start (its session
// would lose those messages and use their sequence numbers again), so
// `journal verify`, which checks a copy's FIX stores without starting it,
// refuses it too, naming the file and offset, rather than reading the
// store up to the damage and passing the copy.
func TestVerifyRefusesADamagedFIXStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := threeOrdersVerified(t, dir, false)
	path := filepath.Join(dir, "data", "fixstore", "FIX.4.4-VENUE-CLIENT1.fixstore")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	b[end/2] ^= 0x55 // a record in the middle, whole records after it
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "fixstore damaged: "
	code, out, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "FIX.4.4-VENUE-CLIENT1.fixstore: the record at offset") || out != "" {
		t.Errorf("journal verify of a damaged FIX store: exit %d, want 1 and %q\nstdout: %s\nstderr: %s", code, want, out, stderr)
	}
	if code, log := serveAgain(t, cfg); code != 1 || !strings.Contains(log, want) {
		t.Errorf("serve: exit %d, want 1 and %q\n%s", code, want, log)
	}
}

// TestVerifyBesideARunningVenue: `journal verify` beside a venue answering
// orders reads the sessions' FIX stores before the journal, as they hold
// reports of durable commands only; read after the replay, they held the
// answers of commands journaled since, and a sound journal was refused as
// one behind its stores (docs/ARCHITECTURE.md, "Start-up and shutdown").
func TestVerifyBesideARunningVenue(t *testing.T) {
	t.Parallel()
	cfg := writeVenueConfig(t, t.TempDir(), quietVenueTOML)
	v := startVenue(t, cfg)
	c := logOnAt(t, v.fixAddr, "CLIENT1", 1, true)
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			id := fmt.Sprintf("o%d", i)
			if err := c.Send("D", tradingOrder(id, i)...); err != nil {
				done <- err
				return
			}
			if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
				done <- err
				return
			}
		}
	}()
	for i := range 10 {
		if code, out, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg); code != 0 {
			t.Errorf("journal verify %d beside the running venue: exit %d\n%s%s", i, code, out, stderr)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.Logout()
	v.stop(t)
}

// threeOrdersVerified runs a venue in dir whose CLIENT1 has three orders
// answered, stops it (kill -9 with crash), and checks that journal verify
// passes the data directory; it returns the venue's configuration file.
func threeOrdersVerified(t *testing.T, dir string, crash bool) string {
	t.Helper()
	cfg := writeVenueConfig(t, dir, quietVenueTOML)
	v := startVenue(t, cfg)
	c := logOnAt(t, v.fixAddr, "CLIENT1", 1, true)
	for i := range 3 {
		id := fmt.Sprintf("s%d", i)
		if err := c.Send("D", tradingOrder(id, i)...); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Expect(10*time.Second, "8", map[int]string{11: id, 150: "0"}); err != nil {
			t.Fatal(err)
		}
	}
	c.Logout()
	if crash {
		v.kill()
	} else {
		v.stop(t)
	}
	if code, out, stderr := runCLI(t, "", nil, "journal", "verify", "--config", cfg); code != 0 {
		t.Fatalf("journal verify of the sound data directory: exit %d\n%s%s", code, out, stderr)
	}
	return cfg
}

// dumpedRecord is where `journal dump` says a record is, and its seq.
type dumpedRecord struct {
	segment string // journal-<first seq>.seg
	offset  int64
	seq     string // as printed: seq=N
}

// dumpedRecords reads the records of `journal dump`'s output, in order.
func dumpedRecords(t *testing.T, out string) []dumpedRecord {
	t.Helper()
	var recs []dumpedRecord
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], "seq=") {
			continue
		}
		name, at, _ := strings.Cut(f[0], "@")
		n, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		recs = append(recs, dumpedRecord{segment: name, offset: n, seq: f[1]})
	}
	return recs
}
