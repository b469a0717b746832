package edge

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/fixvenue/fixvenue/internal/tlsserver"
)

// Defaults of Config, named so that the venue config and the docs can point
// at them.
const (
	DefaultAddress                 = "127.0.0.1:9878"
	DefaultMessageBytesMax         = 65536
	DefaultLogonTimeout            = 5 * time.Second
	DefaultConnectionsMax          = 1024
	DefaultConnectionsPerSourceMax = 256
	DefaultSourcesMax              = 4096
	DefaultCompIDsMax              = 4096
	DefaultOutboundBytesMax        = 4 << 20
	DefaultOutboundQueueMax        = 4096
	DefaultWriteTimeout            = 5 * time.Second
	DefaultAheadBytesMax           = 16 << 20
	// MessageBytesMaxLimit is the largest MessageBytesMax accepted.
	MessageBytesMaxLimit = 1 << 24
	// compIDBytesMax bounds SenderCompID and TargetCompID in a Logon, which
	// become map keys.
	compIDBytesMax = 64
)

// Default rates.
var (
	DefaultAccepts          = Rate{PerSecond: 200, Burst: 400}
	DefaultAcceptsPerSource = Rate{PerSecond: 50, Burst: 200}
	DefaultLogonsPerCompID  = Rate{PerSecond: 1, Burst: 5}
	DefaultLogonsPerSource  = Rate{PerSecond: 5, Burst: 20}
)

// SessionKey names a FIX session from the venue's side: the BeginString
// and the two CompIDs of the Logon. Sub and location IDs are not part of
// it: the venue identifies sessions by CompIDs only.
type SessionKey struct {
	BeginString  string
	ClientCompID string // the Logon's SenderCompID (49)
	VenueCompID  string // the Logon's TargetCompID (56)
}

func (k SessionKey) String() string {
	return k.BeginString + ":" + k.VenueCompID + "->" + k.ClientCompID
}

