package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func TestDefaultConfig(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Sessions); got != 32 {
		t.Fatalf("default sessions = %d, want 32", got)
	}
	if c.Sessions[0].CompID != "CLIENT1" || c.Sessions[31].CompID != "CLIENT32" {
		t.Fatalf("sessions = %s … %s", c.Sessions[0].CompID, c.Sessions[31].CompID)
	}
	if c.FIX.Addr != "127.0.0.1:9878" || c.Metrics.Addr != "127.0.0.1:9464" || c.Venue.SenderCompID != "VENUE" || c.Venue.Currency != "USD" {
		t.Fatalf("addresses: %+v %+v", c.FIX, c.Metrics)
	}
	if got := c.InstrumentsMax(); got != len(c.Instruments)+InstrumentsAddedDefault {
		t.Errorf("default InstrumentsMax %d, want the configured instruments + %d", got, InstrumentsAddedDefault)
	}
	acme := c.Instruments[0]
	if acme.Symbol != "ACME" || acme.RefPriceTicks != 10000 || acme.Tick.Scale != 2 || acme.BandPercent != 10 {
		t.Fatalf("ACME = %+v", acme)
	}
	if !c.CancelOnDisconnect(&c.Sessions[3]) {
		t.Fatal("demo sessions should cancel on disconnect")
	}
	if qf := c.QuickFIXSettings(&c.Sessions[0]); qf["HeartBtInt"] != "30" {
		t.Fatalf("quickfix settings = %v", qf)
	}
	if c.Journal.FIXStoreSync.Duration != 100*time.Millisecond {
		t.Fatalf("journal.fix_store_sync = %s, want 100ms", c.Journal.FIXStoreSync.Duration)
	}
}

