package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/journal"
)

// noFeed keeps the venues of these tests off the market-data ports:
// they read no feed.
var noFeed = []string{"--md-addr", "127.0.0.1:0", "--md-recovery-addr", "127.0.0.1:0"}

// backupSessions is how many sessions send orders while the backup runs.
const backupSessions = 2

// backupClient sends orders until stopped and keeps what the venue
// acknowledged.
type backupClient struct {
	comp   string
	mu     sync.Mutex
	acked  []string // ClOrdIDs acknowledged (150=0), in order
	lastIn int      // highest MsgSeqNum received from the venue
}

// seen returns the orders acknowledged so far and the last MsgSeqNum
// received.
func (c *backupClient) seen() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.acked...), c.lastIn
}

// TestBackupOfARunningVenueStarts copies a venue's data directory with
// `fixvenue backup` while sessions send orders into it, so that segments
// roll, snapshots are taken and FIX stores are written during the copy,
// restores the copy under another path, and starts it: every order
// acknowledged before the backup began is there, each session's sequence
// numbers go on from where they were, a session disabled stays disabled,
// and the copied journal, its archive included, verifies from seq 0.
func TestBackupOfARunningVenueStarts(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	cfg := backupVenueConfig(t, dir)
	v := startVenue(t, cfg, noFeed...)

	clients := make([]*backupClient, backupSessions)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		c := &backupClient{comp: fmt.Sprintf("CLIENT%d", i+1)}
		clients[i] = c
		cl := logOn(t, v.fixAddr, c.comp)
		done := readUntilClosed(cl, func(m *fixclient.Message) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.lastIn = m.SeqNum()
			if m.Type() == "8" && m.Get(150) == "0" {
				c.acked = append(c.acked, m.Get(11))
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { cl.Close(); <-done }()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := sendPacedOrder(cl, fmt.Sprintf("%s-%d", c.comp, n), n); err != nil {
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	// Orders flow for a while first: segments sealed, snapshots taken,
	// and an end of day moves the segments before a snapshot to the
	// archive, which a replay from the beginning reads. A session
	// disabled is a record of the data directory the copy keeps.
	// An end of day archives up to the newest snapshot a start would
	// load, which needs the states written at a later command: on a busy
	// machine the first may find none yet, so it is repeated, a bounded
	// number of times (the orders are GTC: they outlive it).
	for try := 1; ; try++ {
		time.Sleep(time.Second)
		code, eod, errs := runAdminCLI(t, v.ready.AdminAddr, cliToken, "eod", "--reason", "before the backup", "--json")
		if code != 0 {
			t.Fatalf("eod: exit %d\n%s%s", code, eod, errs)
		}
		if strings.Contains(eod, `"archived_segments"`) && !strings.Contains(eod, `"archived_segments": 0`) {
			break
		}
		if try == 10 {
			t.Fatalf("10 ends of day archived nothing; the last:\n%s", eod)
		}
	}
	disabled := fmt.Sprintf("CLIENT%d", backupSessions+1)
	if code, out, errs := runAdminCLI(t, v.ready.AdminAddr, cliToken, "disable", disabled, "--reason", "before the backup"); code != 0 {
		t.Fatalf("disable: exit %d\n%s%s", code, out, errs)
	}
	time.Sleep(500 * time.Millisecond)
	before := make([][]string, len(clients))
	lastIn := make([]int, len(clients))
	for i, c := range clients {
		before[i], lastIn[i] = c.seen()
		if len(before[i]) == 0 {
			t.Fatalf("%s: no order acknowledged before the backup", c.comp)
		}
	}

	// The copy goes to another directory, as on another machine, under
	// a configuration that names it.
	other := t.TempDir()
	restored := filepath.Join(other, "data")
	out, err := exec.Command(binPath, "backup", "--config", cfg, "--to", restored).CombinedOutput()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "backup of ") || !strings.Contains(string(out), "journal through seq") {
		t.Fatalf("backup's last line says nothing of what it copied:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	time.Sleep(300 * time.Millisecond) // orders after the backup: in the original only
	v.kill()
	if _, err := os.Stat(filepath.Join(restored, "LOCK")); err == nil {
		t.Errorf("the copy holds the original's LOCK")
	}

	cfg2 := backupVenueConfig(t, other)
	if out, err := exec.Command(binPath, "journal", "verify", "--config", cfg2).CombinedOutput(); err != nil {
		t.Fatalf("journal verify of the copy: %v\n%s", err, out)
	}
	r := startVenue(t, cfg2, noFeed...)
	// From a snapshot: the feed's and the console's states beside it were
	// copied too, without which the start passes every snapshot over.
	if !r.loadedSnapshot() {
		t.Errorf("the restored venue loaded no snapshot:\n%s", r.logs())
	}
	// Each session's sequence numbers go on: the venue's next is past
	// every message the client had received before the backup.
	resp, err := http.Get("http://" + r.ready.AdminAddr + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var sessions []struct {
		CompID        string `json:"comp_id"`
		NextSenderSeq int    `json:"next_sender_seq"`
		Disabled      bool   `json:"disabled"`
	}
	err = json.NewDecoder(resp.Body).Decode(&sessions)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for _, s := range sessions {
		next[s.CompID] = s.NextSenderSeq
		if s.Disabled != (s.CompID == disabled) {
			t.Errorf("%s: disabled %v in the restored venue", s.CompID, s.Disabled)
		}
	}
	for i, c := range clients {
		if next[c.comp] <= lastIn[i] {
			t.Errorf("%s: the restored venue's next MsgSeqNum is %d, but the client had received %d before the backup", c.comp, next[c.comp], lastIn[i])
		}
		cl := logOn(t, r.fixAddr, c.comp)
		for _, id := range before[i] {
			m, err := orderStatus(cl, "ACME", id)
			if err != nil {
				t.Fatalf("%s: status of %s: %v", c.comp, id, err)
			}
			if m.Get(39) == "8" {
				t.Fatalf("%s: order %s, acknowledged before the backup, is unknown to the restored venue: %s\n%s", c.comp, id, m, r.logs())
			}
		}
	}
	if t.Failed() {
		t.Logf("restored venue's log:\n%s", r.logs())
	}
}

// TestBackupCopiesDamageAsItIs: a record damaged in the last segment of a
// stopped venue, with whole records after it, stays in the copy as it is,
// so that the copy's journal is refused as the original's is, naming the
// same segment and offset: cut as a write the copy met half done, it
// would have dropped the records after it, acknowledged ones among them,
// without a word.
func TestBackupCopiesDamageAsItIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const body = `[session_defaults]
cancel_on_disconnect = false
`
	cfg := writeVenueConfig(t, dir, body)
	v := startVenue(t, cfg, noFeed...)
	c := logOn(t, v.fixAddr, "CLIENT1")
	for i := range 20 {
		restDayBuy(t, c, fmt.Sprintf("d%d", i))
	}
	c.Close()
	v.stop(t)

	segs, err := filepath.Glob(filepath.Join(dir, "data", "journal", "journal-*.seg"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment: %v", err)
	}
	last := segs[len(segs)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	for off := journal.SegmentHeaderBytes; ; {
		_, _, n, err := journal.NextFrame(data[off:])
		if err != nil {
			break
		}
		offs = append(offs, off)
		off += n
	}
	if len(offs) < 10 {
		t.Fatalf("%d records in %s", len(offs), last)
	}
	damaged := offs[len(offs)-5]
	data[damaged+journal.FrameHeaderBytes] ^= 0xff // its payload: the CRC no longer matches
	if err := os.WriteFile(last, data, 0o640); err != nil {
		t.Fatal(err)
	}
	verify := func(cfg string) string {
		t.Helper()
		out, err := exec.Command(binPath, "journal", "verify", "--config", cfg).CombinedOutput()
		if err == nil {
			t.Fatalf("journal verify of a journal with a damaged record passed:\n%s", out)
		}
		return string(out)
	}
	want := fmt.Sprintf("%s at offset %d", filepath.Base(last), damaged)
	if out := verify(cfg); !strings.Contains(out, want) {
		t.Fatalf("journal verify of the original does not name %q:\n%s", want, out)
	}

	other := t.TempDir()
	out, err := exec.Command(binPath, "backup", "--config", cfg, "--to", filepath.Join(other, "data")).CombinedOutput()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("at offset %d, unchanged while copied", damaged)) {
		t.Errorf("backup does not say it copied the bytes after the last whole record as they are:\n%s", out)
	}
	if got := verify(writeVenueConfig(t, other, body)); !strings.Contains(got, want) {
		t.Fatalf("journal verify of the copy does not name %q as the original's does:\n%s", want, got)
	}
}

// TestJournalBookRefusesDamageBeforeTheSnapshot: a record damaged in a
// sealed segment before the newest snapshot is refused by the start, which
// reads every live segment, and by journal verify; journal book, which
// replays from that snapshot, read only the records after it and printed
// the books with exit 0. It refuses the damage too, naming the segment and
// offset, as its usage says.
func TestJournalBookRefusesDamageBeforeTheSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const body = `[journal]
segment_bytes = 65536
snapshot_interval = "100ms"
[session_defaults]
cancel_on_disconnect = false
`
	cfg := writeVenueConfig(t, dir, body)
	v := startVenue(t, cfg, noFeed...)
	c := logOn(t, v.fixAddr, "CLIENT1")
	jdir := filepath.Join(dir, "data", "journal")
	restUntilSegments(t, c, jdir, 3)
	restDayBuy(t, c, "last")
	time.Sleep(500 * time.Millisecond) // a snapshot after the orders
	c.Close()
	v.stop(t)

	segs, err := filepath.Glob(filepath.Join(jdir, "journal-*.seg"))
	if err != nil || len(segs) < 3 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	snaps, err := journal.ListSnapshots(jdir)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots %v, %v", snaps, err)
	}
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	seq, _, _, err := journal.NextFrame(data[journal.SegmentHeaderBytes:])
	if err != nil {
		t.Fatal(err)
	}
	if newest := snaps[0].Seq; newest <= seq {
		t.Fatalf("newest snapshot at seq %d, not after the first segment's records", newest)
	}
	damaged := journal.SegmentHeaderBytes
	data[damaged+journal.FrameHeaderBytes] ^= 0xff // its payload: the CRC no longer matches
	if err := os.WriteFile(segs[0], data, 0o640); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("corrupt segment %s at offset %d", segs[0], damaged)
	for _, sub := range []string{"verify", "book"} {
		cmd := exec.Command(binPath, "journal", sub, "--config", cfg)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), want) || stdout.Len() != 0 {
			t.Errorf("journal %s of a journal damaged before its newest snapshot: exit %d, want 1 naming %q\nstdout: %s\nstderr: %s",
				sub, code, want, stdout.String(), stderr.String())
		}
	}
}

// TestBackupRefusesAJournalWithASegmentMissing: a sealed segment missing
// between two others (removed, not restored) leaves a journal the start
// refuses, naming where the data ends; backup refuses it the same way
// (exit 1) instead of copying the segments on either side of the gap and
// reporting a complete copy "through" the last seq, which no venue starts.
func TestBackupRefusesAJournalWithASegmentMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const body = `[journal]
segment_bytes = 65536
[session_defaults]
cancel_on_disconnect = false
`
	cfg := writeVenueConfig(t, dir, body)
	v := startVenue(t, cfg, noFeed...)
	c := logOn(t, v.fixAddr, "CLIENT1")
	jdir := filepath.Join(dir, "data", "journal")
	restUntilSegments(t, c, jdir, 3)
	c.Close()
	v.stop(t)

	segs, err := filepath.Glob(filepath.Join(jdir, "journal-*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s at offset ", filepath.Base(segs[0]))
	if out, err := exec.Command(binPath, "journal", "verify", "--config", cfg).CombinedOutput(); err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("journal verify of a journal with a segment missing: %v, want an error naming %q:\n%s", err, want, out)
	}
	cmd := exec.Command(binPath, "backup", "--config", cfg, "--to", filepath.Join(t.TempDir(), "data"))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), want) ||
		!strings.Contains(string(out), "but the next segment "+filepath.Base(segs[2])+" starts at") {
		t.Fatalf("backup of a journal with a segment missing: exit %d (%v), want 1 naming %q and the next segment:\n%s", code, err, want, out)
	}
}

