package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	_ "time/tzdata" // schedule.time_zone must resolve on hosts without a zoneinfo database

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// This file holds the configuration of operations: the admin API ([admin])
// and the trading day ([schedule]). README "Operating the venue" shows both.

// Admin configures the admin HTTP API.
type Admin struct {
	// Addr is the admin listener; "" turns the API off. It must be a
	// loopback address unless TLS is configured.
	Addr            string `toml:"addr"`
	TLSCertFile     string `toml:"tls_cert_file"`
	TLSKeyFile      string `toml:"tls_key_file"`
	TLSClientCAFile string `toml:"tls_client_ca_file"`
	// BodyBytesMax bounds a request body; a larger one is refused (413).
	BodyBytesMax int `toml:"body_bytes_max"`
	// CallTimeout bounds how long a call waits for its command to be
	// applied and durable.
	CallTimeout Duration `toml:"call_timeout"`
	// Tokens are the bearer tokens that may call the API, stored as the
	// SHA-256 of the token (`fixvenue admin hash-token` prints it).
	Tokens []AdminToken `toml:"token"`
	// Console configures the web console served on the admin address.
	Console Console `toml:"console"`
}

// Console configures the operators' web console (package console).
type Console struct {
	// Enabled serves the console's pages on the admin address.
	Enabled bool `toml:"enabled"`
	// UpdatesPerSecond bounds the updates one browser's event stream gets;
	// changes in between are coalesced into the next update.
	UpdatesPerSecond int `toml:"updates_per_second"`
	// StreamsMax bounds the event streams open at once (all browsers).
	StreamsMax int `toml:"streams_max"`
	// WriteTimeout bounds one update's write to a browser; a browser that
	// does not read for this long is dropped.
	WriteTimeout Duration `toml:"write_timeout"`
}

// Bounds of the console configuration.
const (
	ConsoleUpdatesPerSecondMax = 50
	ConsoleStreamsLimit        = 1024
)

// Enabled reports whether the admin listener runs: it needs an address.
// Without an operator token every change is refused (see Roles).
func (a *Admin) Enabled() bool { return a.Addr != "" }

// OperatorTokens counts the tokens that may change things.
func (a *Admin) OperatorTokens() int {
	n := 0
	for _, t := range a.Tokens {
		if t.Role != RoleRead {
			n++
		}
	}
	return n
}

// Admin token roles: an operator token may read and change; a read token
// may only read (the console's pages and the API's GET calls).
const (
	RoleOperator = "operator"
	RoleRead     = "read"
)

// AdminToken is one operator's bearer token, hashed.
type AdminToken struct {
	Operator string `toml:"operator"`
	SHA256   string `toml:"sha256"`
	// Role is "operator" (the default) or "read".
	Role string `toml:"role"`
}

// Bounds of the admin configuration.
const (
	AdminTokensMax      = 256
	AdminBodyBytesLimit = 1 << 20
)

// emptyTokenSHA256 is the SHA-256 of the empty string, never a token a
// call can give.
const emptyTokenSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// publicTokens are the tokens the project publishes, by SHA-256: the
// cluster demo's operator token is written in README and deploy/cluster
// for the loopback demo, so anyone holds it. A node may keep it only while
// every listener that takes a token (the admin API, a cluster node's
// status listener) is on loopback.
var publicTokens = map[string]string{
	"a3b168c6973e4775298b1209c7c605ef80cba952ca6e32f822f8ab418fd43c1b": "cluster-demo-operator-token",
}

// publicTokenErrors refuses a public token (any role: it reads every order
// too) when listener, the address at key, is reachable beyond loopback.
func (a *Admin) publicTokenErrors(key, listener string) []error {
	if host, _, err := net.SplitHostPort(listener); err != nil || IsLoopback(host) {
		return nil // none, on loopback, or malformed (an error of its own)
	}
	var errs []error
	for i, t := range a.Tokens {
		if name, ok := publicTokens[strings.ToLower(t.SHA256)]; ok {
			errs = append(errs, fmt.Errorf("admin.token[%d].sha256: is the public demo token %q (README), and %s %q is reachable "+
				"beyond loopback, where anyone who read it could use it: give a token of your own (fixvenue admin hash-token) "+
				"or keep %s on loopback", i, name, key, listener, key))
		}
	}
	return errs
}