func TestOverrides(t *testing.T) {
	text := `
[fix]
addr = "127.0.0.1:19878"
[journal]
fsync = "none"
[[session]]
comp_id = "TW"
venue_comp_id = "ISLD"
cancel_on_disconnect = false
[session.quickfix]
HeartBtInt = "5"
`
	c, err := Parse([]byte(text), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.FIX.Addr != "127.0.0.1:19878" || c.Journal.Fsync != journal.PolicyNone || !c.Engine.WaitStrategy.Auto {
		t.Fatalf("overrides not applied over defaults: %+v", c)
	}
	if len(c.Sessions) != 1 || c.VenueCompID(&c.Sessions[0]) != "ISLD" || c.CancelOnDisconnect(&c.Sessions[0]) {
		t.Fatalf("sessions = %+v", c.Sessions)
	}
	if len(c.Instruments) != 3 {
		t.Fatalf("default instruments should stay when none are given, got %d", len(c.Instruments))
	}
	if qf := c.QuickFIXSettings(&c.Sessions[0]); qf["HeartBtInt"] != "5" || qf["ResetOnLogon"] != "N" {
		t.Fatalf("quickfix = %v", qf)
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	tests := []struct{ text, key string }{
		{"[fix]\nadr = \"x\"", "fix.adr"},
		{"[engine]\nwait_strategy = \"sleep\"", `line 2 (last key "engine.wait_strategy"): unknown wait strategy "sleep" (want auto, spin, yield, park or spinpark)`},
		{"[engine]\nwait_strategy = 1", `(last key "engine.wait_strategy")`},
		{"[engine]\ncommand_ring_slots = 1000", "engine.command_ring_slots"},
		{"[engine]\nevent_ring_slots = 64", "engine.event_ring_slots: 64 is below 256"},
		{"[engine]\ngc_headroom_bytes = 1048576", "engine.gc_headroom_bytes: 1048576 is below 16777216"},
		{"[engine]\ngc_headroom_bytes = -1", "engine.gc_headroom_bytes: -1 is below 16777216"},
		{"[engine]\ninstruments_max = 2", "engine.instruments_max: 2 is outside [3 configured instruments, 65535]"},
		{"[journal]\nfsync = \"always\"", `line 2 (last key "journal.fsync"): journal: fsync policy "always" is not batch or none`},
		{"[journal]\nfsync = \"\"", `(last key "journal.fsync"): journal: fsync policy "" is not batch or none`},
		{instrumentText + "status = \"paused\"\n", `line 10 (last key "instrument.status"): trading status "paused" is not open, halted, closed, opening-call, closing-call or volatility-auction`},
		{"[marketdata]\nfeed_b_addr = \"127.0.0.1:9500\"", "marketdata.feed_b_addr: 127.0.0.1:9500 is feed_addr"},
		{"[marketdata]\nfeed_b_addr = \"10.1.2.3:9500\"", "marketdata.feed_b_addr: 10.1.2.3:9500 is neither a loopback address nor a multicast group"},
		{"[marketdata]\nfeed_b_from = \"follower\"", `marketdata.feed_b_from: "follower" is neither "leader" (the leader sends both lines) nor "followers"`},
		{"[marketdata]\nfeed_b_addr = \"127.0.0.1:9502\"\nfeed_b_from = \"followers\"", `marketdata.feed_b_from: "followers" needs [cluster]: a venue alone has no follower`},
		{instrumentText + "call_extension = true\n", "instrument[0].call_extension: a call is extended when its uncross would print outside volatility_band_ticks, which is 0 (none)"},
		{"[journal]\nfix_store_sync = \"0s\"", "journal.fix_store_sync"},
		{"[journal]\nfix_store_sync = \"1m\"", "journal.fix_store_sync"},
		{"[journal]\nfix_store_bytes_max = 1000", "journal.fix_store_bytes_max"},
		{"[[session]]\ncomp_id = \"FIRM\"\nvenue_comp_id = \"VA\"\n[[session]]\ncomp_id = \"FIRM\"\nvenue_comp_id = \"VB\"", `session[1].comp_id: "FIRM" repeats session[0]`},
		{"[session_defaults]\nrequire_client_certificates = true", "session_defaults.require_client_certificates: needs fix.tls_client_ca_file"},
		{"[fix]\naddr = \"nowhere\"", "fix.addr"},
		{"[metrics]\naddr = \"0.0.0.0:9464\"\ntest_hooks = true", `metrics.test_hooks: POST /test/seqnums sets any session's sequence numbers without a token: it is served on a loopback metrics.addr only, not "0.0.0.0:9464"`},
		{"[metrics]\naddr = \":9464\"\ntest_hooks = true", "metrics.test_hooks"},
		{"[fix]\ncancel_grace = \"0s\"", "fix.cancel_grace: must be positive"},
		{"[cluster]\ncancel_grace = \"3s\"", "cluster.cancel_grace is now fix.cancel_grace"},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 2\nref_price = \"1\"\nband_percent = 5", "instrument[0].tick_size"},
		{strings.Replace(instrumentText, `symbol = "X"`, `symbol = "All"`, 1), `instrument[0].symbol: "All" is reserved`},
		{strings.Replace(instrumentText, `symbol = "X"`, `symbol = ".."`, 1), `instrument[0].symbol: ".." cannot be named in a URL path`},
		{"[[session]]\ncomp_id = \".\"", `session[0].comp_id: "." cannot be named in a URL path`},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0.05\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 2\nref_price = \"1.01\"\nband_percent = 5", "instrument[0].ref_price"},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0.05\"\nlot_size = 10\nmin_qty = 5\nmax_qty = 100\nref_price = \"1\"\nband_percent = 5", "instrument[0].min_qty, max_qty: 5 and 100 must be multiples of lot_size 10"},
		{"[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0.05\"\nlot_size = 10\nmin_qty = 10\nmax_qty = 105\nref_price = \"1\"\nband_percent = 5", "instrument[0].min_qty, max_qty"},
		{"[[session]]\ncomp_id = \"A\"\n[[session]]\ncomp_id = \"A\"", "session[1].comp_id"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nSenderCompID = \"B\"", "session[0].quickfix.SenderCompID"},
		{"[[session]]\ncomp_id = \"C%d\"\nrange = [3, 1]", "session[0].range"},
		{"[venue]\nsender_comp_id = \"\"", "venue.sender_comp_id"},
		// The venue's CompIDs are sent in every message and name the FIX
		// store files, as the clients' do.
		{"[venue]\nsender_comp_id = \"" + strings.Repeat("V", 65) + "\"", `venue.sender_comp_id: "VVVV`},
		{"[venue]\nsender_comp_id = \"VEN\\u0001UE\"", `venue.sender_comp_id: "VEN\x01UE" is not 1 to 64 printable ASCII characters`},
		{"[venue]\ncurrency = \"usd\"", `venue.currency: "usd" is not a currency code of three capital letters`},
		{"[venue]\ncurrency = \"EURO\"", `venue.currency: "EURO" is not a currency code`},
		{"[[session]]\ncomp_id = \"A\"\nvenue_comp_id = \"V\\u0001\"", `session[0].venue_comp_id: "V\x01" is not 1 to 64 printable ASCII characters`},
		{"[[session]]\ncomp_id = \"A\"\nvenue_comp_id = \"V B\"", `session[0].venue_comp_id: "V B"`},
		{"[[session]]\ncomp_id = \"A\"\nvenue_comp_id = \"" + strings.Repeat("V", 65) + "\"", "session[0].venue_comp_id"},
		{"this is not toml", "test.toml"},
		// The feed sends to loopback or a multicast group, no other.
		{"[marketdata]\nfeed_addr = \"192.0.2.7:9500\"", "marketdata.feed_addr: 192.0.2.7:9500 is neither a loopback address nor a multicast group"},
		{"[marketdata]\nfeed_addr = \"[::]:9500\"", "marketdata.feed_addr: [::]:9500 is neither"},
		{"[marketdata]\nfeed_addr = \":9500\"", `marketdata.feed_addr: ":9500" names no host`},
		// What the matcher asks of a band, asked here: the matcher refused
		// it after the data directory was made, naming neither the key nor
		// the file.
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "0.0001"`, `ref_price = "1"`, `ref_price = "1000"`, "band_percent = 5", "band_percent = 20").Replace(instrumentText),
			"instrument[0].band_percent: 20% around ref_price 1000 spans 4000001 ticks of tick_size 0.0001, more than the 1048576 price levels a side of a book may hold"},
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "0.000000001"`, `ref_price = "1"`, `ref_price = "9000000000"`).Replace(instrumentText),
			"instrument[0].ref_price: 9000000000 is 9000000000000000000 ticks of tick_size 0.000000001, more than 46116860184273879"},
		// A reference price is named by what is wrong with it: too large
		// a price was "not a positive multiple of tick_size".
		{strings.Replace(instrumentText, `ref_price = "1"`, `ref_price = "99999999999999999999"`, 1),
			`instrument[0].ref_price: "99999999999999999999" is too large: more than 46116860184273879 ticks of tick_size 0.05`},
		{strings.Replace(instrumentText, `ref_price = "1"`, `ref_price = "1.01"`, 1), `instrument[0].ref_price: "1.01" is not a multiple of tick_size 0.05`},
		{strings.Replace(instrumentText, `ref_price = "1"`, `ref_price = "-1"`, 1), `instrument[0].ref_price: "-1" is not positive`},
		{strings.Replace(instrumentText, `ref_price = "1"`, `ref_price = "1,5"`, 1), `instrument[0].ref_price: "1,5" is not a decimal number`},
		// Each error of an instrument is reported: a bad band_percent hid a
		// reference price beyond the highest, a bad tick_size the keys that
		// do not depend on it.
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "0.000000001"`, `ref_price = "1"`, `ref_price = "9000000000"`, "band_percent = 5", "band_percent = 0").Replace(instrumentText),
			"instrument[0].ref_price: 9000000000 is 9000000000000000000 ticks of tick_size 0.000000001, more than 46116860184273879"},
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "0"`, "lot_size = 1", "lot_size = 0").Replace(instrumentText), "instrument[0].lot_size: must be positive"},
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "x"`, "band_percent = 5", "band_percent = 100").Replace(instrumentText), "instrument[0].band_percent: 100 is outside (0, 100)"},
		{strings.NewReplacer(`tick_size = "0.05"`, `tick_size = "-1"`, "max_qty = 2", "max_qty = 0").Replace(instrumentText), "instrument[0].min_qty, max_qty: need 0 < min_qty <= max_qty"},
		{strings.Replace(instrumentText, "max_qty = 2", "max_qty = 9223372036854775807", 1),
			"instrument[0].max_qty: 9223372036854775807 at the band's top price (21 ticks of tick_size 0.05) puts an order's notional above 4611686018427387902, the largest (price ticks x quantity, as the largest risk limit): max_qty at most 219604096115589900"},
		// Bounds of what the configuration sizes, checked before the data
		// directory is used.
		{"[fix]\noutbound_queue_max = 9223372036854775807", "fix.outbound_queue_max: 9223372036854775807 is outside [1024, 1048576]"},
		{"[fix]\noutbound_queue_max = 64", "fix.outbound_queue_max: 64 is outside [1024, 1048576] (outbound hands a session up to 256 answers at once)"},
		{"[fix]\nlogons_per_comp_id_per_second = -5.0", "fix.logons_per_comp_id_per_second"},
		{"[fix]\naccepts_per_second = 5.0\naccepts_burst = 0", "fix.accepts_burst: must be at least 1 when fix.accepts_per_second is set"},
		{"[fix]\naccepts_per_source_per_second = nan", "fix.accepts_per_source_per_second"},
		{"[fix]\nlogons_per_source_burst = 0", "fix.logons_per_source_burst: must be at least 1"},
		{"[session_defaults.quickfix]\nResetOnLogn = \"Y\"", "session_defaults.quickfix.ResetOnLogn: not a QuickFIX/Go setting"},
		{"[session_defaults.quickfix]\nSocketUseSSL = \"Y\"", "session_defaults.quickfix.SocketUseSSL: the FIX edge terminates TLS, not QuickFIX/Go: set fix.tls_cert_file"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nUseTCPProxy = \"Y\"", "session[0].quickfix.UseTCPProxy: the FIX edge terminates TLS"},
		{"[session_defaults.quickfix]\nSQLStoreDriver = \"postgres\"", "session_defaults.quickfix.SQLStoreDriver: no effect here: the venue keeps each session's messages in its own store"},
		{"[session_defaults.quickfix]\nMongoLogConnection = \"mongodb://x\"", "session_defaults.quickfix.MongoLogConnection: no effect here: the venue writes QuickFIX/Go's messages and events to its own log"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nReconnectInterval = 5", "session[0].quickfix.ReconnectInterval: no effect here: a setting of a connecting (initiator) session"},
		{"[session_defaults.quickfix]\nFileStoreSync = \"Y\"", "session_defaults.quickfix.FileStoreSync: no effect here: the venue syncs each session's own store under venue.data_dir (gateway/fixstore/doc.go) every journal.fix_store_sync: set that"},
		{"[session_defaults.quickfix]\nDynamicSessions = \"Y\"", "session_defaults.quickfix.DynamicSessions: no effect here: the venue serves the configured [[session]]s only"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nresetonlogon = \"Y\"", "quickfix.resetonlogon: not a QuickFIX/Go setting (did you mean ResetOnLogon?)"},
		{"[session_defaults.quickfix]\nHeartBtInt = [30]", "quickfix.HeartBtInt: a setting is a string, a number or true/false, not an array"},
		{"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nStartTime = { h = 1 }", "quickfix.StartTime: a setting is a string, a number or true/false, not a table"},
		{"[fix]\naddr = \"127.0.0.1:99999\"", `fix.addr: port "99999"`},
		{"[engine]\nevent_ring_slots = 1099511627776", "engine.event_ring_slots: 1099511627776 is not a power of two up to 4194304"},
		{"[engine]\norders_max = 1000000000000", "engine.orders_max: 1000000000000 is outside"},
		{"[journal]\nsegment_bytes = 99999999999999", "journal.segment_bytes: 99999999999999 is outside [65536, 268435456]"},
		{strings.Replace(instrumentText, `symbol = "X"`, `symbol = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"`, 1), "instrument[0].symbol"},
		{strings.Replace(instrumentText, `symbol = "X"`, "symbol = \"A\tB\"", 1), "instrument[0].symbol"},
		{strings.Replace(instrumentText, `symbol = "X"`, `symbol = "ÄCMÉ"`, 1), "instrument[0].symbol"},
		{"[[session]]\ncomp_id = \"A\tB\"", "session[0].comp_id"},
		{"[[session]]\ncomp_id = \"" + strings.Repeat("C", 65) + "\"", "session[0].comp_id"},
		{"[[session]]\ncomp_id = \"VENUE\"", `session[0].comp_id: "VENUE" is the venue's own`},
		{"[[session]]\ncomp_id = \"C%d%d\"\nrange = [1, 2]", "session[0].comp_id: a range needs one %d"},
		// -1 <= 3: the message said from <= to, which the range held.
		{"[[session]]\ncomp_id = \"C%d\"\nrange = [-1, 3]", "session[0].range: want [from, to] with 0 <= from <= to, have [-1 3]"},
		// A negative limit is no limit to the gateway: a sign slipped in
		// would turn every session's throttle off.
		{"[session_defaults]\norders_per_second_reject = -1", "session_defaults.orders_per_second_reject: -1 is negative (0 means no limit)"},
		{"[session_defaults]\nmessages_per_second_logout = -20000", "session_defaults.messages_per_second_logout: -20000 is negative"},
		{"[[session]]\ncomp_id = \"A\"\ncancels_per_second_reject = -3", "session[0].cancels_per_second_reject: -3 is negative"},
		{"[session_defaults]\nopen_orders_max = -1", "session_defaults.open_orders_max: -1 is negative (0 means no bound)"},
		{"[[session]]\ncomp_id = \"A\"\nopen_orders_max = -8", "session[0].open_orders_max: -8 is negative"},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.text), "test.toml")
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("config %q: error %v does not name %s", tc.text, err, tc.key)
		}
	}
}

