package edge

import "sync/atomic"

// Reason names why the edge dropped a message, refused or closed a
// connection. Every Reason has a counter in Stats, and the Reason a
// connection closed for is given to Config.OnClose.
type Reason uint8

// Reasons. The groups say what the edge did: a dropped message never reaches
// QuickFIX/Go and consumes no sequence number; a refused connection is closed
// before QuickFIX/Go sees it; a closed session was handed to QuickFIX/Go.
const (
	ReasonNone Reason = iota

	// Messages dropped as garbled (FIX session rules: ignore, do not
	// increment the expected sequence number).
	ReasonBadCheckSum      // CheckSum (10) wrong or not three digits
	ReasonBadBodyLength    // BodyLength (9) not digits, or not ending where the CheckSum starts
	ReasonBadHeader        // BeginString, BodyLength, MsgType not the first three fields, or empty MsgType
	ReasonBadField         // a field that is not <digits>=<value><SOH>
	ReasonRepeatedFraming  // BeginString, BodyLength or MsgType repeated, or CheckSum inside the body
	ReasonBadMsgSeqNum     // MsgSeqNum (34) empty or not a positive number: no usable sequence number
	ReasonMissingMsgSeqNum // no MsgSeqNum (34) inside the session: the session is logged out too (Config.LogOut)
	ReasonAheadOfGap       // past Config.AheadBytesMax sent ahead of a sequence gap: the session is logged out too
	// ReasonRouteNotPrintable: a routing field of the header (SenderSubID,
	// OnBehalfOfCompID, …) holding a byte outside printable ASCII, which
	// QuickFIX/Go would copy into a Reject: the session is logged out too.
	ReasonRouteNotPrintable
	// ReasonSessionEnding: read after the application began logging the
	// session out for what its client sent (Conn.StopTaking: past its
	// message rate), so not taken.
	ReasonSessionEnding
	ReasonBadDataLength    // a length field (212, 95, …) empty, not a number, or not matching its data field
	ReasonDataWithSOH      // a data field other than XmlData (213) holding SOH, which QuickFIX/Go would split
	ReasonEmptyValue       // a field without a value, dropped only with Config.DropEmptyValues
	ReasonWrongBeginString // a BeginString other than the session's before Logon

	// Connections closed for what they sent.
	ReasonOversize       // BodyLength larger than Config.MessageBytesMax, or more than 9 digits
	ReasonNotLogon       // the first message was not a Logon
	ReasonLogonTimeout   // no Logon (or TLS handshake) within Config.LogonTimeout
	ReasonLogonMalformed // a Logon with an empty, repeated or unusable field
	ReasonLogonRefused   // the Authenticator refused the Logon
	ReasonLogonRateLimit // too many Logon attempts for the CompID or the source address
	ReasonLogonDuplicate // a Logon for a session that is already logged on
	ReasonLogonSeqNums   // a Logon whose sequence numbers the session cannot go on from (Config.CheckSeqNums)
	ReasonTLSHandshake   // the TLS handshake failed
	ReasonReadError      // reading failed before Logon (a reset, not a close)
	ReasonNotServing     // a Logon before the venue serves, or once it stopped (Config.Serving, Config.Refusing)
	// ReasonClosedBeforeLogon: the client closed the connection before a
	// whole Logon arrived (a port probe, a load balancer's health check),
	// on a TLS listener before a byte of the handshake too.
	ReasonClosedBeforeLogon

	// Connections refused at accept.
	ReasonConnectionsMax          // Config.ConnectionsMax reached
	ReasonConnectionsPerSourceMax // Config.ConnectionsPerSourceMax reached for the address
	ReasonAcceptRate              // Config.AcceptsPerSource or Config.Accepts exceeded
	ReasonSourcesTableFull        // Config.SourcesMax addresses already tracked
	ReasonCompIDsTableFull        // Config.CompIDsMax CompIDs already tracked

	// Sessions closed (the Reason given to Config.OnClose, and counted when
	// the connection ends).
	ReasonClosedBySession // QuickFIX/Go closed the connection (logout, disconnect, stop)
	ReasonPeerClosed      // the client closed the connection or reading failed
	ReasonOutboundFull    // the client reads too slowly: Config.OutboundBytesMax or OutboundQueueMax reached
	ReasonWriteTimeout    // a write did not finish within Config.WriteTimeout
	ReasonListenerClosed  // the Listener was closed before QuickFIX/Go took the connection

	reasonsCount
)

