package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	qfconfig "github.com/quickfixgo/quickfix/config"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/internal/regularfile"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Bounds on what one venue process serves.
const (
	SessionsMax    = 4096
	InstrumentsMax = 65535
	// EventRingSlotsMin is the smallest event ring: the matcher publishes
	// a long command's events every 64, and consumers hand events out in
	// whole commands until half the ring waits (marketdata.RingSource), so
	// a ring of a few hundred slots is the least that always moves.
	EventRingSlotsMin = 256
)

//go:embed default.toml
var defaultTOML []byte

// Default returns the embedded default configuration's text.
func Default() []byte { return defaultTOML }

// Duration is a time.Duration written as a Go duration string ("5s").
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		if _, terr := time.Parse(time.RFC3339Nano, string(b)); terr == nil || bytes.ContainsRune(b, ':') {
			// A TOML time (end_of_day = 17:30:00) reaches here as
			// "0000-01-01T17:30:00Z", and "17:30" as itself: time's own
			// error speaks of an unknown unit "-" or ":".
			return fmt.Errorf("%q is a time, not a duration: write a time of day as its offset from midnight, "+
				"in quotes (\"17h30m\"), and other durations the same way (\"5s\", \"100ms\")", b)
		}
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Config is the whole venue configuration.
type Config struct {
	Venue           Venue           `toml:"venue"`
	FIX             FIX             `toml:"fix"`
	Metrics         Metrics         `toml:"metrics"`
	Engine          Engine          `toml:"engine"`
	Journal         Journal         `toml:"journal"`
	MarketData      MarketData      `toml:"marketdata"`
	SessionDefaults SessionDefaults `toml:"session_defaults"`
	Sessions        []Session       `toml:"session"`
	Instruments     []Instrument    `toml:"instrument"`
	Admin           Admin           `toml:"admin"`
	Schedule        Schedule        `toml:"schedule"`
	Export          Export          `toml:"export"`
	Risk            *Risk           `toml:"risk"`
	Cluster         Cluster         `toml:"cluster"`
}

// Venue holds identity and storage.
type Venue struct {
	SenderCompID string `toml:"sender_comp_id"`
	DataDir      string `toml:"data_dir"`
	// Currency is the currency every instrument is priced and settled in
	// (an ISO 4217 code): an order naming another in Currency (15) is
	// refused, and SecurityList entries carry it. Empty: Currency is not
	// checked (gateway/doc.go, "Currency and settlement").
	Currency string `toml:"currency"`
}

// FIX holds the FIX listener and edge limits.
type FIX struct {
	Addr                string   `toml:"addr"`
	MessageBytesMax     int      `toml:"max_message_bytes"`
	LogonTimeout        Duration `toml:"logon_timeout"`
	ConnectionsMax      int      `toml:"max_connections"`
	ConnectionsPerIPMax int      `toml:"max_connections_per_ip"`
	WriteTimeout        Duration `toml:"write_timeout"`
	OutboundQueueMax    int      `toml:"outbound_queue_max"`
	TLSCertFile         string   `toml:"tls_cert_file"`
	TLSKeyFile          string   `toml:"tls_key_file"`
	TLSClientCAFile     string   `toml:"tls_client_ca_file"`
	// Logon attempts allowed per client CompID and per source address (per second, with a burst).
	LogonsPerCompIDPerSecond float64 `toml:"logons_per_comp_id_per_second"`
	LogonsPerCompIDBurst     int     `toml:"logons_per_comp_id_burst"`
	LogonsPerSourcePerSecond float64 `toml:"logons_per_source_per_second"`
	LogonsPerSourceBurst     int     `toml:"logons_per_source_burst"`
	// Connections accepted per second, in all and per source address (with
	// a burst), before any byte is read: a client connecting in a loop is
	// closed at once (gateway/edge/doc.go). Left out or 0 with its burst:
	// the edge's defaults.
	AcceptsPerSecond          float64 `toml:"accepts_per_second"`
	AcceptsBurst              int     `toml:"accepts_burst"`
	AcceptsPerSourcePerSecond float64 `toml:"accepts_per_source_per_second"`
	AcceptsPerSourceBurst     int     `toml:"accepts_per_source_burst"`
	// CancelGrace: once the venue serves after a start (a restart after a
	// crash, or a cluster node that starts to lead), each cancel-on-disconnect
	// session that has not logged on within this time has its orders
	// cancelled, as if it had disconnected then (a crash journaled no
	// disconnect). Set in the embedded default (10 s).
	CancelGrace Duration `toml:"cancel_grace"`
}

// Metrics holds the Prometheus listener.
type Metrics struct {
	Addr string `toml:"addr"`
	// TestHooks enables POST /test/seqnums on the metrics listener, which sets a
	// session's next sequence numbers (conformance scripts need it). Never in production.
	TestHooks bool `toml:"test_hooks"`
}

// CheckTestHooks refuses test_hooks on a metrics address beyond loopback:
// POST /test/seqnums sets any session's sequence numbers without a token,
// which anyone who reaches the listener could use to break a session.
func (m Metrics) CheckTestHooks() error {
	if !m.TestHooks || m.Addr == "" {
		return nil
	}
	if host, _, err := net.SplitHostPort(m.Addr); err == nil && IsLoopback(host) {
		return nil
	}
	return fmt.Errorf("metrics.test_hooks: POST /test/seqnums sets any session's sequence numbers without a token: "+
		"it is served on a loopback metrics.addr only, not %q", m.Addr)
}

// Engine sizes the matcher and the rings.
type Engine struct {
	OrdersMax   int `toml:"orders_max"`
	ClOrdIDsMax int `toml:"clordids_max"`
	// InstrumentsMaxSetting is engine.instruments_max: the configured
	// instruments plus those an operator may add while the venue runs
	// (README, "Adding an instrument"); 0 means InstrumentsMax().
	InstrumentsMaxSetting int         `toml:"instruments_max"`
	WaitStrategy          WaitSetting `toml:"wait_strategy"`
	CommandRingSlots      int         `toml:"command_ring_slots"`
	EventRingSlots        int         `toml:"event_ring_slots"`
	ClaimTimeout          Duration    `toml:"claim_timeout"`
	// LockOSThread locks the matcher goroutine to its OS thread; unset means
	// locked (the design's matcher thread), see MatcherThread.
	LockOSThread *bool `toml:"lock_os_thread"`
	// MatcherCPU pins the matcher's locked thread to this CPU (Linux); unset
	// leaves its placement to the kernel.
	MatcherCPU *int `toml:"matcher_cpu"`
	// IndicativeInterval throttles an instrument's indicative uncross during
	// a call (core.Config.IndicativeIntervalNs, measured in command time);
	// 0s: after every change.
	IndicativeInterval Duration `toml:"indicative_interval"`
	// GCHeadroomBytes bounds how far the heap grows past its live size
	// before the collector runs (README, "Memory"); 0 leaves the runtime's
	// default, a heap twice its live size.
	GCHeadroomBytes int64 `toml:"gc_headroom_bytes"`
}

// GCHeadroomMin is the least engine.gc_headroom_bytes: a smaller headroom
// has the collector run many times a second at the venue's allocation rate.
const GCHeadroomMin = 16 << 20

// InstrumentsAddedDefault is the room for added instruments when
// engine.instruments_max is not set: the table then holds the configured
// instruments and this many more (an empty slot costs about 1 KiB).
const InstrumentsAddedDefault = 256

// InstrumentsMax returns the bound of configured plus added instruments.
func (c *Config) InstrumentsMax() int {
	if c.Engine.InstrumentsMaxSetting != 0 {
		return c.Engine.InstrumentsMaxSetting
	}
	return min(len(c.Instruments)+InstrumentsAddedDefault, InstrumentsMax)
}

// WaitSetting is engine.wait_strategy: "auto" (the default: chosen from the
// machine's CPU count, see MatcherThread) or one ring.WaitStrategy by name.
type WaitSetting struct {
	Auto     bool
	Strategy ring.WaitStrategy // when not Auto
}