// A key that names a field only without regard to case is refused, naming
// it: the TOML decoder filled the field from it, but an [[Instrument]] was
// not seen as the file's instruments, so the demo's replaced them (and an
// [[Session]] the file's sessions, by the demo's without passwords), and a
// key given twice under two spellings kept the last without a word.
func TestKeysAreExact(t *testing.T) {
	upper := strings.Replace(instrumentText, "[[instrument]]", "[[Instrument]]", 1)
	tests := []struct{ text, want string }{
		{upper, "key Instrument (names are exact: instrument)"},
		{"[[Session]]\ncomp_id = \"FIRM1\"\npassword = \"s3cret\"", "key Session (names are exact: session)"},
		{instrumentText + "BAND_PERCENT = 50\n", "key instrument.BAND_PERCENT (names are exact: instrument.band_percent)"},
		{"[Venue]\ndata_dir = \"elsewhere\"", "key Venue (names are exact: venue)"},
		{"[risk]\n[[risk.session]]\ncomp_id = \"CLIENT1\"\nCredit_Limit = 5", "key risk.session.Credit_Limit (names are exact: risk.session.credit_limit)"},
	}
	for _, tc := range tests {
		c, err := Parse([]byte(tc.text), "test.toml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			var symbols []string
			if c != nil {
				for _, in := range c.Instruments {
					symbols = append(symbols, in.Symbol)
				}
			}
			t.Errorf("config %q: error %v does not say %s (instruments %v)", tc.text, err, tc.want, symbols)
		}
	}
	// Keys of their own stay free (QuickFIX/Go's settings), and the fields
	// of an embedded table (a risk subject's limits) are exact as written.
	ok := "[session_defaults.quickfix]\nHeartBtInt = \"20\"\n[risk]\n[[risk.session]]\ncomp_id = \"CLIENT1\"\ncredit_limit = 5\n"
	if _, err := Parse([]byte(ok), "test.toml"); err != nil {
		t.Errorf("config %q: %v", ok, err)
	}
}