// Schedule configures the trading day. Times are offsets from the start of
// the day in the venue's time zone, as Go durations ("7h50m" is 07:50).
type Schedule struct {
	Enabled bool `toml:"enabled"`
	// TimeZone is the venue's IANA time zone ("Europe/London").
	TimeZone string `toml:"time_zone"`
	// Day is the length of a trading day: 24h (the default) for calendar
	// days in TimeZone. A shorter day ("6s") runs compressed days back to
	// back from the Unix epoch, for tests and demonstrations; trading days
	// and holidays then do not apply.
	Day Duration `toml:"day"`
	// TradingDays are the weekdays that trade ("Mon" … "Sun"); default
	// Monday to Friday.
	TradingDays []string `toml:"trading_days"`
	// Holidays are dates (YYYY-MM-DD) that do not trade.
	Holidays []string `toml:"holidays"`
	// EndOfDay is when the venue's day ends: DAY orders expire, the day's
	// ClOrdIDs are forgotten, a snapshot is written and the journal
	// segments before it are archived. It is after every group's close.
	EndOfDay Duration        `toml:"end_of_day"`
	Groups   []ScheduleGroup `toml:"group"`
}

// ScheduleGroup gives the phases of a group of instruments.
type ScheduleGroup struct {
	Name string `toml:"name"`
	// Instruments are symbols; empty means every instrument in no other group.
	Instruments []string `toml:"instruments"`
	// PreOpen: the opening call (orders and cancels accepted, no matching),
	// which uncrosses at Open; Open: continuous trading; ClosingCall, when
	// set (after Open, before Close): the closing call, which uncrosses at
	// Close; Close: closed. See "Auctions" in core/doc.go.
	PreOpen     Duration `toml:"pre_open"`
	Open        Duration `toml:"open"`
	ClosingCall Duration `toml:"closing_call"`
	Close       Duration `toml:"close"`
}

// ScheduleGroupsMax bounds schedule.group.
const ScheduleGroupsMax = 256

var weekdayNames = map[string]time.Weekday{"Sun": time.Sunday, "Mon": time.Monday, "Tue": time.Tuesday,
	"Wed": time.Wednesday, "Thu": time.Thursday, "Fri": time.Friday, "Sat": time.Saturday}

// Weekdays returns the schedule's trading days (validated).
func (s *Schedule) Weekdays() map[time.Weekday]bool {
	days := s.TradingDays
	if len(days) == 0 {
		days = []string{"Mon", "Tue", "Wed", "Thu", "Fri"}
	}
	out := make(map[time.Weekday]bool, len(days))
	for _, d := range days {
		out[weekdayNames[d]] = true
	}
	return out
}