// TestSnapshotPassedOverForAddedSessionsSaysSo: a data directory restored
// under a configuration that adds a session replays its whole journal at
// every start until a snapshot is taken under the new terms; the start's
// log says why each older snapshot is passed over, where it said the state
// kept beside it was missing, though it was there.
func TestSnapshotPassedOverForAddedSessionsSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const body = `[journal]
snapshot_interval = %q
[session_defaults]
cancel_on_disconnect = false
[[session]]
comp_id = "CLIENT%%d"
range = [1, %d]
`
	v := startVenue(t, writeVenueConfig(t, dir, body, "100ms", 2), noFeed...)
	c := logOn(t, v.fixAddr, "CLIENT1")
	restDayBuy(t, c, "before")
	if !statusRequestsUntil(t, c, "ACME", func() bool { return strings.Contains(v.logs(), `state=console`) }) {
		t.Fatalf("no snapshot with its states written:\n%s", v.logs())
	}
	c.Close()
	v.stop(t)

	// A session added, and no snapshot taken under it: the next start
	// passes the older snapshots over too.
	cfg := writeVenueConfig(t, dir, body, "1h", 3)
	for range 2 {
		v := startVenue(t, cfg, noFeed...)
		v.stop(t)
		logs := v.logs()
		if strings.Contains(logs, "without its companion state") || strings.Contains(logs, "snapshot loaded") ||
			!strings.Contains(logs, "snapshot passed over: taken before sessions or instruments were added") {
			t.Fatalf("the start does not say why it passes the snapshots over:\n%s", logs)
		}
	}
}