// UnmarshalText reads "auto" or a ring.WaitStrategy name.
func (w *WaitSetting) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*w = WaitSetting{Auto: true}
		return nil
	}
	var s ring.WaitStrategy
	if err := s.UnmarshalText(b); err != nil {
		return fmt.Errorf("unknown wait strategy %q (want auto, spin, yield, park or spinpark)", b)
	}
	*w = WaitSetting{Strategy: s}
	return nil
}

// MarshalText returns "auto" or the strategy's name.
func (w WaitSetting) MarshalText() ([]byte, error) {
	if w.Auto {
		return []byte("auto"), nil
	}
	return w.Strategy.MarshalText()
}

// String returns the configuration name.
func (w WaitSetting) String() string {
	if w.Auto {
		return "auto"
	}
	return w.Strategy.String()
}

// spinCPUsMin is the smallest CPU count (UsableCPUs) at which "auto" lets the
// matcher busy-spin: one core for the matcher's spinning thread, one for the
// gateway's sessions, one for the journal and the outbound path, one for the
// rest (market data, metrics, the operating system).
const spinCPUsMin = 4

// smallMachineWait is what "auto" chooses below spinCPUsMin CPUs: the best
// locked choice measured over FIX on 2 CPUs (docs/benchmarks.md, "Locked
// matcher thread"): park after a spin of well under a microsecond. Spinning
// tens of microseconds first (spinpark) held a processor the sessions needed
// and doubled p99; a pure spin or yield cost 10-40 times the median.
const smallMachineWait = ring.SpinPark

// MatcherThread is how the matcher runs, and why.
type MatcherThread struct {
	Wait   ring.WaitStrategy
	Locked bool
	Pinned bool
	CPU    int    // when Pinned
	Reason string // for the log line, /metrics and the README's explanation
}

// UsableCPUs is the CPU count "auto" decides by: the processors the Go
// runtime schedules on (GOMAXPROCS, which follows a container's CPU
// quota), but never more than the CPUs the process may run on. A spinning
// matcher needs a core of its own, not only a P: GOMAXPROCS=8 on 2 CPUs
// chose spin, and 5,000 orders/s then waited 10 ms at the median
// (docs/benchmarks.md, "P count").
func UsableCPUs() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// MatcherThread resolves wait_strategy, lock_os_thread and matcher_cpu for a
// machine with cpus usable CPUs (UsableCPUs). Unset, the matcher
// runs on a locked thread (the design's matcher thread); "auto" busy-spins it
// with at least spinCPUsMin CPUs, and below that parks after a short spin,
// the locked choice measured best on 2 CPUs: any longer spin there takes a
// processor from the sessions (docs/benchmarks.md, "Locked matcher thread").
func (e Engine) MatcherThread(cpus int) MatcherThread {
	t := MatcherThread{Wait: e.WaitStrategy.Strategy, Locked: true}
	switch {
	case !e.WaitStrategy.Auto:
		t.Reason = "wait_strategy configured"
	case cpus >= spinCPUsMin:
		t.Wait = ring.BusySpin
		t.Reason = fmt.Sprintf("auto: %d CPUs (at least %d): the matcher spins on a thread of its own", cpus, spinCPUsMin)
	default:
		t.Wait = smallMachineWait
		t.Reason = fmt.Sprintf("auto: %d CPUs (below %d, no core to give a spinning matcher): %s, the best locked wait measured on 2 CPUs", cpus, spinCPUsMin, smallMachineWait)
	}
	if e.LockOSThread != nil && !*e.LockOSThread {
		t.Locked = false
		t.Reason += "; lock_os_thread = false"
	}
	if e.MatcherCPU != nil && t.Locked {
		t.Pinned, t.CPU = true, *e.MatcherCPU
		t.Reason += fmt.Sprintf("; pinned to CPU %d", t.CPU)
	}
	return t
}

// Journal selects durability.
type Journal struct {
	Fsync        journal.Policy `toml:"fsync"`
	SegmentBytes int64          `toml:"segment_bytes"`
	// SnapshotInterval is how often the venue journals a Snapshot command
	// (when a command other than a snapshot was journaled since the last
	// one: an idle venue takes none), at least SnapshotIntervalMin; "0s"
	// turns snapshots off.
	SnapshotInterval Duration `toml:"snapshot_interval"`
	// FIXStoreSync is how often the FIX session stores (sequence numbers,
	// sent messages for resend) are fdatasynced, in [FIXStoreSyncMin,
	// FIXStoreSyncMax].
	// They survive a kill -9 whatever it is (the kernel's page cache holds
	// them); it is what a power cut can lose of them. Orders are not
	// concerned: the journal makes each one durable before it is answered.
	FIXStoreSync Duration `toml:"fix_store_sync"`
	// FIXStoreBytesMax is the size at which a session's FIX store file is
	// compacted to its resend window, in [FIXStoreBytesMin, FIXStoreBytesLimit].
	FIXStoreBytesMax int64 `toml:"fix_store_bytes_max"`
}

// Bounds of journal.fix_store_bytes_max.
const (
	FIXStoreBytesMin   = 1 << 20
	FIXStoreBytesLimit = 64 << 30
)

// FIXStoreSyncMax bounds journal.fix_store_sync.
const FIXStoreSyncMax = 10 * time.Second

// Lower bounds of the intervals that pace periodic work: below them the
// work runs all but continuously ("1us" snapshots wrote a full snapshot
// after every risk report, hundreds a second; fdatasyncs of the FIX
// stores back to back; feed heartbeats as fast as the socket takes them).
const (
	// SnapshotIntervalMin is the shortest journal.snapshot_interval other
	// than "0s": each snapshot is a journaled command and a file of the
	// matcher's whole state, with the feed's and the console's beside it.
	SnapshotIntervalMin = 50 * time.Millisecond
	// FIXStoreSyncMin is the shortest journal.fix_store_sync: each period
	// fdatasyncs every session's store.
	FIXStoreSyncMin = 10 * time.Millisecond
	// HeartbeatIntervalMin is the shortest marketdata.heartbeat_interval:
	// each is a packet to every receiver (the feed refuses less too).
	HeartbeatIntervalMin = time.Millisecond
)

// MarketData configures the binary feed.
type MarketData struct {
	Enabled  bool   `toml:"enabled"`
	FeedAddr string `toml:"feed_addr"`
	// FeedBAddr is the feed's B line: every datagram sent again to this
	// second destination (marketdata.FeedConfig.FeedBAddr); "": none.
	FeedBAddr string `toml:"feed_b_addr"`
	// FeedBFrom says which node of a cluster sends the B line:
	// FeedBFromLeader ("" too), the leader both lines; FeedBFromFollowers,
	// each follower line B from its standby feed and the leader line A
	// alone, so that the lines leave from different machines
	// (docs/ARCHITECTURE.md, "Cluster").
	FeedBFrom         string   `toml:"feed_b_from"`
	RecoveryAddr      string   `toml:"recovery_addr"`
	HeartbeatInterval Duration `toml:"heartbeat_interval"`
}

// The values of marketdata.feed_b_from.
const (
	FeedBFromLeader    = "leader"
	FeedBFromFollowers = "followers"
)

// QuickFIXSettings are QuickFIX/Go session settings by name. QuickFIX/Go
// reads every setting as text; a TOML number or boolean is taken as the
// text a QuickFIX settings file would hold (HeartBtInt = 30 as "30",
// true as "Y"), so either spelling works.
type QuickFIXSettings map[string]string