// Config configures a Listener. Zero values take the defaults above, except
// Authenticator, which is required.
type Config struct {
	// Address is "host:port"; port 0 picks a free port (see Listener.Port).
	Address string
	// Socket, when set, is the listening socket to accept on, bound
	// already (at Address), instead of binding one: a cluster node's,
	// which answered FIX clients as a follower and keeps answering them
	// as the leader, so that a client dialling it meanwhile is never
	// refused. The Listener owns it from then on (Close closes it).
	Socket *net.TCPListener
	// BeginStrings a Logon may use; default {"FIX.4.4"}.
	BeginStrings []string
	// MessageBytesMax is the largest BodyLength (9) accepted; a larger claim
	// closes the connection. The inbound buffer of a connection is at most
	// this plus 43 bytes of header and trailer.
	MessageBytesMax int
	// LogonTimeout bounds the time from accept to a complete Logon,
	// TLS handshake included.
	LogonTimeout time.Duration
	// Authenticator checks every Logon before QuickFIX/Go sees it.
	Authenticator Authenticator

	// ConnectionsMax bounds open connections (before and after Logon).
	ConnectionsMax int
	// ConnectionsPerSourceMax bounds open connections per client address.
	ConnectionsPerSourceMax int
	// SourcesMax bounds the client addresses tracked for limits.
	SourcesMax int
	// CompIDsMax bounds the CompIDs tracked for logon rate limits.
	CompIDsMax int
	// Serving, when set, reports whether the venue takes logons yet: before
	// (a start still catching up on its schedule) a Logon is answered with
	// a Logout saying so, and charged to no logon rate.
	Serving func() bool
	// Refusing, when set, returns the Text of a Logout that answers every
	// Logon while it is not empty, charged to no logon rate: a venue that
	// stopped serving while its process lives (a cluster's deposed leader,
	// which names the node that leads) refuses a client rather than taking
	// a logon it is about to drop without a word.
	Refusing func() string
	// CheckLogon, when set, gives the session layer's verdict on the fields
	// of a Logon whose credentials passed (logon as QuickFIX/Go will read
	// it, without Password): a problem ("" for none) refuses it, with a
	// Logout "Malformed Logon: problem" when answer is set, else by closing
	// the connection (the problem logged). QuickFIX/Go closes the connection
	// without a word on a Logon its validation refuses (a tag it does not
	// define, one not defined for Logon, a bad value).
	CheckLogon func(key SessionKey, logon []byte) (problem string, answer bool)
	// CheckSeqNums, when set, says whether the session can go on from a
	// Logon's sequence numbers (reset: its ResetSeqNumFlag is Y; seqNum:
	// its MsgSeqNum), asked after CheckLogon: a Text refuses the Logon
	// with a Logout of that Text, "" takes it. A cluster's new leader,
	// whose FIX stores are not the old leader's, and a venue whose store
	// of the session was lost want a reset this way (docs/ARCHITECTURE.md,
	// "Cluster", "FIX sessions on a new leader"; "Answers lost at a crash").
	CheckSeqNums func(key SessionKey, reset bool, seqNum uint64) (text string)
	// Accepts bounds the rate of accepted connections; AcceptsPerSource
	// that of one client address, checked first.
	Accepts          Rate
	AcceptsPerSource Rate
	// LogonsPerCompID and LogonsPerSource bound Logon attempts.
	LogonsPerCompID Rate
	LogonsPerSource Rate

	// OutboundBytesMax bounds the bytes QuickFIX/Go has written to a
	// connection that the client has not yet received; OutboundQueueMax
	// bounds the writes. Reaching either closes the connection.
	OutboundBytesMax int
	OutboundQueueMax int
	// WriteTimeout bounds each write to a client: a flush fails when no
	// writeChunkMax bytes of it go out within it (a client that stopped
	// reading), however long a steadily read flush takes.
	WriteTimeout time.Duration
	// SocketWriteBufferBytes sets the kernel send buffer of accepted
	// connections (SO_SNDBUF); 0 keeps the system default.
	SocketWriteBufferBytes int

	// DropEmptyValues drops every message that has a field without a value
	// instead of letting QuickFIX/Go answer it with a Reject (373=4). Set
	// it when QuickFIX/Go runs with ValidateFieldsHaveValues=N, whose
	// session layer and application would then read empty integers and
	// panic. See doc.go.
	DropEmptyValues bool

	// TLS, when set, is used as is (MinVersion raised to TLS 1.2). Otherwise
	// TLSCertFile and TLSKeyFile turn TLS on, and TLSClientCAFile turns on
	// mutual TLS: every client must present a certificate signed by it.
	TLS             *tls.Config
	TLSCertFile     string
	TLSKeyFile      string
	TLSClientCAFile string
	// TLSClientCertificateOptional lets a client without a certificate
	// through the TLSClientCAFile handshake; one that presents a
	// certificate still has it verified against the CA, and the
	// Authenticator decides (Credential.RequireCertificate): the venue's
	// session_defaults.require_client_certificates (doc.go, "What a
	// connection goes through").
	TLSClientCertificateOptional bool

	// OnWrite is called after each write QuickFIX/Go makes to a session's
	// connection, with the bytes written; see Conn.Written. It runs in
	// QuickFIX/Go's writer goroutine and must not block.
	OnWrite func(key SessionKey, n int)
	// OnClose is called once when a connection handed to QuickFIX/Go is
	// closed, with the first reason it was closed for. It must not block.
	OnClose func(key SessionKey, reason Reason)
	// LogOut asks the application to log a session out with a Logout whose
	// Text (58) is text, for what its client sent that FIX ends a session
	// for and the edge dropped (a message without MsgSeqNum: doc.go,
	// "Framing"); the edge cannot write the Logout itself, the sequence
	// numbers being QuickFIX/Go's. It reports whether the application does;
	// when it does not, or LogOut is nil, the edge closes the connection.
	// It runs in QuickFIX/Go's reader goroutine and must not block.
	LogOut func(key SessionKey, text string) bool
	// NextTargetSeqNum, when set, returns for a session the function that
	// reports the MsgSeqNum its session layer expects next (the venue's:
	// its FIX store's; safe to call from any goroutine). The edge then
	// bounds what a client sends ahead of a sequence gap: QuickFIX/Go keeps
	// every message above a gap until the gap is filled, in memory, with no
	// bound and no application callback, and a client that never fills the
	// gap made the venue's memory grow with all it sent. A session whose messages read ahead of the gap
	// (beyond what QuickFIX/Go may not have handled yet, SessionInboundQueue)
	// exceed AheadBytesMax before the gap is filled is logged out (LogOut,
	// AheadOfGapText) and what it sends after that is dropped.
	NextTargetSeqNum func(key SessionKey) func() int
	// ResetsOnLogon, when set, reports whether a session's session layer
	// resets both sides' sequence numbers at every Logon it takes
	// (QuickFIX/Go's ResetOnLogon). A Logon inside such a session whose
	// MsgSeqNum is not 1 is then held to the rule of a Logon with
	// ResetSeqNumFlag Y (ResetOnLogonNotAtOneText): QuickFIX/Go reset both
	// stores, answered with a Logon at 1, found the Logon's own MsgSeqNum
	// too high for the reset numbers and logged the session out without a
	// Text.
	ResetsOnLogon func(key SessionKey) bool
	// AheadBytesMax bounds what the messages a session sends ahead of a
	// sequence gap (NextTargetSeqNum) cost QuickFIX/Go's memory, their
	// bytes and their parsed form (stashCost): 0 for DefaultAheadBytesMax; never
	// less than four times SessionInboundQueue+2 messages of MessageBytesMax.
	AheadBytesMax int
	// SessionInboundQueue is the number of messages QuickFIX/Go's session
	// may hold between reading and handling them: its InChanCapacity (1 by
	// default), the most a session's expected MsgSeqNum lags the messages
	// read for a reason other than a gap.
	SessionInboundQueue int
	// Logger receives refusals and closes; nil discards them. The edge never
	// logs message contents, so passwords never reach a log.
	Logger *slog.Logger

	// duplicateLogonWait is how long a Logon waits for its session's
	// previous connection to be released (0 for duplicateLogonWait); a
	// test lengthens it, where a loaded machine may take longer than the
	// venue's bound to release a closed connection.
	duplicateLogonWait time.Duration
}

