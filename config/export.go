package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Export configures the event export to NATS JetStream (package
// eventstream). With Enabled and no NATSURL the venue runs an embedded NATS
// server with JetStream on EmbeddedAddr (loopback), storing in
// <data_dir>/nats: one switch for a single-node setup.
type Export struct {
	Enabled bool `toml:"enabled"`
	// NATSURL is an external NATS server or cluster (comma-separated URLs).
	NATSURL string `toml:"nats_url"`
	// Credentials for an external NATS: a .creds file, or user and
	// password, or a token.
	CredsFile string `toml:"creds_file"`
	User      string `toml:"user"`
	Password  string `toml:"password"`
	Token     string `toml:"token"`
	// TLS to an external NATS: the CA that signs its certificate, and a
	// client certificate and key when it asks for one.
	TLSCAFile   string `toml:"tls_ca_file"`
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	// EmbeddedAddr is where the embedded server listens (port 0: any), a
	// loopback address.
	EmbeddedAddr string `toml:"embedded_addr"`
	// Format of the payload: "sbe" or "json".
	Format string `toml:"format"`
	// SubjectPrefix starts every subject: <prefix>.<venue>.<kind>[.<symbol>].
	SubjectPrefix string `toml:"subject_prefix"`
	// Venue names the venue in subjects and the stream (default: venue.sender_comp_id).
	Venue string `toml:"venue"`
	// Stream is the JetStream stream (default: FIXVENUE_<venue>).
	Stream string `toml:"stream"`
	// PublishWindow bounds the events published before the exporter waits
	// for the stream's acknowledgements.
	PublishWindow int `toml:"publish_window"`
	// TapEvents bounds the committed events the exporter may be behind the
	// matcher before it catches up from the journal (a power of two).
	TapEvents int `toml:"tap_events"`
	// BatchInterval is how often the exporter takes the committed events
	// and publishes them, as batches (eventstream/doc.go, "Messages"):
	// longer gives fewer, larger messages and acks, for less CPU, and a
	// stream that follows the venue later.
	BatchInterval Duration `toml:"batch_interval"`
}

// BatchIntervalMax and BatchIntervalMin bound export.batch_interval: each
// interval the exporter looks for committed events, so "1us" kept a CPU
// busy polling.
const (
	BatchIntervalMax = time.Second
	BatchIntervalMin = time.Millisecond
)

// StreamNameBytesMax is the longest stream name JetStream creates
// (nats-server's JSMaxNameLen).
const StreamNameBytesMax = 255

// PublishWindowMax bounds export.publish_window.
const PublishWindowMax = 1 << 16

// TapEventsMin and TapEventsMax bound export.tap_events.
const (
	TapEventsMin = 256
	TapEventsMax = 1 << 22
)

// Embedded reports whether the venue runs its own NATS server.
func (e Export) Embedded() bool { return e.Enabled && e.NATSURL == "" }

// natsToken reports whether s is usable as a NATS subject token (no dots,
// wildcards or white space).
func natsToken(s string) bool { return s != "" && !strings.ContainsAny(s, ".*> \t\r\n") }

// SubjectToken is an instrument's symbol as the last token of its event
// subjects: '.', '*', '>' and white space, which NATS reads as separators
// and wildcards, become '_'. Two symbols with one token share their
// subjects, so with export on the venue refuses to list both
// (SubjectTokens).
func SubjectToken(sym string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r <= ' ' {
			return '_'
		}
		return r
	}, sym)
}

// NoInstrumentToken is the subject token of the events of no instrument (a
// mass cancel over every instrument, an operator's command of none): an
// instrument whose symbol has this token (_, *, >) would share their
// subjects, so with the export on it is refused as a collision is.
const NoInstrumentToken = "_"

// SubjectTokens finds the symbols that share a subject token, in one pass
// over a list of instruments (a map of tokens: comparing every pair took
// 0.4 s at 4,096 instruments). Its zero value is not usable: make one.
type SubjectTokens map[string][2]string // token: the first two symbols added with it

// Add returns the first symbol added before sym whose subject token is
// sym's, or "" when none is (sym itself does not count), and adds sym.
func (t SubjectTokens) Add(sym string) (other string) {
	tok := SubjectToken(sym)
	first := t[tok]
	if other = first[0]; other == sym {
		// A symbol listed twice (refused as such) is not a collision:
		// the next symbol of the token, if any, is.
		other = first[1]
	}
	switch {
	case first[0] == "":
		first[0] = sym
	case first[1] == "" && first[0] != sym:
		first[1] = sym
	}
	t[tok] = first
	return other
}

// ExportVenue is the venue's name in subjects and the stream name.
func (c *Config) ExportVenue() string {
	if c.Export.Venue != "" {
		return c.Export.Venue
	}
	return c.Venue.SenderCompID
}

// ExportStream is the JetStream stream the events go to.
func (c *Config) ExportStream() string {
	if c.Export.Stream != "" {
		return c.Export.Stream
	}
	return "FIXVENUE_" + c.ExportVenue()
}