// instrumentText is one valid instrument with id 1, symbol "X" and the
// default status, for tests that add a key to it.
const instrumentText = "[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"0.05\"\nlot_size = 1\nmin_qty = 1\nmax_qty = 2\nref_price = \"1\"\nband_percent = 5\n"

// The typed settings hold what the file names; an unset status means open.
func TestTypedSettings(t *testing.T) {
	text := "[engine]\nwait_strategy = \"spin\"\n[journal]\nfsync = \"none\"\n" +
		instrumentText +
		strings.Replace(instrumentText, "id = 1\nsymbol = \"X\"", "id = 2\nsymbol = \"Y\"\nstatus = \"halted\"", 1) +
		strings.Replace(instrumentText, "id = 1\nsymbol = \"X\"", "id = 3\nsymbol = \"Z\"\nstatus = \"closed\"", 1)
	c, err := Parse([]byte(text), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine.WaitStrategy != (WaitSetting{Strategy: ring.BusySpin}) || c.Journal.Fsync != journal.PolicyNone {
		t.Fatalf("wait_strategy = %v, fsync = %v", c.Engine.WaitStrategy, c.Journal.Fsync)
	}
	want := []venue.TradingStatus{venue.TradingStatusOpen, venue.TradingStatusHalted, venue.TradingStatusClosed}
	for i, in := range c.Instruments {
		if in.Status != want[i] {
			t.Errorf("instrument %s: status %v, want %v", in.Symbol, in.Status, want[i])
		}
	}
	d, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Engine.WaitStrategy.Auto || d.Journal.Fsync != journal.PolicyBatch || d.Instruments[0].Status != venue.TradingStatusOpen {
		t.Fatalf("defaults: wait_strategy = %v, fsync = %v, status = %v", d.Engine.WaitStrategy, d.Journal.Fsync, d.Instruments[0].Status)
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "venue.toml")
	if err := os.WriteFile(p, []byte("[metrics]\naddr = \"127.0.0.1:19464\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || c.Metrics.Addr != "127.0.0.1:19464" {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.toml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// writeConfig writes text to a file of a fresh directory and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "venue.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Ranged sessions are counted against SessionsMax before any is expanded:
// a file of ranges of 4,096 sessions each is refused at the range that
// takes the count past the bound, having made next to nothing (it made
// every session first, 240 MB for 40 ranges, and a 64 MB file of them
// billions), and one range of a billion is refused naming the bound.
func TestSessionRangesCountedBeforeExpanded(t *testing.T) {
	var many strings.Builder
	many.WriteString("[[session]]\ncomp_id = \"ONE\"\n")
	for i := range 40 {
		fmt.Fprintf(&many, "[[session]]\ncomp_id = \"R%d_%%d\"\nrange = [0, %d]\n", i, SessionsMax-1)
	}
	path := writeConfig(t, many.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Load(path)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("session[1].range: brings the sessions to %d, more than %d in all", SessionsMax+1, SessionsMax)) {
		t.Fatalf("40 ranges of %d: %v", SessionsMax, err)
	}
	// The whole load of the small file, defaults included, takes a few
	// MB; the 163,840 sessions took over 200.
	if made := after.TotalAlloc - before.TotalAlloc; made > 32<<20 {
		t.Errorf("loading the refused file allocated %d MB", made>>20)
	}
	_, err = Load(writeConfig(t, "[[session]]\ncomp_id = \"C%d\"\nrange = [1, 1000000000]\n"))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("session[0].range: 1000000000 sessions, more than %d", SessionsMax)) {
		t.Fatalf("a range of a billion: %v", err)
	}
	// Up to the bound in all, ranged and not, loads.
	c, err := Load(writeConfig(t, fmt.Sprintf("[[session]]\ncomp_id = \"ONE\"\n[[session]]\ncomp_id = \"C%%d\"\nrange = [1, %d]\n", SessionsMax-1)))
	if err != nil || len(c.Sessions) != SessionsMax || c.Sessions[SessionsMax-1].CompID != fmt.Sprintf("C%d", SessionsMax-1) {
		t.Fatalf("%d sessions: %v", SessionsMax, err)
	}
}

// The matcher's thread is locked unless configured otherwise, whatever the
// wait strategy.
func TestMatcherThreadLocked(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", true},
		{"[engine]\nwait_strategy = \"park\"\n", true},
		{"[engine]\nwait_strategy = \"yield\"\n", true},
		{"[engine]\nwait_strategy = \"spin\"\n", true},
		{"[engine]\nlock_os_thread = true\n", true},
		{"[engine]\nlock_os_thread = false\n", false},
		{"[engine]\nwait_strategy = \"spin\"\nlock_os_thread = false\n", false},
	} {
		c, err := Parse([]byte(tc.text), "test.toml")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Engine.MatcherThread(2).Locked; got != tc.want {
			t.Errorf("%q: locked = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestMatcherThread: unset, the matcher is locked; "auto" spins with 4 CPUs
// or more and parks after a short spin below; explicit settings win; a pin needs a
// locked thread.
func TestMatcherThread(t *testing.T) {
	yes, no, cpu := true, false, 1
	tests := []struct {
		name   string
		engine Engine
		cpus   int
		want   MatcherThread
	}{
		{"auto, 2 CPUs", Engine{WaitStrategy: WaitSetting{Auto: true}}, 2, MatcherThread{Wait: ring.SpinPark, Locked: true}},
		{"auto, 4 CPUs", Engine{WaitStrategy: WaitSetting{Auto: true}}, 4, MatcherThread{Wait: ring.BusySpin, Locked: true}},
		{"auto, 64 CPUs, pinned", Engine{WaitStrategy: WaitSetting{Auto: true}, MatcherCPU: &cpu}, 64, MatcherThread{Wait: ring.BusySpin, Locked: true, Pinned: true, CPU: 1}},
		{"park configured", Engine{WaitStrategy: WaitSetting{Strategy: ring.SpinPark}}, 8, MatcherThread{Wait: ring.SpinPark, Locked: true}},
		{"unlocked", Engine{WaitStrategy: WaitSetting{Strategy: ring.SpinYield}, LockOSThread: &no}, 2, MatcherThread{Wait: ring.SpinYield}},
		{"locked explicitly", Engine{WaitStrategy: WaitSetting{Strategy: ring.SpinPark}, LockOSThread: &yes}, 2, MatcherThread{Wait: ring.SpinPark, Locked: true}},
	}
	for _, tt := range tests {
		got := tt.engine.MatcherThread(tt.cpus)
		if got.Reason == "" {
			t.Errorf("%s: no reason given", tt.name)
		}
		got.Reason = ""
		if got != tt.want {
			t.Errorf("%s: MatcherThread(%d) = %+v, want %+v", tt.name, tt.cpus, got, tt.want)
		}
	}
	for _, bad := range []string{"[engine]\nmatcher_cpu = -1\n", "[engine]\nmatcher_cpu = 1\nlock_os_thread = false\n", "[engine]\nwait_strategy = \"fast\"\n"} {
		if _, err := Parse([]byte(bad), "bad.toml"); err == nil || !strings.Contains(err.Error(), "engine") && !strings.Contains(err.Error(), "wait strategy") {
			t.Errorf("Parse(%q) error = %v, want a clear error", bad, err)
		}
	}
	c, err := Parse([]byte("[engine]\nwait_strategy = \"spinpark\"\nmatcher_cpu = 0\n"), "ok.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Engine.MatcherThread(2); got.Wait != ring.SpinThenPark || !got.Locked || !got.Pinned || got.CPU != 0 {
		t.Fatalf("spinpark on CPU 0: %+v", got)
	}
}

// TestClusterSecret: the secret file's contents, white space trimmed; a
// short one or a missing file is refused, naming the key.
func TestClusterSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if b, err := (Cluster{SecretFile: write("ok", "  0123456789abcdef0123\n")}).Secret(); err != nil || string(b) != "0123456789abcdef0123" {
		t.Fatalf("secret %q, %v", b, err)
	}
	for _, c := range []Cluster{{SecretFile: write("short", "abc\n")}, {SecretFile: filepath.Join(dir, "missing")}} {
		if _, err := c.Secret(); err == nil || !strings.Contains(err.Error(), "cluster.secret_file") {
			t.Fatalf("%s: %v", c.SecretFile, err)
		}
	}
	if b, err := (Cluster{}).Secret(); b != nil || err != nil {
		t.Fatalf("no secret file: %q, %v", b, err)
	}
}

// TestQuickFIXSettingsTakeTOMLValues: QuickFIX/Go reads settings as text;
// numbers and booleans in the configuration become the text a QuickFIX
// settings file would hold.
func TestQuickFIXSettingsTakeTOMLValues(t *testing.T) {
	// Every setting QuickFIX/Go names is known, those without a type in
	// its list of names too (these two have no effect in the venue, and
	// are refused saying so, not as unknown).
	if _, err := Parse([]byte("[session_defaults.quickfix]\nSQLStoreMessagesTableName = \"m\"\nSQLStoreSessionsTableName = \"s\"\n"), "test.toml"); err == nil ||
		strings.Contains(err.Error(), "not a QuickFIX/Go setting") || strings.Count(err.Error(), "no effect here") != 2 {
		t.Fatal(err)
	}
	c, err := Parse([]byte("[session_defaults.quickfix]\nHeartBtInt = 30\nValidateFieldsHaveValues = false\nRejectInvalidMessage = true\n"+
		"[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nMaxLatency = 120\nResendRequestChunkSize = 2\nHeartBtInt = \"45\"\n"), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	got := c.QuickFIXSettings(&c.Sessions[len(c.Sessions)-1])
	for k, want := range map[string]string{"HeartBtInt": "45", "ValidateFieldsHaveValues": "N", "RejectInvalidMessage": "Y",
		"MaxLatency": "120", "ResendRequestChunkSize": "2"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	// A float is taken as its text, and that text is then checked as
	// QuickFIX/Go reads the setting: a chunk size is a whole number.
	_, err = Parse([]byte("[[session]]\ncomp_id = \"A\"\n[session.quickfix]\nResendRequestChunkSize = 2.5\n"), "test.toml")
	if want := `session[0].quickfix.ResendRequestChunkSize: "2.5" is not a whole number of at least 0`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ResendRequestChunkSize = 2.5: %v, want %q", err, want)
	}
	if d := c.SessionDefaults.QuickFIX["HeartBtInt"]; d != "30" {
		t.Errorf("default HeartBtInt = %q, want \"30\"", d)
	}
}

// TestQuickFIXDefaultsKeptUnderAFileTable: a file's
// [session_defaults.quickfix] is read over the embedded defaults', as
// every other key is (Parse): the settings it leaves out keep their
// defaults.
func TestQuickFIXDefaultsKeptUnderAFileTable(t *testing.T) {
	c, err := Parse([]byte("[session_defaults.quickfix]\nHeartBtInt = 20\nEnableLastMsgSeqNumProcessed = true\n"), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	got := c.QuickFIXSettings(&c.Sessions[0])
	for k, want := range map[string]string{"HeartBtInt": "20", "EnableLastMsgSeqNumProcessed": "Y",
		"ResetOnLogon": "N", "TimeStampPrecision": "MILLIS"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q (settings %v)", k, got[k], want, got)
		}
	}
}

// TestBandBoundsAsTheMatcherAsks: an instrument the configuration takes,
// the matcher takes, and one it refuses the configuration refuses first,
// naming the key (the matcher refused it after the data directory was
// made): each case is at a bound of the band's width in ticks, of the
// reference price or of max_qty × the band's top price.
func TestBandBoundsAsTheMatcherAsks(t *testing.T) {
	for _, tc := range []struct{ tick, ref, maxQty, band, key string }{
		{"1", "1048575", "1", "50", ""},                           // 1,048,575 levels
		{"1", "1048577", "1", "50", "instrument[0].band_percent"}, // 1,048,577
		{"0.05", "1", "219604096115589900", "5", ""},              // 21 ticks × max_qty is at most the largest risk limit
		{"0.05", "1", "219604096115589901", "5", "instrument[0].max_qty"},
		{"0.05", "1", "439208192231179800", "5", "instrument[0].max_qty"},             // fits an int64, above "no limit"
		{"0.000000001", "46116860.184273879", "1", "1", "instrument[0].band_percent"}, // the highest reference price: its band is too wide
		{"0.000000001", "46116860.184273880", "1", "1", "instrument[0].ref_price"},
	} {
		// One order and one ClOrdID, as the matcher below: max_qty is bound
		// by them too (TestMaxQtyBoundByTheOrders).
		text := fmt.Sprintf("[engine]\norders_max = 1\nclordids_max = 1\n[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = %q\nlot_size = 1\nmin_qty = 1\nmax_qty = %s\nref_price = %q\nband_percent = %s\n",
			tc.tick, tc.maxQty, tc.ref, tc.band)
		c, err := Parse([]byte(text), "test.toml")
		if tc.key != "" {
			if err == nil || !strings.Contains(err.Error(), tc.key+": ") {
				t.Errorf("%+v: error %v, want one naming %s", tc, err, tc.key)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		in := c.Instruments[0]
		_, err = core.NewMatcher(core.Config{OrdersMax: 1, ClOrdIDsMax: 1, SessionsMax: 1, Instruments: []core.InstrumentConfig{{
			ID: in.ID, Symbol: in.Symbol, TickSize: in.TickSize, LotSize: in.LotSize, MinQty: in.MinQty, MaxQty: in.MaxQty,
			RefPriceTicks: in.RefPriceTicks, BandPercent: in.BandPercent}}})
		if err != nil {
			t.Errorf("%+v: taken by the configuration, refused by the matcher: %v", tc, err)
		}
	}
}

// TestMaxQtyBoundByTheOrders: max_qty is at most what keeps the sums of
// orders_max + clordids_max + 1 orders' quantities (a price level's depth,
// the day's volume) within int64, as the matcher asks; at a reference
// price of one tick the band's notional bound is looser, so this one binds.
func TestMaxQtyBoundByTheOrders(t *testing.T) {
	for _, tc := range []struct {
		engine, maxQty string
		ok             bool
	}{
		{"", "1759218268897", true}, // the default engine: 1048576 orders, 4194304 ClOrdIDs
		{"", "1759218268898", false},
		{"[engine]\norders_max = 1\nclordids_max = 1\n", "3074457345618258602", true},
		{"[engine]\norders_max = 1\nclordids_max = 1\n", "3074457345618258603", false},
	} {
		text := tc.engine + "[[instrument]]\nid = 1\nsymbol = \"X\"\ntick_size = \"1\"\nlot_size = 1\nmin_qty = 1\nmax_qty = " + tc.maxQty +
			"\nref_price = \"1\"\nband_percent = 50\n"
		c, err := Parse([]byte(text), "test.toml")
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), "instrument[0].max_qty: "+tc.maxQty+" is above") {
				t.Errorf("%+v: error %v, want one naming instrument[0].max_qty", tc, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		in := c.Instruments[0]
		_, err = core.NewMatcher(core.Config{OrdersMax: c.Engine.OrdersMax, ClOrdIDsMax: c.Engine.ClOrdIDsMax, SessionsMax: 1,
			Instruments: []core.InstrumentConfig{{ID: in.ID, Symbol: in.Symbol, TickSize: in.TickSize, LotSize: in.LotSize,
				MinQty: in.MinQty, MaxQty: in.MaxQty, RefPriceTicks: in.RefPriceTicks, BandPercent: in.BandPercent}}})
		if err != nil {
			t.Errorf("%+v: taken by the configuration, refused by the matcher: %v", tc, err)
		}
	}
}

// TestFeedAddrsTheFeedTakes: loopback and multicast destinations, and
// host names (resolved by the feed), are taken.
func TestFeedAddrsTheFeedTakes(t *testing.T) {
	for _, a := range []string{"127.0.0.1:9500", "127.1.2.3:9500", "[::1]:9500", "[::ffff:127.0.0.1]:9500", "239.1.2.3:9500", "[ff02::1]:9500", "localhost:9500"} {
		if err := CheckFeedAddr("marketdata.feed_addr", a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
		if _, err := Parse(fmt.Appendf(nil, "[marketdata]\nfeed_addr = %q\n", a), "test.toml"); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// TestOpenOrdersMax: a session's bound on its open orders is its own, else
// session_defaults', else a quarter of engine.orders_max (on out of the
// box); 0 is no bound.
func TestOpenOrdersMax(t *testing.T) {
	sessions := "[[session]]\ncomp_id = \"A\"\n[[session]]\ncomp_id = \"B\"\nopen_orders_max = 0\n[[session]]\ncomp_id = \"C\"\nopen_orders_max = 7\n"
	for _, tc := range []struct {
		text    string
		a, b, c int
	}{
		{sessions, 1 << 18, 0, 7},
		{"[engine]\norders_max = 1000\nclordids_max = 4000\n" + sessions, 250, 0, 7},
		{"[engine]\norders_max = 2\nclordids_max = 4000\n" + sessions, 1, 0, 7},
		{"[session_defaults]\nopen_orders_max = 50\n" + sessions, 50, 0, 7},
		{"[session_defaults]\nopen_orders_max = 0\n" + sessions, 0, 0, 7},
	} {
		c, err := Parse([]byte(tc.text), "test.toml")
		if err != nil {
			t.Fatal(err)
		}
		if a, b, cc := c.OpenOrdersMax(&c.Sessions[0]), c.OpenOrdersMax(&c.Sessions[1]), c.OpenOrdersMax(&c.Sessions[2]); a != tc.a || b != tc.b || cc != tc.c {
			t.Errorf("%q: bounds %d %d %d, want %d %d %d", tc.text, a, b, cc, tc.a, tc.b, tc.c)
		}
	}
}

// TestCallExtensionFollowsTheBand: with a dynamic band a call is extended
// unless call_extension is false; without one it never is.
func TestCallExtensionFollowsTheBand(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  bool
	}{
		{"", false},
		{"volatility_band_ticks = 4\n", true},
		{"volatility_band_ticks = 4\ncall_extension = true\n", true},
		{"volatility_band_ticks = 4\ncall_extension = false\n", false},
		{"call_extension = false\n", false},
	} {
		c, err := Parse([]byte(instrumentText+tc.extra), "test.toml")
		if err != nil {
			t.Fatalf("%q: %v", tc.extra, err)
		}
		if got := c.Instruments[0].ExtendsCalls(); got != tc.want {
			t.Errorf("%q: ExtendsCalls %v, want %v", tc.extra, got, tc.want)
		}
	}
}
