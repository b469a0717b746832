// Package edge is the venue's FIX listener: it stands between the network
// and QuickFIX/Go v0.9.11 so that no client can crash the venue, starve it
// or move another session's sequence numbers.
//
// # Wiring
//
// Listen returns a net.Listener whose Accept hands out only connections that
// have sent a valid, authenticated Logon. QuickFIX/Go takes it through the
// listener callback added in v0.9.11:
//
//	l, err := edge.Listen(edge.Config{Address: addr, Authenticator: creds,
//		OnWrite: app.written, OnClose: app.closed})
//	settings.GlobalSettings().Set(config.SocketAcceptPort, strconv.Itoa(l.Port()))
//	acceptor, err := quickfix.NewAcceptor(app, store, settings, logs)
//	acceptor.SetNewListenerCallback(l.NewListenerCallback())
//	err = acceptor.Start()
//	…
//	acceptor.Stop() // closes l
//
// SocketAcceptPort must equal l.Port(): QuickFIX/Go refuses a connection
// whose local port differs from the one configured for its session, and all
// sessions must share that one port (the callback hands the listener out
// once). TLS belongs to the edge (Config.TLS…): QuickFIX/Go must have no
// Socket*Key/Certificate settings and UseTCPProxy must stay off. The edge's
// guarantees assume QuickFIX/Go's default validation (ValidateFieldsHaveValues
// on, ideally a DataDictionary); see "Empty values" below.
//
// # What a connection goes through
//
// Accept: the number of addresses tracked (SourcesMax), the address's
// accept rate (AcceptsPerSource: one address connecting in a loop is
// refused before it spends the venue's), the accept rate (Accepts), the
// total number of connections (ConnectionsMax) and the number per client
// address (ConnectionsPerSourceMax) are checked first; a connection over a
// limit is reset at once and counted.
//
// Logon gate: one goroutine per connection runs the TLS handshake (if any)
// and reads the first message, all within LogonTimeout; a connection that
// sends nothing, or drips a Logon byte by byte, is closed at the deadline;
// one that sends plain FIX to a TLS listener is closed and logged at Info
// as such (a client configured without TLS), counted as tls_handshake.
// QuickFIX/Go allocates nothing for a connection before it passes: 2,000
// idle connections cost under 12 KiB each, both ends of the socket counted
// (TestIdleConnections). The first whole message
// must be a Logon (otherwise the connection is closed without a word, as the
// FIX session rules say). Then, in this order:
//   - a Logon with an empty, repeated (any header field, Password, HeartBtInt,
//     ResetSeqNumFlag, …) or unusable field (MsgSeqNum that is not a number,
//     missing CompIDs, HeartBtInt missing or not 1 to HeartBtIntMax seconds,
//     EncryptMethod missing or not 0: QuickFIX/Go closes without a word on
//     the one and takes any value of the other while encrypting nothing;
//     ResetSeqNumFlag Y with a MsgSeqNum other than 1)
//     is refused: QuickFIX/Go keeps the last of a repeated field while the
//     gate would read the first, so refusing them keeps both agreeing on who
//     logs on; with a HeartBtInt of 0 or less QuickFIX/Go's timers fire at
//     once (a TestRequest and a disconnect right after its Logon answer), one
//     beyond 32 bits it wraps, and without one it closes without a word; a
//     Logon inside the session (a reset) whose HeartBtInt is outside that
//     range closes the connection (ErrLogonInSession: QuickFIX/Go would take
//     it, and one of 2^32 seconds turns off the heartbeats that find a dead
//     peer; its other faults QuickFIX/Go answers with a Logout), and one
//     with ResetSeqNumFlag Y and a MsgSeqNum other than 1 is dropped and the
//     session logged out (Config.LogOut) with a Logout saying "Malformed
//     Logon: a Logon with 141=Y must carry 34=1" (ResetNotAtOneText), the
//     words a first Logon so is refused with: QuickFIX/Go reset both sides'
//     sequence numbers, answered with a Logon, then logged out with no Text;
//     dropped, it moves no sequence number;
//   - a BeginString not in Config.BeginStrings is refused;
//   - before the venue serves (Config.Serving: a start catching up on its
//     schedule) a Logon is refused with a Logout saying so, charged to no
//     logon rate, and so is one once the venue stopped serving while its
//     process lives (Config.Refusing: a cluster's deposed leader, whose
//     Logout names the node that leads);
//   - one attempt is charged to the client address (token bucket
//     LogonsPerSource): past the limit the Logon is refused;
//   - the Authenticator decides (Credentials: per-CompID password,
//     TargetCompID, allowed source prefixes, and the client certificate's
//     CN or DNS SAN bound to the CompID — a certificate is always checked
//     when one is presented, so one client's certificate never logs on as
//     another; with TLSClientCAFile the handshake refuses a client without
//     one unless Config.TLSClientCertificateOptional, the venue's
//     session_defaults.require_client_certificates = false);
//   - one attempt is charged to the CompID (token bucket LogonsPerCompID;
//     CompIDsMax bounds the buckets remembered): to the CompID when the
//     credentials passed, to the CompID from that address when they failed,
//     so that Logons anyone may send naming a client's CompID never lock
//     the client out; past the limit the Logon is refused, saying only
//     that there were too many attempts;
//   - Config.CheckLogon, when set, gives the session layer's verdict on the
//     Logon's fields (the venue's: the session's dictionary checks, which
//     QuickFIX/Go would make and answer by closing without a word): a Logon
//     with a tag FIX 4.4 does not define, one not defined for Logon or a
//     value of the wrong type is refused, its Logout naming the problem
//     ("Malformed Logon: Invalid tag number (tag 5000)"); one whose
//     SendingTime is further from the venue's clock than the session's
//     MaxLatency (QuickFIX/Go's CheckLatency; it would first have reset the
//     sequence numbers of a Logon with ResetSeqNumFlag) is refused too, by
//     closing the connection without an answer, as the FIX session
//     acceptance tests want (1d), and logged with the problem;
//   - Config.CheckSeqNums, when set, says whether the session can go on
//     from the Logon's ResetSeqNumFlag and MsgSeqNum: a Text refuses it
//     with a Logout of that Text (a cluster's new leader, whose FIX stores
//     are not the old leader's, and a venue that lost a session's store
//     want a reset: docs/ARCHITECTURE.md, "Cluster", "FIX sessions on a
//     new leader");
//   - a Logon for a session that already has a connection is refused, once
//     it has waited duplicateLogonWait for that connection to go (a client
//     that drops its connection and logs on again at once reaches the venue
//     before the old connection's end has); a connection that has ended
//     (its read or a write failed, it was closed, or, on Linux, the kernel
//     says its client closed or reset it though no one read it yet:
//     QuickFIX/Go reads a connection only once its session goroutine has
//     taken it, so a client that dropped its Logon before the answer and
//     logged on again at once was refused) is waited for up to the Logon's
//     deadline instead, as only QuickFIX/Go's release of it is left, which
//     waits for its session goroutine; the session never has two. A connection goes once
//     QuickFIX/Go, having seen its end, closes it (Conn.Close); one the
//     application ends (Conn.Disconnect: a client not reading, an
//     operator's logout) stays its session's until then, so that the
//     client's next Logon waits for QuickFIX/Go rather than reaching a
//     session it still has connected.
//
// A Logon for a BeginString or CompID the venue does not serve, and a second
// Logon for a logged-on session, are closed without a word, as the FIX session
// rules (and QuickFIX's acceptance scripts 1b, 1c, 1d, AlreadyLoggedOn) ask
// (a second Logon that is also malformed gets the Logout of a malformed one:
// those checks come first). Any other refused Logon (credentials, source,
// certificate, rate, fields) is answered
// with a Logout (58 says only "Logon refused" or "Too many logon attempts",
// never which credential was wrong; a refusal the Authenticator makes
// after the credentials passed may say why, as a Told: the venue's
// "Session disabled by the venue's operator"; Credentials' refusal of a
// NewPassword (925), NewPasswordRefused, since its table is the venue's
// configuration) and the connection closes. That Logout carries MsgSeqNum 1: the edge owns no sequence
// numbers — QuickFIX/Go does, and a refused Logon must not reach it, or its
// expected inbound number would move (QuickFIX/Go increments it even for
// Logons its application rejects). The number is never taken up by a
// session: the connection is closed right after. Because refused Logons never
// reach QuickFIX/Go, bad passwords do not move sequence numbers.
//
// A passing Logon is handed to QuickFIX/Go without Password (554) and
// NewPassword (925) — BodyLength and CheckSum recomputed — so that neither
// QuickFIX/Go's logs nor the application ever hold a password; Logons inside
// a session are stripped the same way. The edge logs no message contents.
//
// # Framing: what is dropped, passed or disconnected
//
// Every inbound message is framed by the edge itself (framer.go: a
// byte-at-a-time state machine over one buffer per connection, no allocation
// per message) and QuickFIX/Go reads only whole messages that passed:
//
//	input                                               edge does              why
//	CheckSum wrong or not 3 digits                      drop                   FIX: garbled, ignore, keep the sequence number
//	BodyLength not digits, empty, or not where "10=" is drop                   garbled
//	8, 9, 35 not the first three fields, empty MsgType  drop                   garbled
//	  or one with a byte outside printable ASCII                               (QuickFIX/Go's Reject would echo it)
//	a field not <digits>=<value>, tag with leading zero drop                   garbled
//	a tag of more than 18 digits                        drop                   QuickFIX/Go would wrap it into another tag
//	BeginString, BodyLength or MsgType repeated,        drop                   garbled; a second empty BodyLength panics QuickFIX/Go
//	  or "10=" inside the body
//	MsgSeqNum empty or not a number (also repeated)     drop                   QuickFIX/Go panics; no sequence number to consume
//	MsgSeqNum missing (after the Logon)                 drop, log out          FIX: Logout; QuickFIX/Go would take the next number
//	a routing field (50, 57, 115, 128, 142…) with a     drop, log out          QuickFIX/Go's Reject of the message would echo it,
//	  byte outside printable ASCII (after the Logon)                           which a validating client refuses
//	length field (212, 95, 90, 93, 348…) empty, not a   drop                   empty or too large XmlDataLen panics QuickFIX/Go;
//	  number, or not matching its data field                                   the field boundaries are unknown
//	data field other than XmlData holding SOH           drop                   QuickFIX/Go splits it into fields it never had
//	bytes before "8=FIX"                                skip, count            resynchronise
//	BodyLength above MessageBytesMax or of 10+ digits   close                  cannot be buffered; only a hostile client sends it
//	any other field with an empty value                 pass                   QuickFIX/Go answers Reject 373=4 and consumes the number
//	a tag unknown, 0, negative, or of up to 18 digits   pass                   QuickFIX/Go answers Reject 373=0 and consumes the number
//	a BeginString other than the session's              pass                   QuickFIX/Go answers Logout "Incorrect BeginString"
//	everything else (PossDup, resends, bad values)      pass, unchanged        QuickFIX/Go applies the FIX session rules
//
// A dropped message consumes no sequence number: the session layer asks for
// it again with a ResendRequest when the next one arrives, as the FIX rules
// intend for garbled messages. A message without MsgSeqNum has no number to
// ask for: FIX ends the session on one, with a Logout saying so, where
// QuickFIX/Go would answer it with a Reject and take the next expected
// number for it (the client's next message, which carries that number, was
// then refused as too low, and never processed). The edge drops it and
// has the application log the session out (Config.LogOut), the Logout
// saying "MsgSeqNum (34) missing: message not processed"; without
// Config.LogOut the edge closes the connection. Once it has asked for such
// a Logout, or the application has called Conn.StopTaking (it is logging
// the session out for what the client sent: past its message rate), the
// edge drops whatever the client sends on the connection
// (ReasonSessionEnding for the latter): QuickFIX/Go answers some messages
// itself, and would go on answering each until the connection closes.
//
// The edge never writes into a session: it cannot send a Reject for a crash
// shape because the outbound sequence number is QuickFIX/Go's. A crash-shaped Logon (empty MsgSeqNum) is framed
// whole and refused by the gate with a Logout; a Logon that is garbled
// (including a bad XmlDataLen) is ignored like any garbled message and the
// connection closes at the logon deadline.
//
// # Messages ahead of a sequence gap
//
// A message above the MsgSeqNum the session expects opens a gap: QuickFIX/Go
// asks for the missing ones with a ResendRequest and keeps every message that
// comes after the gap, in memory, until the gap is filled, with no bound and
// without telling the application. A client that never fills its gap and
// sends on, within any message rate, made the venue's memory grow with all it
// sent. With Config.NextTargetSeqNum (the venue's FIX store says what its
// session expects), the edge counts what the messages read ahead of the
// expected MsgSeqNum cost QuickFIX/Go's memory (their bytes, and the parsed
// message and each of its fields that it stashes: stashCost, some 1.7 KiB for
// a Heartbeat of 78 bytes; counting the bytes alone, Heartbeats held twenty
// times the bound), beyond those QuickFIX/Go may have read and not
// handled yet (Config.SessionInboundQueue, its InChanCapacity, and a few
// more); the count starts again once the expected MsgSeqNum has reached the
// last message counted (QuickFIX/Go moves it on after its answer, which the
// client may read first), or went down (a sequence reset). Past AheadBytesMax (16
// MiB) the session is logged out (Config.LogOut, "too much sent ahead of a
// sequence gap: …") and what its client sends after is dropped. A
// SequenceReset that moves the expected MsgSeqNum forward is handled a few
// messages after the edge reads it: the messages read meanwhile count, at most
// SessionInboundQueue plus a few, far below the bound.
//
// # Empty values
//
// Sending every field of the FIX44 header, trailer and admin messages empty
// to a bare QuickFIX/Go v0.9.11 (TestEmptyValueSweep,
// TestCrashShapesKillBareQuickFIX) shows that with its default validation it
// answers all of them with a correct session Reject (373=4, or 373=6 for
// SendingTime), except the crash shapes above, which panic a goroutine that
// has no recover and end the process. So the edge drops exactly the crash
// shapes and lets QuickFIX/Go reject the rest, which is what the FIX
// session rules ask (Reject, sequence number consumed). With
// ValidateFieldsHaveValues=N QuickFIX/Go and the application would read
// empty integers and panic; such a deployment must set
// Config.DropEmptyValues, which drops every message with an empty field
// instead (no Reject, at the cost of a resend).
//
// # Writing, pacing and closing
//
// Conn.Write copies into a bounded buffer (OutboundBytesMax bytes,
// OutboundQueueMax writes) flushed by the connection's writer goroutine
// in chunks of 64 KiB, each bounded by WriteTimeout; it never blocks
// QuickFIX/Go. A client that stops reading fills the buffer or stalls a
// chunk and is disconnected (ReasonOutboundFull, ReasonWriteTimeout);
// nobody else notices. One that reads slowly but steadily is not, however
// long a large flush (a resend) takes.
// Conn.Backlogged tells a producer that can wait (the gateway's mass
// status) that more than half of either bound is in use.
//
// Returning at once is not enough: QuickFIX/Go's session loop spins when
// more than one message waits for a busy writer, and several spinning
// sessions starve the process (measured while planning the venue: four
// sessions at 5,000 orders/s collapsed without pacing, even with writes that
// return at once, and held with p99 under 0.2 ms with it). The application must
// pace each session: call SendToTarget for the next message only after the
// previous one was written. Config.OnWrite(key, n) and Conn.Written() (one
// coalescing signal per Write; Listener.Session finds the Conn of a session)
// report each write by QuickFIX/Go, that is, the moment a message left
// QuickFIX/Go's queue: the right moment to hand it the next. Admin messages
// (heartbeats, rejects) signal too, so at most two messages are ever queued
// in a session. Config.OnClose(key, reason) is called once per session
// connection, after QuickFIX/Go has handled the disconnect, for
// cancel-on-disconnect. Close flushes what QuickFIX/Go wrote (its Logout)
// before closing.
//
// # Limits
//
// Every bound has a name: ConnectionsMax, ConnectionsPerSourceMax,
// SourcesMax, CompIDsMax, Accepts, AcceptsPerSource, LogonsPerSource, LogonsPerCompID,
// MessageBytesMax (the inbound buffer of a connection starts at 4 KiB and
// grows once to MessageBytesMax plus 43 bytes), AheadBytesMax, OutboundBytesMax,
// OutboundQueueMax, LogonTimeout, WriteTimeout, readyQueueMax (connections
// that passed the gate and wait for QuickFIX/Go's Accept), refusalLingerMax.
// Reaching one is counted in Stats (one counter per Reason) and ends the
// connection concerned, never another.
//
// The edge does not keep sessions apart by sub or location IDs: the venue
// identifies sessions by BeginString and CompIDs (SessionKey).
package edge
