package server

import (
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/internal/conftest"
	"github.com/fixvenue/fixvenue/internal/fixclient"
	"github.com/fixvenue/fixvenue/internal/metricstest"
	"github.com/fixvenue/fixvenue/journal"
)

const readWait = 5 * time.Second

// testConfig is a small venue on OS-chosen loopback ports (the admin
// listener too, unless extra has its own [admin]), its SenderCompID the
// test's own (venueCompID).
func testConfig(t testing.TB, dataDir string, extra string) *config.Config {
	t.Helper()
	if !strings.Contains(extra, "[admin]") {
		extra += "\n[admin]\naddr = \"127.0.0.1:0\"\n"
	}
	text := fmt.Sprintf(`
[venue]
sender_comp_id = %q
data_dir = %q
[fix]
addr = "127.0.0.1:0"
[metrics]
addr = "127.0.0.1:0"
[engine]
orders_max = 4096
clordids_max = 16384
command_ring_slots = 1024
event_ring_slots = 4096
[journal]
segment_bytes = 1048576
[marketdata]
enabled = false
[session_defaults.quickfix]
ResetOnLogon = "N"
[[session]]
comp_id = "CLIENT%%d"
range = [1, 4]
[[session]]
comp_id = "SLOW"
orders_per_second_reject = 3
cancels_per_second_reject = 100
messages_per_second_logout = 8
`+conftest.ACME+conftest.LOTS+`%s`, venueCompID(t), dataDir, extra)
	cfg, err := config.Parse([]byte(text), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The tests that start a venue run in parallel (t.Parallel): most of their
// time is spent waiting (QuickFIX/Go's sessions take no message before the
// next whole second after their start, the compressed trading days run on
// the wall clock), each has its own data directory, ports of the system's
// choosing and its own sessions (venueCompID). These stay sequential: those
// that measure the process (allocations, heap), those that load it for a
// bounded time (the mass cancel's burst, a slow reader's hundreds of deep
// book refreshes, a clock stepped past 64 transitions), those whose venue collects the whole process's garbage (a
// drop-copy replay returns its memory to the system, a bound change
// verified at start collects its matchers: under the race detector that
// stalled another test's venue for seconds), the browser tests (one
// Chromium for the package), and the export tests that stop and start a
// NATS server on its port, which a parallel test's connection could take
// meanwhile.

// venueCompID is the venue's SenderCompID in t's configurations: VENUE and
// a hash of t's top-level name, the same for every venue t starts (a
// restart on the same data keeps its sessions). QuickFIX/Go keeps the
// sessions of every acceptor and initiator in one registry per process and
// refuses a second session of the same ID, so the venues of tests that run
// at once (t.Parallel) must not name the same sessions.
func venueCompID(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	h := fnv.New32a()
	h.Write([]byte(name))
	comp := fmt.Sprintf("VENUE%08X", h.Sum32())
	if other, taken := venueCompIDs.LoadOrStore(comp, name); taken && other != name {
		t.Fatalf("tests %s and %s have the same venue CompID %s", other, name, comp)
	}
	return comp
}

var venueCompIDs sync.Map // venueCompID's IDs given so far, each to its test's name

func startServer(t testing.TB, cfg *config.Config, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withMarketData turns the feed on in cfg, sent to a UDP socket of the
// test's that nobody reads, the recovery service on a port of the
// system's choosing.
func withMarketData(t testing.TB, cfg *config.Config) {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	cfg.MarketData.Enabled = true
	cfg.MarketData.FeedAddr = udp.LocalAddr().String()
	cfg.MarketData.RecoveryAddr = "127.0.0.1:0"
}

// restingGTC starts a venue on dataDir, logs CLIENT1 on and has a GTC buy
// of 3 ACME at px rest, for tests that restart the venue on the same data.
func restingGTC(t *testing.T, dataDir, id, px string) (*Server, *fixclient.Client, *fixclient.Message) {
	t.Helper()
	s := startServer(t, testConfig(t, dataDir, ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: id, side: "1", qty: "3", px: px, tif: "1"})
	return s, c, expectER(t, c, map[int]string{11: id, 150: "0"})
}

func logon(t *testing.T, s *Server, comp string, reset bool) *fixclient.Client {
	t.Helper()
	c, err := fixclient.Dial(s.FIXAddr(), comp, s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Logon(reset); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resume logs comp on again without a sequence reset, its next outgoing
// sequence number nextOut, and returns the client and the venue's Logon.
// It first waits until the venue has let comp's previous connection go
// (waitReleased).
func resume(t *testing.T, s *Server, comp string, nextOut int) (*fixclient.Client, *fixclient.Message) {
	t.Helper()
	waitReleased(t, s, comp)
	c, err := fixclient.Dial(s.FIXAddr(), comp, s.cfg.Venue.SenderCompID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.NextOut = nextOut
	lg, err := c.Logon(false)
	if err != nil {
		t.Fatal(err)
	}
	return c, lg
}

// waitReleased waits until the FIX edge holds no connection of comp's
// session: one the test closed stays the session's until QuickFIX/Go has
// seen it end, and a Logon meanwhile waits only a moment before it is
// refused as a duplicate. A sleep after the close did not ensure it on a
// loaded machine.
func waitReleased(t *testing.T, s *Server, comp string) {
	t.Helper()
	key := edge.SessionKey{BeginString: "FIX.4.4", ClientCompID: comp, VenueCompID: s.cfg.Venue.SenderCompID}
	for deadline := time.Now().Add(readWait); ; time.Sleep(5 * time.Millisecond) {
		if _, held := s.edge.Session(key); !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge still holds %s's connection after %v", comp, readWait)
		}
	}
}

type order struct {
	id, sym, side, qty, px, tif, typ string
	extra                            []fixclient.Field
}

func sendOrder(t *testing.T, c *fixclient.Client, o order) {
	t.Helper()
	if o.sym == "" {
		o.sym = "ACME"
	}
	if o.tif == "" {
		o.tif = "0"
	}
	if o.typ == "" {
		o.typ = "2"
	}
	f := []fixclient.Field{fixclient.F(11, o.id), fixclient.F(55, o.sym), fixclient.F(54, o.side),
		fixclient.F(60, fixclient.Timestamp(time.Now())), fixclient.F(38, o.qty), fixclient.F(40, o.typ)}
	if o.px != "" {
		f = append(f, fixclient.F(44, o.px))
	}
	f = append(f, fixclient.F(59, o.tif))
	f = append(f, o.extra...)
	if err := c.Send("D", f...); err != nil {
		t.Fatal(err)
	}
}

func expectER(t *testing.T, c *fixclient.Client, want map[int]string) *fixclient.Message {
	t.Helper()
	m, err := c.Expect(readWait, "8", want)
	if err != nil {
		t.Fatalf("%s: %v (received so far: %v)", c.Sender, err, c.Received)
	}
	return m
}

// failingSync is a journal sync (Options.JournalSync) whose data syncs fail
// with EIO while fail is set: a disk that failed under the venue.
func failingSync(fail *atomic.Bool) func(*os.File, journal.SyncKind) error {
	return func(f *os.File, kind journal.SyncKind) error {
		if kind == journal.SyncData && fail.Load() {
			return syscall.EIO
		}
		return journal.DefaultSync(f, kind)
	}
}

func scrape(t *testing.T, s *Server) string {
	t.Helper()
	return metricstest.Scrape(t, s.MetricsAddr())
}

// testLogger logs at debug level to testWriter.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter sends logs to the test log when -v is given, else nowhere.
func testWriter(t testing.TB) io.Writer {
	if testing.Verbose() {
		return tw{t}
	}
	return io.Discard
}

type tw struct{ t testing.TB }

func (w tw) Write(p []byte) (int, error) { w.t.Log(strings.TrimSpace(string(p))); return len(p), nil }