// UnmarshalTOML takes a table of strings, integers, floats and booleans.
// The settings are added to those already there: a file's
// [session_defaults.quickfix] is read over the embedded defaults' (Parse),
// so a setting it leaves out keeps its default, as every other key of
// session_defaults does.
func (q *QuickFIXSettings) UnmarshalTOML(v any) error {
	table, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("quickfix: a table of settings, not %T", v)
	}
	out := make(QuickFIXSettings, len(*q)+len(table))
	maps.Copy(out, *q)
	for k, raw := range table {
		switch x := raw.(type) {
		case string:
			out[k] = x
		case int64:
			out[k] = strconv.FormatInt(x, 10)
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[k] = map[bool]string{true: "Y", false: "N"}[x]
		case []any:
			return fmt.Errorf("quickfix.%s: a setting is a string, a number or true/false, not an array", k)
		default:
			return fmt.Errorf("quickfix.%s: a setting is a string, a number or true/false, not a table", k)
		}
	}
	*q = out
	return nil
}

// SessionDefaults apply to every session that does not set its own value.
type SessionDefaults struct {
	CancelOnDisconnect      *bool `toml:"cancel_on_disconnect"`
	OrdersPerSecondReject   int   `toml:"orders_per_second_reject"`
	CancelsPerSecondReject  int   `toml:"cancels_per_second_reject"`
	MessagesPerSecondLogout int   `toml:"messages_per_second_logout"`
	// OpenOrdersMax bounds each session's open orders (OpenOrdersMax):
	// unset, a quarter of engine.orders_max; 0, none.
	OpenOrdersMax             *int             `toml:"open_orders_max"`
	QuickFIX                  QuickFIXSettings `toml:"quickfix"`
	AllowedSourceAddresses    []string         `toml:"allowed_source_addresses"`
	RequireClientCertificates bool             `toml:"require_client_certificates"`
}

// Session is one FIX session of a client with the venue. CompID is the client's
// SenderCompID; with Range it is a format ("CLIENT%d") expanded over [from, to].
type Session struct {
	CompID                  string           `toml:"comp_id"`
	Range                   []int            `toml:"range"`
	Password                string           `toml:"password"`
	CancelOnDisconnect      *bool            `toml:"cancel_on_disconnect"`
	OrdersPerSecondReject   int              `toml:"orders_per_second_reject"`
	CancelsPerSecondReject  int              `toml:"cancels_per_second_reject"`
	MessagesPerSecondLogout int              `toml:"messages_per_second_logout"`
	OpenOrdersMax           *int             `toml:"open_orders_max"` // unset: session_defaults'
	AllowedSourceAddresses  []string         `toml:"allowed_source_addresses"`
	SenderCompID            string           `toml:"venue_comp_id"`
	QuickFIX                QuickFIXSettings `toml:"quickfix"`
	// Accounts are the Accounts (1) the session's orders may name. An
	// account some session lists is that session's (or those sessions'):
	// any other session naming it is refused, so that a firm cannot trade on
	// another's account limits, trip its kill switch or feed its drop copy.
	// A session with no list may name any account no session lists.
	Accounts []string `toml:"accounts"`
	// Kind is "order" (the default) or "dropcopy" (see dropcopy.go).
	Kind         string   `toml:"kind"`
	CopySessions []string `toml:"copy_sessions"`
	CopyAccounts []string `toml:"copy_accounts"`
	CopyAll      bool     `toml:"copy_all"`
}

// Instrument is one tradable instrument.
type Instrument struct {
	ID          uint32 `toml:"id"`
	Symbol      string `toml:"symbol"`
	TickSize    string `toml:"tick_size"`
	LotSize     int64  `toml:"lot_size"`
	MinQty      int64  `toml:"min_qty"`
	MaxQty      int64  `toml:"max_qty"`
	RefPrice    string `toml:"ref_price"`
	BandPercent int64  `toml:"band_percent"`
	// Status is the status the instrument starts in; unset means open.
	Status venue.TradingStatus `toml:"status"`
	// Group names the schedule group of an instrument added while the
	// venue ran (configured ones are placed by [[schedule.group]]
	// instruments); empty: the group its symbol falls in.
	Group string `toml:"-"`
	// VolatilityBandTicks is the half-width, in ticks, of the dynamic band
	// around the last trade outside which an order does not trade and the
	// instrument enters a volatility auction of VolatilityAuction (unset:
	// two minutes), and outside which a scheduled opening or closing uncross
	// extends its call by one; 0: no volatility interruption ("Auctions" in
	// core/doc.go).
	VolatilityBandTicks int64    `toml:"volatility_band_ticks"`
	VolatilityAuction   Duration `toml:"volatility_auction"`
	// CallExtension turns the extension of an opening or closing call
	// whose uncross would print outside VolatilityBandTicks on or off
	// (unset: on, with a band; ExtendsCalls).
	CallExtension *bool `toml:"call_extension"`

	Tick          decimal.Tick `toml:"-"`
	RefPriceTicks int64        `toml:"-"`
}

// ownedQuickFIXKeys are set by the venue and refused in [quickfix] tables.
var ownedQuickFIXKeys = map[string]bool{
	"BeginString": true, "SenderCompID": true, "TargetCompID": true, "SocketAcceptPort": true,
	"SocketAcceptHost": true, "DataDictionary": true, "TransportDataDictionary": true,
	"AppDataDictionary": true, "FileStorePath": true, "FileLogPath": true, "ConnectionType": true,
	"SocketPrivateKeyFile": true, "SocketCertificateFile": true, "SocketCAFile": true,
}

// edgeQuickFIXKeys are QuickFIX/Go's TLS and proxy settings, refused in
// [quickfix] tables: the FIX edge terminates TLS and hands QuickFIX/Go plain
// connections (gateway/edge/doc.go, "Wiring"), so QuickFIX/Go ignored them
// and SocketUseSSL = "Y" served FIX in the clear without a word.
var edgeQuickFIXKeys = map[string]bool{
	"SocketUseSSL": true, "SocketPrivateKeyBytes": true, "SocketCertificateBytes": true, "SocketCABytes": true,
	"SocketMinimumTLSVersion": true, "SocketInsecureSkipVerify": true, "SocketServerName": true, "UseTCPProxy": true,
}

// ignoredQuickFIXKeys are QuickFIX/Go settings that would have no effect
// in the venue, refused in [quickfix] tables with the reason rather than
// taken and ignored (an SQL store asked for, and the messages kept in files
// without a word).
var ignoredQuickFIXKeys = func() map[string]string {
	const (
		store     = "the venue keeps each session's messages in its own store under venue.data_dir (gateway/fixstore/doc.go), which QuickFIX/Go's store settings do not reach"
		log       = "the venue writes QuickFIX/Go's messages and events to its own log (--log-level), which QuickFIX/Go's log settings do not reach"
		sync      = "the venue syncs each session's own store under venue.data_dir (gateway/fixstore/doc.go) every journal.fix_store_sync: set that"
		initiator = "a setting of a connecting (initiator) session: the venue only accepts connections"
		dynamic   = "the venue serves the configured [[session]]s only"
	)
	m := map[string]string{}
	for k, why := range map[string]string{
		"SQLStoreDriver": store, "SQLStoreDataSourceName": store, "SQLStoreConnMaxLifetime": store,
		"SQLStoreMessagesTableName": store, "SQLStoreSessionsTableName": store, "MongoStoreConnection": store,
		"MongoStoreDatabase": store, "MongoStoreReplicaSet": store, "FileStoreSync": sync,
		"SQLLogDriver": log, "SQLLogDataSourceName": log, "SQLLogConnMaxLifetime": log,
		"MongoLogConnection": log, "MongoLogDatabase": log, "MongoLogReplicaSet": log,
		"ReconnectInterval": initiator, "SocketConnectHost": initiator, "SocketConnectPort": initiator,
		"SocketTimeout": initiator, "ProxyType": initiator, "ProxyHost": initiator, "ProxyPort": initiator,
		"ProxyUser": initiator, "ProxyPassword": initiator,
		"DynamicSessions": dynamic, "DynamicQualifier": dynamic,
	} {
		m[k] = why
	}
	return m
}()