func (c *Config) validateExport() []error {
	e := &c.Export
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if e.Format != "sbe" && e.Format != "json" {
		add("export.format: %q is not sbe or json", e.Format)
	}
	if !natsToken(e.SubjectPrefix) {
		add("export.subject_prefix: %q is not a NATS subject token", e.SubjectPrefix)
	}
	if !natsToken(c.ExportVenue()) {
		add("export.venue: %q is not a NATS subject token (set export.venue)", c.ExportVenue())
	}
	if !natsToken(c.ExportStream()) || strings.ContainsAny(c.ExportStream(), "/\\") {
		add("export.stream: %q is not a valid stream name", c.ExportStream())
	} else if len(c.ExportStream()) > StreamNameBytesMax {
		// JetStream refuses to create the stream: the venue would start
		// and its export stay paused, the error only in its log.
		add("export.stream: %q is %d bytes, longer than the %d JetStream takes for a stream name (set export.stream, or a shorter export.venue)",
			c.ExportStream(), len(c.ExportStream()), StreamNameBytesMax)
	}
	if e.PublishWindow <= 0 || e.PublishWindow > PublishWindowMax {
		add("export.publish_window: %d is outside [1, %d]", e.PublishWindow, PublishWindowMax)
	}
	if e.BatchInterval.Duration < BatchIntervalMin || e.BatchInterval.Duration > BatchIntervalMax {
		add("export.batch_interval: %s is outside [%s, %s]", e.BatchInterval.Duration, BatchIntervalMin, BatchIntervalMax)
	}
	if e.TapEvents < TapEventsMin || e.TapEvents > TapEventsMax || !isPow2(e.TapEvents) {
		add("export.tap_events: %d is not a power of two in [%d, %d]", e.TapEvents, TapEventsMin, TapEventsMax)
	}
	if e.Enabled {
		// A consumer of one instrument's subject would get another's
		// events as well (eventstream/doc.go, "Subjects").
		seen := make(SubjectTokens, len(c.Instruments))
		for _, in := range c.Instruments {
			if SubjectToken(in.Symbol) == NoInstrumentToken {
				add("instrument %s: its event subjects would be those of the events of no instrument (...orders.%s); rename it or turn export off",
					in.Symbol, NoInstrumentToken)
			}
			if other := seen.Add(in.Symbol); other != "" {
				add("instrument %s: its event subjects would be %s's (export turns '.', '*' and '>' into '_', both are ...orders.%s); rename one or turn export off",
					in.Symbol, other, SubjectToken(in.Symbol))
			}
		}
	}
	if e.Enabled && e.NATSURL == "" {
		if err := checkAddr("export.embedded_addr", e.EmbeddedAddr); err != nil {
			errs = append(errs, err)
		} else if host, _, _ := net.SplitHostPort(e.EmbeddedAddr); !IsLoopback(host) {
			// The embedded server takes no TLS and no users (below): beyond
			// loopback anyone who reached it read every order and could
			// publish into the stream.
			add("export.embedded_addr: %q is not a loopback address; the embedded server has neither TLS nor users "+
				"(for a NATS others reach, run one and set export.nats_url)", e.EmbeddedAddr)
		}
	}
	if e.NATSURL != "" {
		errs = append(errs, checkNATSURL("export.nats_url", e.NATSURL)...)
	}
	if (e.TLSCertFile == "") != (e.TLSKeyFile == "") {
		add("export.tls_cert_file, export.tls_key_file: give both or neither")
	}
	// The connection takes one of them (server.NATSOptions): another one
	// given would be dropped without a word.
	var given []string
	for _, k := range []struct{ key, value string }{{"export.creds_file", e.CredsFile}, {"export.user", e.User}, {"export.token", e.Token}} {
		if k.value != "" {
			given = append(given, k.key)
		}
	}
	if len(given) > 1 {
		add("%s: give a creds file, or user and password, or a token, not several", strings.Join(given, ", "))
	}
	if e.Password != "" && e.User == "" {
		add("export.password: needs export.user")
	}
	if e.Enabled && e.NATSURL == "" {
		// The embedded server has neither TLS nor users: TLS would fail
		// every connection to it, credentials would go unused.
		for _, k := range []struct{ key, value string }{{"export.creds_file", e.CredsFile}, {"export.user", e.User},
			{"export.password", e.Password}, {"export.token", e.Token}, {"export.tls_ca_file", e.TLSCAFile},
			{"export.tls_cert_file", e.TLSCertFile}, {"export.tls_key_file", e.TLSKeyFile}} {
			if k.value != "" {
				add("%s: credentials and TLS are for an external NATS (export.nats_url); the embedded server takes neither", k.key)
			}
		}
	}
	return errs
}

// natsSchemes are the URL schemes the NATS client dials.
var natsSchemes = []string{"nats", "tls", "ws", "wss"}

// CheckNATSURL checks a NATS URL given on a command line (name, as
// --nats) as export.nats_url is checked: nil when the client can dial it.
func CheckNATSURL(name, list string) error { return errors.Join(checkNATSURL(name, list)...) }

// checkNATSURL checks key (export.nats_url): comma-separated URLs, at
// least one, each with a host, of a scheme the NATS client dials (none:
// nats). The client would take a list of blanks as its default,
// nats://127.0.0.1:4222, and dial another scheme's host only to fail.
func checkNATSURL(key, list string) []error {
	var errs []error
	urls := 0
	for _, part := range strings.Split(list, ",") {
		raw := strings.TrimSpace(part)
		if raw == "" {
			continue // the client skips it
		}
		urls++
		withScheme := raw
		if !strings.Contains(raw, "://") {
			withScheme = "nats://" + raw
		}
		u, err := url.Parse(withScheme)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %q: %w", key, raw, err))
		case !slices.Contains(natsSchemes, u.Scheme):
			errs = append(errs, fmt.Errorf("%s: %q: scheme %q is not one of %s", key, raw, u.Scheme, strings.Join(natsSchemes, ", ")))
		case u.Hostname() == "":
			errs = append(errs, fmt.Errorf("%s: %q names no host", key, raw))
		}
	}
	if urls == 0 {
		errs = append(errs, fmt.Errorf("%s: %q holds no URL (empty: the embedded server)", key, list))
	}
	return errs
}