// withDefaults returns c with zero values replaced and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Address == "" {
		c.Address = DefaultAddress
	}
	if len(c.BeginStrings) == 0 {
		c.BeginStrings = []string{"FIX.4.4"}
	}
	for _, b := range c.BeginStrings {
		if len(b) < 3 || b[:3] != "FIX" || len(b) > beginStringBytesMax || !validBeginString([]byte(b)) {
			return c, fmt.Errorf("edge: BeginString %q is not FIX.d.d or FIXT.d.d", b)
		}
	}
	if c.MessageBytesMax == 0 {
		c.MessageBytesMax = DefaultMessageBytesMax
	}
	if c.MessageBytesMax < bodyLengthMin || c.MessageBytesMax > MessageBytesMaxLimit {
		return c, fmt.Errorf("edge: MessageBytesMax %d outside [%d, %d]", c.MessageBytesMax, bodyLengthMin, MessageBytesMaxLimit)
	}
	if c.Authenticator == nil {
		return c, errors.New("edge: Config.Authenticator is required")
	}
	setDuration(&c.LogonTimeout, DefaultLogonTimeout)
	setDuration(&c.WriteTimeout, DefaultWriteTimeout)
	setDuration(&c.duplicateLogonWait, duplicateLogonWait)
	setInt(&c.ConnectionsMax, DefaultConnectionsMax)
	setInt(&c.ConnectionsPerSourceMax, DefaultConnectionsPerSourceMax)
	setInt(&c.SourcesMax, DefaultSourcesMax)
	setInt(&c.CompIDsMax, DefaultCompIDsMax)
	setInt(&c.OutboundBytesMax, DefaultOutboundBytesMax)
	setInt(&c.OutboundQueueMax, DefaultOutboundQueueMax)
	setInt(&c.AheadBytesMax, DefaultAheadBytesMax)
	setInt(&c.SessionInboundQueue, 1)
	c.AheadBytesMax = max(c.AheadBytesMax, 4*(c.SessionInboundQueue+2)*c.MessageBytesMax)
	c.Accepts = c.Accepts.orDefault(DefaultAccepts)
	c.AcceptsPerSource = c.AcceptsPerSource.orDefault(DefaultAcceptsPerSource)
	c.LogonsPerCompID = c.LogonsPerCompID.orDefault(DefaultLogonsPerCompID)
	c.LogonsPerSource = c.LogonsPerSource.orDefault(DefaultLogonsPerSource)
	for _, r := range []Rate{c.Accepts, c.AcceptsPerSource, c.LogonsPerCompID, c.LogonsPerSource} {
		if r.PerSecond < 0 || r.Burst < 1 {
			return c, fmt.Errorf("edge: rate %+v needs PerSecond >= 0 and Burst >= 1", r)
		}
	}
	for _, v := range []int{c.ConnectionsMax, c.ConnectionsPerSourceMax, c.SourcesMax, c.CompIDsMax, c.OutboundBytesMax, c.OutboundQueueMax, c.AheadBytesMax, c.SessionInboundQueue} {
		if v < 0 {
			return c, fmt.Errorf("edge: negative limit %d", v)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	tlsConfig, err := c.tlsConfig()
	if err != nil {
		return c, err
	}
	c.TLS = tlsConfig
	return c, nil
}

func setInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func setDuration(v *time.Duration, d time.Duration) {
	if *v == 0 {
		*v = d
	}
}

// tlsConfig builds the server TLS configuration, or nil without TLS.
func (c Config) tlsConfig() (*tls.Config, error) {
	if c.TLS != nil {
		t := c.TLS.Clone()
		if t.MinVersion < tls.VersionTLS12 {
			t.MinVersion = tls.VersionTLS12
		}
		return t, nil
	}
	if c.TLSCertFile == "" && c.TLSKeyFile == "" {
		if c.TLSClientCAFile != "" {
			return nil, errors.New("edge: TLSClientCAFile needs TLSCertFile and TLSKeyFile")
		}
		return nil, nil
	}
	t, err := tlsserver.Config(c.TLSCertFile, c.TLSKeyFile, c.TLSClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("edge: TLS %w", err)
	}
	if c.TLSClientCertificateOptional && t.ClientCAs != nil {
		t.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return t, nil
}