// quickFIXKeyRefused says why key may not be set in a [quickfix] table, or
// "" when it may.
func quickFIXKeyRefused(key string) string {
	switch {
	case ownedQuickFIXKeys[key]:
		return "set by the venue, not per session"
	case ignoredQuickFIXKeys[key] != "":
		return "no effect here: " + ignoredQuickFIXKeys[key]
	case edgeQuickFIXKeys[key]:
		return "the FIX edge terminates TLS, not QuickFIX/Go: set fix.tls_cert_file and fix.tls_key_file " +
			"(and fix.tls_client_ca_file)"
	}
	return unknownQuickFIXKey(key)
}

// quickFIXKeys are the settings QuickFIX/Go knows: a name outside them in
// a [quickfix] table (a misspelt one) would be ignored, so it is refused.
var quickFIXKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		qfconfig.BeginString, qfconfig.SenderCompID, qfconfig.SenderSubID, qfconfig.SenderLocationID,
		qfconfig.TargetCompID, qfconfig.TargetSubID, qfconfig.TargetLocationID, qfconfig.SessionQualifier,
		qfconfig.DefaultApplVerID, qfconfig.StartTime, qfconfig.EndTime, qfconfig.StartDay, qfconfig.EndDay,
		qfconfig.Weekdays, qfconfig.TimeZone, qfconfig.TimeStampPrecision, qfconfig.ResetOnLogon,
		qfconfig.RefreshOnLogon, qfconfig.ResetOnLogout, qfconfig.ResetOnDisconnect, qfconfig.ResetSeqTime,
		qfconfig.DataDictionary, qfconfig.TransportDataDictionary, qfconfig.AppDataDictionary,
		qfconfig.RejectInvalidMessage, qfconfig.AllowUnknownMessageFields, qfconfig.CheckUserDefinedFields,
		qfconfig.ValidateFieldsOutOfOrder, qfconfig.ValidateFieldsHaveValues, qfconfig.CheckLatency,
		qfconfig.MaxLatency, qfconfig.InChanCapacity, qfconfig.ReconnectInterval, qfconfig.LogoutTimeout,
		qfconfig.LogonTimeout, qfconfig.HeartBtInt, qfconfig.SocketConnectHost, qfconfig.SocketConnectPort,
		qfconfig.SocketTimeout, qfconfig.ProxyType, qfconfig.ProxyHost, qfconfig.ProxyPort, qfconfig.ProxyUser,
		qfconfig.ProxyPassword, qfconfig.SocketAcceptHost, qfconfig.SocketAcceptPort, qfconfig.HeartBtIntOverride,
		qfconfig.UseTCPProxy, qfconfig.DynamicSessions, qfconfig.DynamicQualifier, qfconfig.SocketPrivateKeyFile,
		qfconfig.SocketCertificateFile, qfconfig.SocketCAFile, qfconfig.SocketPrivateKeyBytes,
		qfconfig.SocketCertificateBytes, qfconfig.SocketCABytes, qfconfig.SocketInsecureSkipVerify,
		qfconfig.SocketServerName, qfconfig.SocketMinimumTLSVersion, qfconfig.SocketUseSSL, qfconfig.FileLogPath,
		qfconfig.SQLLogDriver, qfconfig.SQLLogDataSourceName, qfconfig.SQLLogConnMaxLifetime,
		qfconfig.MongoLogConnection, qfconfig.MongoLogDatabase, qfconfig.MongoLogReplicaSet,
		qfconfig.PersistMessages, qfconfig.FileStorePath, qfconfig.FileStoreSync, qfconfig.SQLStoreDriver,
		qfconfig.SQLStoreDataSourceName, qfconfig.SQLStoreConnMaxLifetime, qfconfig.SQLStoreMessagesTableName, qfconfig.SQLStoreSessionsTableName, qfconfig.MongoStoreConnection,
		qfconfig.MongoStoreDatabase, qfconfig.MongoStoreReplicaSet, qfconfig.ResendRequestChunkSize,
		qfconfig.EnableLastMsgSeqNumProcessed, qfconfig.EnableNextExpectedMsgSeqNum,
	} {
		m[k] = true
	}
	return m
}()

// unknownQuickFIXKey describes key when QuickFIX/Go has no setting of
// that name, naming the one it differs from only in case.
func unknownQuickFIXKey(key string) string {
	if quickFIXKeys[key] {
		return ""
	}
	for k := range quickFIXKeys {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("not a QuickFIX/Go setting (did you mean %s?)", k)
		}
	}
	return "not a QuickFIX/Go setting"
}

// Load reads a configuration file; an empty path means the embedded defaults.
func Load(path string) (*Config, error) {
	if path == "" {
		return Parse(defaultTOML, "default.toml")
	}
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// ConfigBytesMax bounds a configuration file: 65,535 instruments of a few
// lines each take about 15 MB. Parsing holds several times a file's size.
const ConfigBytesMax = 64 << 20

// readFile reads the configuration file at path, which must be a regular
// file of at most ConfigBytesMax bytes. Read as it was, --config /dev/zero
// grew until the process ran out of memory, and a named pipe no one wrote
// to hung the start without a word.
func readFile(path string) ([]byte, error) {
	b, err := regularfile.ReadMax(path, ConfigBytesMax)
	var notRegular *regularfile.NotRegularError
	var big *regularfile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%w: the configuration is read from a file", err)
	case errors.As(err, &big) && big.Size > 0:
		return nil, fmt.Errorf("%s: %d bytes, more than a configuration file may hold (%d)", path, big.Size, ConfigBytesMax)
	case errors.As(err, &big):
		return nil, fmt.Errorf("%s: more than %d bytes, more than a configuration file may hold", path, ConfigBytesMax)
	}
	return b, err
}