// backupVenueConfig writes the configuration of the backed-up venue (and
// of its copy) with data in dir: small segments, frequent snapshots, and
// the sessions the backup's clients use.
func backupVenueConfig(t *testing.T, dir string) string {
	t.Helper()
	return writeVenueConfig(t, dir, `[journal]
segment_bytes = 65536
snapshot_interval = "200ms"
[session_defaults]
cancel_on_disconnect = false
[[session]]
comp_id = "CLIENT%%d"
range = [1, %d]
%s`, backupSessions+1, adminTokenTOML("carol", "", cliToken))
}

// TestBackupStoppedSaysTheCopyIsIncomplete: a backup stopped by Ctrl-C
// (or SIGTERM) names the copy it leaves incomplete and exits 1, as one
// that fails does, where it ended without a word and left a partial copy
// to be taken for a backup.
func TestBackupStoppedSaysTheCopyIsIncomplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeVenueConfig(t, dir, "")
	v := startVenue(t, cfg, noFeed...) // a segment of 64 MiB, preallocated: copied and synced in more than a moment
	v.stop(t)
	to := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(binPath, "backup", "--config", cfg, "--to", to)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if names, _ := os.ReadDir(to); len(names) > 0 {
			break // copying
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the backup wrote nothing in 30 s\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code == 0 && strings.Contains(stdout.String(), "backup of ") {
		t.Skipf("the backup was done before it was stopped:\n%s", stdout.String())
	}
	want := fmt.Sprintf("the copy in %s is incomplete", to)
	if code != 1 || !strings.Contains(stderr.String(), "fixvenue backup: stopped by interrupt") || !strings.Contains(stderr.String(), want) {
		t.Fatalf("backup stopped by Ctrl-C: exit %d, want 1 naming %q\nstdout: %s\nstderr: %s", code, want, stdout.String(), stderr.String())
	}
}

// restUntilSegments rests DAY buys on c until the journal in jdir has
// segments segments (its segment_bytes set small), at most 20,000.
func restUntilSegments(t *testing.T, c *fixclient.Client, jdir string, segments int) {
	t.Helper()
	for n := 0; ; n++ {
		segs, err := filepath.Glob(filepath.Join(jdir, "journal-*.seg"))
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) >= segments {
			return
		}
		if n == 20000 {
			t.Fatalf("%d orders and %d segments", n, len(segs))
		}
		restDayBuy(t, c, fmt.Sprintf("d%d", n))
	}
}