// Location returns the schedule's time zone (validated).
func (s *Schedule) Location() *time.Location {
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// DayLength returns the length of a day (24h unless compressed).
func (s *Schedule) DayLength() time.Duration {
	if s.Day.Duration == 0 {
		return 24 * time.Hour
	}
	return s.Day.Duration
}

// validateOperations checks [admin] and [schedule].
func (c *Config) validateOperations() []error {
	errs := c.Admin.validate()
	if c.Schedule.Enabled {
		errs = append(errs, c.Schedule.validate(c.Instruments)...)
	}
	return errs
}

// Validate checks the admin section alone (after a command-line override).
func (a *Admin) Validate() []error { return a.validate() }

func (a *Admin) validate() []error {
	var errs []error
	add := func(format string, v ...any) { errs = append(errs, fmt.Errorf(format, v...)) }
	if a.BodyBytesMax <= 0 || a.BodyBytesMax > AdminBodyBytesLimit {
		add("admin.body_bytes_max: %d is outside [1, %d]", a.BodyBytesMax, AdminBodyBytesLimit)
	}
	if a.CallTimeout.Duration <= 0 {
		add("admin.call_timeout: must be positive")
	}
	if (a.TLSCertFile == "") != (a.TLSKeyFile == "") {
		add("admin.tls_cert_file, admin.tls_key_file: give both or neither")
	}

	if a.TLSClientCAFile != "" && a.TLSCertFile == "" {
		add("admin.tls_client_ca_file: client certificates need admin.tls_cert_file")
	}
	if a.Addr != "" {
		host, _, err := net.SplitHostPort(a.Addr)
		switch {
		case err != nil:
			add("admin.addr: %v", err)
		case a.TLSCertFile == "" && !IsLoopback(host):
			add("admin.addr: %q is not a loopback address; the admin API listens elsewhere only with TLS (admin.tls_cert_file)", a.Addr)
		}
	}
	if c := a.Console; c.UpdatesPerSecond < 1 || c.UpdatesPerSecond > ConsoleUpdatesPerSecondMax {
		add("admin.console.updates_per_second: %d is outside [1, %d]", c.UpdatesPerSecond, ConsoleUpdatesPerSecondMax)
	}
	if c := a.Console; c.StreamsMax < 1 || c.StreamsMax > ConsoleStreamsLimit {
		add("admin.console.streams_max: %d is outside [1, %d]", c.StreamsMax, ConsoleStreamsLimit)
	}
	if a.Console.WriteTimeout.Duration <= 0 {
		add("admin.console.write_timeout: must be positive")
	}
	if len(a.Tokens) > AdminTokensMax {
		add("admin.token: %d tokens, at most %d", len(a.Tokens), AdminTokensMax)
	}
	seen := map[string]bool{}
	for i, t := range a.Tokens {
		key := fmt.Sprintf("admin.token[%d]", i)
		if t.Operator == "" || len(t.Operator) > venue.OperatorNameLength || strings.IndexFunc(t.Operator, notPrintableASCII) >= 0 {
			add("%s.operator: %q must be 1 to %d printable ASCII characters", key, t.Operator, venue.OperatorNameLength)
		}
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != 32 {
			add("%s.sha256: want the 64 hex digits of the token's SHA-256 (fixvenue admin hash-token)", key)
		} else if strings.EqualFold(t.SHA256, emptyTokenSHA256) {
			// The API refuses an empty bearer token as missing: this
			// operator could never be let in.
			add("%s.sha256: is the SHA-256 of an empty token, which no call can give (hash the token itself: fixvenue admin hash-token TOKEN)", key)
		}
		if t.Role != "" && t.Role != RoleOperator && t.Role != RoleRead {
			add("%s.role: %q is not %q or %q", key, t.Role, RoleOperator, RoleRead)
		}
		if seen[strings.ToLower(t.SHA256)] {
			add("%s.sha256: the same token is given twice", key)
		}
		seen[strings.ToLower(t.SHA256)] = true
	}
	errs = append(errs, a.publicTokenErrors("admin.addr", a.Addr)...)
	return errs
}

func notPrintableASCII(r rune) bool { return r <= ' ' || r > '~' }

// IsLoopback reports whether host names only the loopback interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Schedule) validate(instruments []Instrument) []error {
	var errs []error
	add := func(format string, v ...any) { errs = append(errs, fmt.Errorf(format, v...)) }
	if s.TimeZone == "" {
		add("schedule.time_zone: give the venue's IANA time zone (e.g. \"Europe/London\")")
	} else if s.TimeZone == "Local" {
		// time.LoadLocation takes "Local" for the process's own zone (the
		// TZ variable, /etc/localtime): a restart under a service manager,
		// or a cluster's other node, would run the day at other instants.
		add("schedule.time_zone: \"Local\" is the zone of the process's environment, not an IANA time zone; name the venue's (e.g. \"Europe/London\")")
	} else if _, err := time.LoadLocation(s.TimeZone); err != nil {
		add("schedule.time_zone: %q is not a known IANA time zone", s.TimeZone)
	}
	day := s.DayLength()
	if day <= 0 || day > 24*time.Hour || (day < 24*time.Hour && day < time.Second) {
		add("schedule.day: %s is outside [1s, 24h]", s.Day.Duration)
	}
	if s.TradingDays != nil && len(s.TradingDays) == 0 {
		// An empty list would trade no day, and Weekdays takes it for the
		// key left out: the operator who wrote it meant neither.
		add("schedule.trading_days: the list is empty, so no day would trade; list the weekdays, or leave the key out for Monday to Friday")
	}
	for i, d := range s.TradingDays {
		if _, ok := weekdayNames[d]; !ok {
			add("schedule.trading_days[%d]: %q is not Mon, Tue, Wed, Thu, Fri, Sat or Sun", i, d)
		}
	}
	for i, h := range s.Holidays {
		if _, err := time.Parse(time.DateOnly, h); err != nil {
			add("schedule.holidays[%d]: %q is not a YYYY-MM-DD date", i, h)
		}
	}
	if s.EndOfDay.Duration <= 0 || s.EndOfDay.Duration >= day {
		add("schedule.end_of_day: %s must be after the start of the day and before its end (%s)", s.EndOfDay.Duration, day)
	}
	if err := countError("schedule.group", "group", len(s.Groups), ScheduleGroupsMax); err != nil {
		errs = append(errs, err)
	}
	known := map[string]bool{}
	for _, in := range instruments {
		known[in.Symbol] = true
	}
	owner := map[string]int{}
	catchAll := -1
	names := map[string]int{}
	for i, g := range s.Groups {
		key := fmt.Sprintf("schedule.group[%d]", i)
		if g.Name == "" {
			add("%s.name: must not be empty", key)
		} else if j, ok := names[g.Name]; ok {
			add("%s.name: %q repeats schedule.group[%d] (the admin API names a group by it)", key, g.Name, j)
		}
		names[g.Name] = i
		if g.PreOpen.Duration < 0 {
			add("%s.pre_open: %s is before the start of the day (want a time of day from 0)", key, g.PreOpen.Duration)
		} else if !(g.PreOpen.Duration < g.Open.Duration && g.Open.Duration < g.Close.Duration) {
			add("%s: want pre_open < open < close, have %s, %s, %s (phases overlap)", key, g.PreOpen.Duration, g.Open.Duration, g.Close.Duration)
		}
		if cc := g.ClosingCall.Duration; cc != 0 && !(g.Open.Duration < cc && cc < g.Close.Duration) {
			add("%s.closing_call: want open < closing_call < close, have %s, %s, %s", key, g.Open.Duration, cc, g.Close.Duration)
		}
		if g.Close.Duration > s.EndOfDay.Duration {
			add("%s.close: %s is after schedule.end_of_day %s", key, g.Close.Duration, s.EndOfDay.Duration)
		}
		if len(g.Instruments) == 0 {
			if catchAll >= 0 {
				add("%s.instruments: schedule.group[%d] already takes every other instrument", key, catchAll)
			}
			catchAll = i
		}
		for _, sym := range g.Instruments {
			if !known[sym] {
				add("%s.instruments: %q is not a configured instrument", key, sym)
			}
			if j, dup := owner[sym]; dup {
				add("%s.instruments: %q is already in schedule.group[%d]", key, sym, j)
			}
			owner[sym] = i
		}
	}
	return errs
}

// ErrNoGroup is returned by GroupOf for an instrument no group covers.
var ErrNoGroup = errors.New("no schedule group covers the instrument")

// GroupOf returns the index of the schedule group that covers symbol.
func (s *Schedule) GroupOf(symbol string) (int, error) {
	catchAll := -1
	for i, g := range s.Groups {
		if len(g.Instruments) == 0 {
			catchAll = i
		}
		for _, sym := range g.Instruments {
			if sym == symbol {
				return i, nil
			}
		}
	}
	if catchAll < 0 {
		return 0, fmt.Errorf("%s: %w", symbol, ErrNoGroup)
	}
	return catchAll, nil
}

// InClear reports whether listener, a cluster node's status_addr, serves
// plain HTTP beyond loopback: without admin.tls_cert_file, whose
// certificate the status listener serves TLS with, a token sent to it
// crosses the network in clear.
func (a *Admin) InClear(listener string) bool {
	if a.TLSCertFile != "" {
		return false
	}
	host, _, err := net.SplitHostPort(listener)
	return err == nil && !IsLoopback(host)
}