// Parse reads configuration text over the defaults and validates it. Tables of
// sessions and instruments replace the default ones when present.
func Parse(text []byte, name string) (*Config, error) {
	var c Config
	if _, err := toml.Decode(string(defaultTOML), &c); err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	if name != "default.toml" {
		defSessions, defInstruments := c.Sessions, c.Instruments
		c.Sessions, c.Instruments = nil, nil
		md, err := toml.Decode(string(text), &c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, 0, len(und))
			for _, k := range und {
				keys = append(keys, k.String())
			}
			sort.Strings(keys)
			if slices.Contains(keys, "cluster.cancel_grace") {
				return nil, fmt.Errorf("%s: cluster.cancel_grace is now fix.cancel_grace (it applies to a single venue's restart too)", name)
			}
			return nil, fmt.Errorf("%s: unknown key %s", name, strings.Join(keys, ", "))
		}
		if keys := inexactKeys(md); len(keys) > 0 {
			return nil, fmt.Errorf("%s: key %s", name, strings.Join(keys, ", "))
		}
		if !md.IsDefined("session") {
			c.Sessions = defSessions
		}
		if !md.IsDefined("instrument") {
			c.Instruments = defInstruments
		}
	}
	if err := c.expandSessions(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// expandSessions replaces each ranged session by its sessions. The
// ranges are counted, and refused past SessionsMax, before any is
// expanded: each range alone is bounded, but a file of many ranges named
// billions of sessions, all made before validate counted them.
func (c *Config) expandSessions() error {
	total, ranged := 0, false
	for i, s := range c.Sessions {
		if len(s.Range) == 0 {
			total++
			continue
		}
		ranged = true
		if len(s.Range) != 2 || s.Range[0] > s.Range[1] || s.Range[0] < 0 {
			return fmt.Errorf("session[%d].range: want [from, to] with 0 <= from <= to, have %v", i, s.Range)
		}
		if strings.Count(s.CompID, "%") != 1 || !strings.Contains(s.CompID, "%d") {
			return fmt.Errorf("session[%d].comp_id: a range needs one %%d in the CompID, and no other %%", i)
		}
		if s.Range[1]-s.Range[0] >= SessionsMax {
			return fmt.Errorf("session[%d].range: %d sessions, more than %d", i, uint64(s.Range[1]-s.Range[0])+1, SessionsMax)
		}
		if total += s.Range[1] - s.Range[0] + 1; total > SessionsMax {
			return fmt.Errorf("session[%d].range: brings the sessions to %d, more than %d in all", i, total, SessionsMax)
		}
	}
	if !ranged {
		return nil
	}
	out := make([]Session, 0, total)
	for _, s := range c.Sessions {
		if len(s.Range) == 0 {
			out = append(out, s)
			continue
		}
		for n := s.Range[0]; n <= s.Range[1]; n++ {
			e := s
			e.Range = nil
			e.CompID = fmt.Sprintf(s.CompID, n)
			out = append(out, e)
		}
	}
	c.Sessions = out
	return nil
}

func checkAddr(key, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n > 65535 {
		return fmt.Errorf("%s: port %q of %q is not a number from 0 to 65535", key, port, addr)
	}
	return nil
}

// CheckAddr checks a host:port given for key (a configuration key or a
// command-line flag) as the configuration's addresses are checked.
func CheckAddr(key, addr string) error { return checkAddr(key, addr) }

// CheckFeedAddr checks the market data feed's destination given for key
// (marketdata.feed_addr or serve's --md-addr) as the feed will take it:
// a host:port whose host, when it is an IP, is loopback or multicast (a
// host name is resolved when the feed is made). The feed sends to no
// other (marketdata.FeedConfig.AllowNonLoopback, which the venue does not
// set): 10.1.2.3:9500 was refused by the feed after the data directory
// was made, asking for a setting no configuration key holds.
func CheckFeedAddr(key, addr string) error {
	if err := checkAddr(key, addr); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	if host == "" {
		return fmt.Errorf("%s: %q names no host: the feed is sent to a loopback address or a multicast group", key, addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !ip.IsLoopback() && !ip.IsMulticast() {
		return fmt.Errorf("%s: %s is neither a loopback address nor a multicast group: the feed is sent to receivers on this host "+
			"or to a multicast group (224.0.0.0/4, ff00::/8)", key, addr)
	}
	return nil
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// currencyCode reports whether s has the form of an ISO 4217 code, as FIX's
// Currency (15) takes it.
func currencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func (c *Config) validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	// Sent in every message and part of every session's FIX store file
	// name, as a session's venue_comp_id is (validateSessions).
	if !validName(c.Venue.SenderCompID, CompIDLengthMax) {
		add("venue.sender_comp_id: %q is not 1 to %d printable ASCII characters without space or '='", c.Venue.SenderCompID, CompIDLengthMax)
	}
	if c.Venue.DataDir == "" {
		add("venue.data_dir: must not be empty")
	}
	if c.Venue.Currency != "" && !currencyCode(c.Venue.Currency) {
		add("venue.currency: %q is not a currency code of three capital letters (ISO 4217, e.g. \"USD\"), or empty for no check", c.Venue.Currency)
	}
	if err := checkAddr("fix.addr", c.FIX.Addr); err != nil {
		errs = append(errs, err)
	}
	if c.Metrics.Addr != "" {
		if err := checkAddr("metrics.addr", c.Metrics.Addr); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Metrics.CheckTestHooks(); err != nil {
		errs = append(errs, err)
	}
	if c.FIX.MessageBytesMax < 256 || c.FIX.MessageBytesMax > 1<<24 {
		add("fix.max_message_bytes: %d is outside [256, 16777216]", c.FIX.MessageBytesMax)
	}
	if c.FIX.LogonTimeout.Duration <= 0 {
		add("fix.logon_timeout: must be positive")
	}
	if c.FIX.WriteTimeout.Duration <= 0 {
		add("fix.write_timeout: must be positive")
	}
	if c.FIX.ConnectionsMax <= 0 || c.FIX.ConnectionsPerIPMax <= 0 {
		add("fix.max_connections, fix.max_connections_per_ip: must be positive")
	}
	if c.FIX.OutboundQueueMax < OutboundQueueMin || c.FIX.OutboundQueueMax > OutboundQueueMaxLimit {
		add("fix.outbound_queue_max: %d is outside [%d, %d] (outbound hands a session up to 256 answers at once)",
			c.FIX.OutboundQueueMax, OutboundQueueMin, OutboundQueueMaxLimit)
	}
	for _, r := range []struct {
		name      string
		perSecond float64
		burst     int
	}{
		{"logons_per_comp_id", c.FIX.LogonsPerCompIDPerSecond, c.FIX.LogonsPerCompIDBurst},
		{"logons_per_source", c.FIX.LogonsPerSourcePerSecond, c.FIX.LogonsPerSourceBurst},
		{"accepts", c.FIX.AcceptsPerSecond, c.FIX.AcceptsBurst},
		{"accepts_per_source", c.FIX.AcceptsPerSourcePerSecond, c.FIX.AcceptsPerSourceBurst},
	} {
		switch {
		case r.perSecond < 0 || r.burst < 0 || math.IsNaN(r.perSecond) || math.IsInf(r.perSecond, 0):
			add("fix.%s_per_second, fix.%s_burst: must not be negative", r.name, r.name)
		case r.burst == 0 && r.perSecond != 0:
			// Both left out take the edge's default; a rate without a
			// burst would refuse everything.
			add("fix.%s_burst: must be at least 1 when fix.%s_per_second is set", r.name, r.name)
		}
	}
	if c.FIX.CancelGrace.Duration <= 0 {
		add("fix.cancel_grace: must be positive")
	}
	if (c.FIX.TLSCertFile == "") != (c.FIX.TLSKeyFile == "") {
		add("fix.tls_cert_file, fix.tls_key_file: give both or neither")
	}
	if c.SessionDefaults.RequireClientCertificates && c.FIX.TLSClientCAFile == "" {
		add("session_defaults.require_client_certificates: needs fix.tls_client_ca_file (and TLS): without it no Logon could present a certificate")
	}
	if c.FIX.TLSClientCAFile != "" && c.FIX.TLSCertFile == "" {
		add("fix.tls_client_ca_file: mutual TLS needs fix.tls_cert_file")
	}
	if c.Engine.OrdersMax <= 0 || c.Engine.OrdersMax > core.OrdersMaxLimit {
		add("engine.orders_max: %d is outside [1, %d]", c.Engine.OrdersMax, core.OrdersMaxLimit)
	}
	if c.Engine.ClOrdIDsMax < c.Engine.OrdersMax || c.Engine.ClOrdIDsMax > core.ClOrdIDsMaxLimit {
		add("engine.clordids_max: %d is outside [engine.orders_max, %d]", c.Engine.ClOrdIDsMax, core.ClOrdIDsMaxLimit)
	}
	if n := c.Engine.InstrumentsMaxSetting; n != 0 && (n < len(c.Instruments) || n > InstrumentsMax) {
		add("engine.instruments_max: %d is outside [%d configured instruments, %d]", n, len(c.Instruments), InstrumentsMax)
	}
	if !isPow2(c.Engine.CommandRingSlots) || c.Engine.CommandRingSlots > RingSlotsMax {
		add("engine.command_ring_slots: %d is not a power of two up to %d", c.Engine.CommandRingSlots, RingSlotsMax)
	}
	if !isPow2(c.Engine.EventRingSlots) || c.Engine.EventRingSlots > RingSlotsMax {
		add("engine.event_ring_slots: %d is not a power of two up to %d", c.Engine.EventRingSlots, RingSlotsMax)
	} else if c.Engine.EventRingSlots < EventRingSlotsMin {
		add("engine.event_ring_slots: %d is below %d", c.Engine.EventRingSlots, EventRingSlotsMin)
	}
	if c.Engine.MatcherCPU != nil {
		if *c.Engine.MatcherCPU < 0 {
			add("engine.matcher_cpu: %d is negative", *c.Engine.MatcherCPU)
		} else if c.Engine.LockOSThread != nil && !*c.Engine.LockOSThread {
			add("engine.matcher_cpu: pinning needs a locked matcher thread (lock_os_thread = false)")
		}
	}
	if c.Engine.ClaimTimeout.Duration < 0 {
		add("engine.claim_timeout: must not be negative")
	}
	if c.Engine.IndicativeInterval.Duration < 0 {
		add("engine.indicative_interval: must not be negative")
	}
	if n := c.Engine.GCHeadroomBytes; n != 0 && n < GCHeadroomMin {
		add("engine.gc_headroom_bytes: %d is below %d (0: the runtime's default, a heap twice its live size)", n, GCHeadroomMin)
	}
	if d := c.Journal.SnapshotInterval.Duration; d < 0 {
		add("journal.snapshot_interval: must not be negative")
	} else if d > 0 && d < SnapshotIntervalMin {
		add("journal.snapshot_interval: %s is below %s (each snapshot is a journaled command and a file of the whole state; \"0s\" for none)",
			d, SnapshotIntervalMin)
	}
	if d := c.Journal.FIXStoreSync.Duration; d < FIXStoreSyncMin || d > FIXStoreSyncMax {
		add("journal.fix_store_sync: %s is outside [%s, %s] (each period fdatasyncs every session's store)", d, FIXStoreSyncMin, FIXStoreSyncMax)
	}
	if n := c.Journal.FIXStoreBytesMax; n < FIXStoreBytesMin || n > FIXStoreBytesLimit {
		add("journal.fix_store_bytes_max: %d is outside [%d, %d]", n, FIXStoreBytesMin, FIXStoreBytesLimit)
	}
	if c.Journal.SegmentBytes < 1<<16 || c.Journal.SegmentBytes > journal.SegmentBytesLimit {
		add("journal.segment_bytes: %d is outside [65536, %d]", c.Journal.SegmentBytes, journal.SegmentBytesLimit)
	}
	if c.MarketData.Enabled {
		if err := CheckFeedAddr("marketdata.feed_addr", c.MarketData.FeedAddr); err != nil {
			errs = append(errs, err)
		}
		if b := c.MarketData.FeedBAddr; b != "" {
			if err := CheckFeedAddr("marketdata.feed_b_addr", b); err != nil {
				errs = append(errs, err)
			} else if b == c.MarketData.FeedAddr {
				add("marketdata.feed_b_addr: %s is feed_addr: the B line goes to a destination of its own (another port, or another multicast group)", b)
			}
		}
		switch c.MarketData.FeedBFrom {
		case "", FeedBFromLeader:
		case FeedBFromFollowers:
			switch {
			case !c.Cluster.Enabled():
				add("marketdata.feed_b_from: %q needs [cluster]: a venue alone has no follower to send the B line (%q sends both lines from the venue)",
					FeedBFromFollowers, FeedBFromLeader)
			case c.MarketData.FeedBAddr == "":
				add("marketdata.feed_b_from: %q needs marketdata.feed_b_addr, where this node sends the B line while it follows", FeedBFromFollowers)
			}
		default:
			add("marketdata.feed_b_from: %q is neither %q (the leader sends both lines) nor %q (the followers send the B line)",
				c.MarketData.FeedBFrom, FeedBFromLeader, FeedBFromFollowers)
		}
		if err := checkAddr("marketdata.recovery_addr", c.MarketData.RecoveryAddr); err != nil {
			errs = append(errs, err)
		}
		if d := c.MarketData.HeartbeatInterval.Duration; d <= 0 {
			add("marketdata.heartbeat_interval: must be positive")
		} else if d < HeartbeatIntervalMin {
			add("marketdata.heartbeat_interval: %s is below %s (each heartbeat is a packet to every receiver)", d, HeartbeatIntervalMin)
		}
	}
	errs = append(errs, c.validateSessions()...)
	errs = append(errs, c.validateDropCopy()...)
	errs = append(errs, c.validateExport()...)
	errs = append(errs, c.validateInstruments()...)
	errs = append(errs, c.validateOperations()...)
	errs = append(errs, c.validateRisk()...)
	errs = append(errs, c.validateCluster()...)
	if err := c.CheckListeners(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Bounds of the configuration that the parts it sizes would otherwise meet
// later, after the data directory is in use.
const (
	// OutboundQueueMaxLimit bounds fix.outbound_queue_max (a queue of that
	// many messages is made for every session).
	OutboundQueueMaxLimit = 1 << 20
	// OutboundQueueMin is the smallest fix.outbound_queue_max: outbound
	// hands a session up to 256 answers at once, and each drop-copy session
	// granted it as many copies, so a smaller queue overflows on an
	// ordinary burst and disconnects a session that reads.
	OutboundQueueMin = 1024
	// RingSlotsMax bounds engine.command_ring_slots and event_ring_slots.
	RingSlotsMax = 1 << 22
	// CompIDLengthMax bounds a CompID, the client's and the venue's (both
	// name the session's FIX store file).
	CompIDLengthMax = 64
)

// ValidSymbol reports whether s may be an instrument's symbol: 1 to
// venue.SymbolLength printable ASCII characters without space or '=' (the
// configuration and the admin API ask the same).
func ValidSymbol(s string) bool { return validName(s, venue.SymbolLength) }

// DotSegment reports whether s is "." or "..", which cannot name an
// instrument or a session: a browser (WHATWG URL) resolves such a segment,
// percent-encoded or not, as the current or the parent path, so the
// console's pages and the admin API's paths could not reach it (README
// "Operating the venue").
func DotSegment(s string) bool { return s == "." || s == ".." }

// validName reports whether s is 1 to max printable ASCII characters
// without space or '=', as a CompID and a symbol must be (the admin API
// asks the same of a symbol).
func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '=' {
			return false
		}
	}
	return true
}

// countError is the error of a list (key) of n entries that must hold 1 to
// entriesMax of them (entry names one), or nil.
func countError(key, entry string, n, entriesMax int) error {
	switch {
	case n == 0:
		return fmt.Errorf("%s: at least one %s is needed", key, entry)
	case n > entriesMax:
		return fmt.Errorf("%s: %d %ss, at most %d", key, n, entry, entriesMax)
	}
	return nil
}

// throttleErrors names each throttle limit of the table key that is
// negative: 0 means no limit, and the gateway takes any limit below 1 as
// none, so a negative one in session_defaults turned every session's
// throttle off without a word.
func throttleErrors(key string, ordersPerSecond, cancelsPerSecond, messagesPerSecond int) []error {
	var errs []error
	for _, l := range []struct {
		name  string
		value int
	}{{"orders_per_second_reject", ordersPerSecond}, {"cancels_per_second_reject", cancelsPerSecond},
		{"messages_per_second_logout", messagesPerSecond}} {
		if l.value < 0 {
			errs = append(errs, fmt.Errorf("%s.%s: %d is negative (0 means no limit)", key, l.name, l.value))
		}
	}
	return errs
}

func (c *Config) validateSessions() []error {
	var errs []error
	if err := countError("session", "session", len(c.Sessions), SessionsMax); err != nil {
		errs = append(errs, err)
	}
	for _, k := range slices.Sorted(maps.Keys(c.SessionDefaults.QuickFIX)) {
		if why := quickFIXKeyRefused(k); why != "" {
			errs = append(errs, fmt.Errorf("session_defaults.quickfix.%s: %s", k, why))
		}
	}
	errs = append(errs, quickFIXValueErrors("session_defaults", c.SessionDefaults.QuickFIX)...)
	errs = append(errs, sourceErrors("session_defaults", c.SessionDefaults.AllowedSourceAddresses)...)
	errs = append(errs, quickFIXPairErrors("session_defaults", c.SessionDefaults.QuickFIX, nil, true)...)
	d := &c.SessionDefaults
	errs = append(errs, throttleErrors("session_defaults", d.OrdersPerSecondReject, d.CancelsPerSecondReject, d.MessagesPerSecondLogout)...)
	errs = append(errs, openOrdersMaxErrors("session_defaults", d.OpenOrdersMax)...)
	seen := map[string]int{}
	for i := range c.Sessions {
		s := &c.Sessions[i]
		key := fmt.Sprintf("session[%d]", i)
		if !validName(s.CompID, CompIDLengthMax) {
			errs = append(errs, fmt.Errorf("%s.comp_id: %q is not 1 to %d printable ASCII characters without space or '='", key, s.CompID, CompIDLengthMax))
		} else if s.CompID == c.Venue.SenderCompID {
			errs = append(errs, fmt.Errorf("%s.comp_id: %q is the venue's own (venue.sender_comp_id)", key, s.CompID))
		} else if DotSegment(s.CompID) {
			errs = append(errs, fmt.Errorf("%s.comp_id: %q cannot be named in a URL path (a browser reads it as the current or the parent path), so the console and the admin API could not reach it", key, s.CompID))
		}
		// The venue's CompID on the session is in every message and names
		// the session's FIX store file, as the client's is: one with a
		// control character (SOH) was taken for a session no Logon could
		// name, and a long one failed the start after the journal's
		// replay ("file name too long").
		if s.SenderCompID != "" && !validName(s.SenderCompID, CompIDLengthMax) {
			errs = append(errs, fmt.Errorf("%s.venue_comp_id: %q is not 1 to %d printable ASCII characters without space or '='", key, s.SenderCompID, CompIDLengthMax))
		}
		// One session per client CompID, whatever the venue's CompID: the
		// edge's credentials, the admin API and risk name a session by it.
		if j, dup := seen[s.CompID]; dup {
			errs = append(errs, fmt.Errorf("%s.comp_id: %q repeats session[%d] (a client CompID names one session, "+
				"whichever venue_comp_id each gives)", key, s.CompID, j))
		}
		seen[s.CompID] = i
		for _, k := range slices.Sorted(maps.Keys(s.QuickFIX)) {
			if why := quickFIXKeyRefused(k); why != "" {
				errs = append(errs, fmt.Errorf("%s.quickfix.%s: %s", key, k, why))
			}
		}
		errs = append(errs, quickFIXValueErrors(key, s.QuickFIX)...)
		errs = append(errs, quickFIXPairErrors(key, c.QuickFIXSettings(s), s.QuickFIX, false)...)
		errs = append(errs, sourceErrors(key, s.AllowedSourceAddresses)...)
		errs = append(errs, throttleErrors(key, s.OrdersPerSecondReject, s.CancelsPerSecondReject, s.MessagesPerSecondLogout)...)
		errs = append(errs, openOrdersMaxErrors(key, s.OpenOrdersMax)...)
		errs = append(errs, accountErrors(key, s)...)
	}
	return errs
}

// accountErrors checks a session's accounts: each 1 to AccountBytesMax
// characters, once, and none on a drop-copy session, which enters no orders.
func accountErrors(key string, s *Session) []error {
	if len(s.Accounts) > 0 && s.IsDropCopy() {
		return []error{fmt.Errorf("%s.accounts: a drop-copy session enters no orders (its copies are chosen by copy_accounts)", key)}
	}
	return accountListErrors(key+".accounts", s.Accounts)
}

// accountListErrors checks a list of accounts (a session's, a drop-copy
// grant's), field naming it: each 1 to AccountBytesMax characters, once.
func accountListErrors(field string, list []string) []error {
	var errs []error
	seen := make(map[string]bool, len(list))
	for _, acct := range list {
		if acct == "" || len(acct) > AccountBytesMax {
			errs = append(errs, fmt.Errorf("%s: %q is not an account of 1 to %d characters", field, acct, AccountBytesMax))
		} else if seen[acct] {
			errs = append(errs, fmt.Errorf("%s: %q appears twice", field, acct))
		}
		seen[acct] = true
	}
	return errs
}

func (c *Config) validateInstruments() []error {
	var errs []error
	if err := countError("instrument", "instrument", len(c.Instruments), InstrumentsMax); err != nil {
		errs = append(errs, err)
	}
	ids, syms := map[uint32]int{}, map[string]int{}
	for i := range c.Instruments {
		in := &c.Instruments[i]
		key := fmt.Sprintf("instrument[%d]", i)
		if in.ID == 0 {
			errs = append(errs, fmt.Errorf("%s.id: must be positive", key))
		}
		if j, dup := ids[in.ID]; dup {
			errs = append(errs, fmt.Errorf("%s.id: %d repeats instrument[%d]", key, in.ID, j))
		}
		ids[in.ID] = i
		if !ValidSymbol(in.Symbol) {
			errs = append(errs, fmt.Errorf("%s.symbol: %q is not 1 to %d printable ASCII characters without space or '='", key, in.Symbol, venue.SymbolLength))
		}
		if DotSegment(in.Symbol) {
			errs = append(errs, fmt.Errorf("%s.symbol: %q cannot be named in a URL path (a browser reads it as the current or the parent path), so the console and the admin API could not reach it", key, in.Symbol))
		}
		if strings.EqualFold(in.Symbol, "all") {
			errs = append(errs, fmt.Errorf("%s.symbol: %q is reserved: ALL in FIX (TradingSessionID) and all in the admin API mean every instrument", key, in.Symbol))
		}
		if j, dup := syms[in.Symbol]; dup {
			errs = append(errs, fmt.Errorf("%s.symbol: %q repeats instrument[%d]", key, in.Symbol, j))
		}
		syms[in.Symbol] = i
		// A bad tick_size leaves the reference price unread (it is a
		// number of ticks), not the instrument's other keys: each error is
		// reported at once.
		refOK := false
		if tick, err := decimal.ParseTick(in.TickSize); err != nil {
			errs = append(errs, fmt.Errorf("%s.tick_size: %w", key, err))
		} else {
			in.Tick = tick
			if err := refPriceError(in, tick); err != nil {
				errs = append(errs, fmt.Errorf("%s.ref_price: %w", key, err))
			} else {
				refOK = true
			}
		}
		if in.VolatilityBandTicks < 0 || in.VolatilityAuction.Duration < 0 {
			errs = append(errs, fmt.Errorf("%s.volatility_band_ticks and volatility_auction: must not be negative", key))
		}
		if in.CallExtension != nil && *in.CallExtension && in.VolatilityBandTicks == 0 {
			errs = append(errs, fmt.Errorf("%s.call_extension: a call is extended when its uncross would print outside volatility_band_ticks, which is 0 (none)", key))
		}
		if in.LotSize <= 0 {
			errs = append(errs, fmt.Errorf("%s.lot_size: must be positive", key))
		}
		if in.MinQty <= 0 || in.MaxQty < in.MinQty {
			errs = append(errs, fmt.Errorf("%s.min_qty, max_qty: need 0 < min_qty <= max_qty", key))
		} else if in.LotSize > 0 && (in.MinQty%in.LotSize != 0 || in.MaxQty%in.LotSize != 0) {
			// An order's quantity is a whole number of lots: bounds between
			// lots would be published (SecurityList) but never reachable.
			errs = append(errs, fmt.Errorf("%s.min_qty, max_qty: %d and %d must be multiples of lot_size %d", key, in.MinQty, in.MaxQty, in.LotSize))
		}
		if qtyMax := c.qtyMax(); qtyMax > 0 && in.MaxQty > qtyMax {
			errs = append(errs, fmt.Errorf("%s.max_qty: %d is above %d, the most whose sums (a price level's depth, the day's volume) over engine.orders_max + engine.clordids_max + 1 orders fit an int64 (a smaller max_qty, or fewer orders_max and clordids_max)",
				key, in.MaxQty, qtyMax))
		}
		if in.BandPercent <= 0 || in.BandPercent >= 100 {
			errs = append(errs, fmt.Errorf("%s.band_percent: %d is outside (0, 100)", key, in.BandPercent))
		} else if refOK {
			errs = append(errs, bandErrors(key, in)...)
		}
		if in.Status == 0 {
			in.Status = venue.TradingStatusOpen
		}
	}
	return errs
}

// qtyMax is core.MaxQtyFor the engine's bounds, 0 while they are invalid
// (refused on their own keys).
func (c *Config) qtyMax() int64 {
	e := &c.Engine
	if e.OrdersMax <= 0 || e.OrdersMax > core.OrdersMaxLimit || e.ClOrdIDsMax < e.OrdersMax || e.ClOrdIDsMax > core.ClOrdIDsMaxLimit {
		return 0
	}
	return core.MaxQtyFor(e.OrdersMax, e.ClOrdIDsMax)
}

// refPriceError reads in's ref_price in ticks of tick into
// in.RefPriceTicks, saying what is wrong with it if anything
// (RefPriceTicks).
func refPriceError(in *Instrument, tick decimal.Tick) error {
	ref, err := RefPriceTicks(in.RefPrice, in.TickSize, tick)
	if err != nil {
		return err
	}
	in.RefPriceTicks = ref
	return nil
}

// RefPriceTicks reads a reference price (a configured ref_price, or one an
// admin API call gives) in ticks of tick, whose text is tickSize, saying
// what is wrong with it if anything: too large a price was "not a positive
// multiple of tick_size", as a price off the tick is, which sent an
// operator looking at the wrong digits.
func RefPriceTicks(price, tickSize string, tick decimal.Tick) (int64, error) {
	ref, err := decimal.ParseTicks([]byte(price), tick)
	switch {
	case errors.Is(err, decimal.ErrSyntax):
		return 0, fmt.Errorf("%q is not a decimal number", price)
	case errors.Is(err, decimal.ErrOffTick):
		return 0, fmt.Errorf("%q is not a multiple of tick_size %s", price, tickSize)
	case err != nil && !strings.HasPrefix(price, "-"):
		return 0, fmt.Errorf("%q is too large: more than %d ticks of tick_size %s", price, int64(core.RefPriceTicksMax), tickSize)
	case err != nil || ref <= 0:
		return 0, fmt.Errorf("%q is not positive", price)
	case ref > core.RefPriceTicksMax:
		return 0, fmt.Errorf("%s is %d ticks of tick_size %s, more than %d", price, ref, tickSize, int64(core.RefPriceTicksMax))
	}
	return ref, nil
}

// bandErrors checks what the matcher asks of a configured instrument's
// price band (core.NewMatcher), naming the key: the matcher's own refusal
// came after the data directory was made and locked, in its words
// ("RefPriceTicks", "LevelsPerSideMax", "MaxQty") and with neither the
// file nor the key. in's tick, reference price (refPriceError) and band
// percent are valid.
func bandErrors(key string, in *Instrument) []error {
	ref := in.RefPriceTicks
	low, high := core.BandTicks(ref, in.BandPercent)
	// Each tick of the band is a price level of each side of the book,
	// allocated at start (core/doc.go, "Limits").
	if levels := high - low + 1; levels > core.LevelsPerSideMaxDefault {
		return []error{fmt.Errorf("%s.band_percent: %d%% around ref_price %s spans %d ticks of tick_size %s, more than the %d price levels a side of a book may hold (a narrower band or a coarser tick_size)",
			key, in.BandPercent, in.RefPrice, levels, in.TickSize, core.LevelsPerSideMaxDefault)}
	}
	// An order's notional, at most max_qty at the band's top, is at most
	// the largest risk limit (core.OrderNotionalMax).
	if in.MaxQty > 0 && in.MaxQty > core.MaxQtyAt(high) {
		return []error{fmt.Errorf("%s.max_qty: %d at the band's top price (%d ticks of tick_size %s) puts an order's notional above %d, the largest (price ticks x quantity, as the largest risk limit): max_qty at most %d",
			key, in.MaxQty, high, in.TickSize, int64(core.OrderNotionalMax), core.MaxQtyAt(high))}
	}
	return nil
}

// SourcePrefix reads one of allowed_source_addresses: a CIDR network, or
// an IP (the network of that address alone). The configuration and the
// FIX edge (server.EdgeConfig) read them with it, so that what Load
// takes the edge takes: session_defaults' list was not checked here, and
// a bad entry stopped the start after the replay, named as a session's
// under fix.addr.
func SourcePrefix(a string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(a)
	if err != nil {
		addr, aerr := netip.ParseAddr(a)
		if aerr != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP or CIDR", a)
		}
		p = netip.PrefixFrom(addr, addr.BitLen())
	}
	return p, nil
}

// sourceErrors checks the allowed_source_addresses of key.
func sourceErrors(key string, sources []string) []error {
	var errs []error
	for _, a := range sources {
		if _, err := SourcePrefix(a); err != nil {
			errs = append(errs, fmt.Errorf("%s.allowed_source_addresses: %w", key, err))
		}
	}
	return errs
}

// ExtendsCalls reports whether the instrument's opening and closing calls are
// extended when their uncross would print outside its dynamic band: with a
// band, unless call_extension is false.
func (in *Instrument) ExtendsCalls() bool {
	return in.VolatilityBandTicks > 0 && (in.CallExtension == nil || *in.CallExtension)
}

// CancelOnDisconnect reports the session's effective cancel-on-disconnect setting.
func (c *Config) CancelOnDisconnect(s *Session) bool {
	if s.CancelOnDisconnect != nil {
		return *s.CancelOnDisconnect
	}
	if c.SessionDefaults.CancelOnDisconnect != nil {
		return *c.SessionDefaults.CancelOnDisconnect
	}
	return false
}

// Throttles returns the session's effective limits (0 means unlimited).
func (c *Config) Throttles(s *Session) (ordersPerSecond, cancelsPerSecond, messagesPerSecondLogout int) {
	pick := func(own, def int) int {
		if own != 0 {
			return own
		}
		return def
	}
	return pick(s.OrdersPerSecondReject, c.SessionDefaults.OrdersPerSecondReject),
		pick(s.CancelsPerSecondReject, c.SessionDefaults.CancelsPerSecondReject),
		pick(s.MessagesPerSecondLogout, c.SessionDefaults.MessagesPerSecondLogout)
}

// OpenOrdersMax returns the bound on the session's open orders (0: none):
// its own open_orders_max, else session_defaults', else a quarter of
// engine.orders_max. The matcher's pool is every session's: without a
// bound of its own, one session (a runaway algorithm) could rest orders
// until the pool is full and every other session's orders are refused; a
// quarter leaves the others three quarters of it, and is far above what
// a session of the demo, the benchmarks or the conformance suite holds.
func (c *Config) OpenOrdersMax(s *Session) int {
	switch {
	case s.OpenOrdersMax != nil:
		return *s.OpenOrdersMax
	case c.SessionDefaults.OpenOrdersMax != nil:
		return *c.SessionDefaults.OpenOrdersMax
	}
	return OpenOrdersMaxDefault(c.Engine.OrdersMax)
}

// OpenOrdersMaxDefault is a session's open-order bound when the
// configuration gives none: a quarter of engine.orders_max, at least 1.
func OpenOrdersMaxDefault(ordersMax int) int { return max(ordersMax/4, 1) }

// openOrdersMaxErrors names a negative open_orders_max of the table key
// (0 means no bound).
func openOrdersMaxErrors(key string, v *int) []error {
	if v != nil && *v < 0 {
		return []error{fmt.Errorf("%s.open_orders_max: %d is negative (0 means no bound)", key, *v)}
	}
	return nil
}

// QuickFIXSettings returns the session's QuickFIX settings: defaults overlaid by its own.
func (c *Config) QuickFIXSettings(s *Session) map[string]string {
	out := make(map[string]string, len(c.SessionDefaults.QuickFIX)+len(s.QuickFIX))
	for k, v := range c.SessionDefaults.QuickFIX {
		out[k] = v
	}
	for k, v := range s.QuickFIX {
		out[k] = v
	}
	return out
}

// VenueCompID returns the venue's CompID on this session.
func (c *Config) VenueCompID(s *Session) string {
	if s.SenderCompID != "" {
		return s.SenderCompID
	}
	return c.Venue.SenderCompID
}