var reasonNames = [reasonsCount]string{
	ReasonNone:                    "none",
	ReasonBadCheckSum:             "bad_checksum",
	ReasonBadBodyLength:           "bad_body_length",
	ReasonBadHeader:               "bad_header",
	ReasonBadField:                "bad_field",
	ReasonRepeatedFraming:         "repeated_framing_field",
	ReasonBadMsgSeqNum:            "bad_msg_seq_num",
	ReasonMissingMsgSeqNum:        "missing_msg_seq_num",
	ReasonAheadOfGap:              "ahead_of_gap",
	ReasonRouteNotPrintable:       "route_not_printable",
	ReasonSessionEnding:           "session_ending",
	ReasonBadDataLength:           "bad_data_length",
	ReasonDataWithSOH:             "data_with_soh",
	ReasonEmptyValue:              "empty_value",
	ReasonWrongBeginString:        "wrong_begin_string",
	ReasonOversize:                "oversize",
	ReasonNotLogon:                "not_logon",
	ReasonLogonTimeout:            "logon_timeout",
	ReasonLogonMalformed:          "logon_malformed",
	ReasonLogonRefused:            "logon_refused",
	ReasonLogonRateLimit:          "logon_rate_limit",
	ReasonLogonDuplicate:          "logon_duplicate",
	ReasonLogonSeqNums:            "logon_seq_nums",
	ReasonTLSHandshake:            "tls_handshake",
	ReasonReadError:               "read_error",
	ReasonNotServing:              "not_serving",
	ReasonClosedBeforeLogon:       "closed_before_logon",
	ReasonConnectionsMax:          "connections_max",
	ReasonConnectionsPerSourceMax: "connections_per_source_max",
	ReasonAcceptRate:              "accept_rate",
	ReasonSourcesTableFull:        "sources_table_full",
	ReasonCompIDsTableFull:        "compids_table_full",
	ReasonClosedBySession:         "closed_by_session",
	ReasonPeerClosed:              "peer_closed",
	ReasonOutboundFull:            "outbound_full",
	ReasonWriteTimeout:            "write_timeout",
	ReasonListenerClosed:          "listener_closed",
}

// String returns the reason's metric label, e.g. "bad_checksum".
func (r Reason) String() string {
	if r >= reasonsCount {
		return "unknown"
	}
	return reasonNames[r]
}

// Reasons lists every Reason except ReasonNone, for exporting counters.
func Reasons() []Reason {
	out := make([]Reason, 0, reasonsCount-1)
	for r := ReasonNone + 1; r < reasonsCount; r++ {
		out = append(out, r)
	}
	return out
}

// Stats counts what the edge did. Every field is updated atomically and may
// be read at any time; Prometheus wiring reads them (see Reasons).
type Stats struct {
	counts [reasonsCount]atomic.Uint64

	Accepted        atomic.Uint64 // TCP connections accepted within the limits
	LogonsPassed    atomic.Uint64 // Logons handed to QuickFIX/Go
	MessagesIn      atomic.Uint64 // messages handed to QuickFIX/Go, Logons included
	MessagesOut     atomic.Uint64 // writes from QuickFIX/Go accepted into outbound buffers
	BytesOut        atomic.Uint64 // bytes written to clients
	GarbageBytes    atomic.Uint64 // bytes skipped while looking for "8=FIX"
	ConnectionsOpen atomic.Int64  // connections open now, before and after Logon
	SessionsOpen    atomic.Int64  // connections handed to QuickFIX/Go and not yet closed
}

// Count returns the counter of reason r.
func (s *Stats) Count(r Reason) uint64 {
	if r >= reasonsCount {
		return 0
	}
	return s.counts[r].Load()
}

func (s *Stats) add(r Reason) {
	s.counts[r].Add(1)
}
