package gateway

import (
	"fmt"
	"time"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// DisconnectCommandWait bounds how long a logout waits for a command slot for
// its SessionDisconnected command.
const DisconnectCommandWait = 5 * time.Second

// Application returns the QuickFIX/Go application of the venue.
func (g *Gateway) Application() quickfix.Application { return (*application)(g) }

// Arrivals returns what counts the messages of the sessions of Application
// as QuickFIX/Go reads them (ArrivalCounter), for their Log.
func (g *Gateway) Arrivals() ArrivalCounter { return (*application)(g) }

type application Gateway

func (a *application) g() *Gateway { return (*Gateway)(a) }

// OnCreate implements quickfix.Application.
func (a *application) OnCreate(quickfix.SessionID) {}

// OnLogon implements quickfix.Application.
func (a *application) OnLogon(id quickfix.SessionID) {
	g := a.g()
	s, ok := g.bySession[id]
	if !ok {
		return
	}
	if s.out.pacer != nil {
		conn := s.out.conn()
		if conn == nil || conn == s.loggedOutConn {
			// A Logon QuickFIX/Go read behind the session's Logout and
			// handed over after OnLogout, on a connection that is going:
			// taken, the session counted as logged on with no connection,
			// and the orders behind it were taken (FromApp).
			g.log.Warn("logon read after the session logged out ignored", "session", id.String())
			return
		}
		s.conn, s.loggedOutConn = conn, nil
	}
	s.out.overflow.Store(false)
	s.out.resending.Store(false)
	if !s.loggedOn.Load() {
		// Per connection: not again for a Logon inside the session (a
		// reset, or one QuickFIX/Go answers as it stands), which let a
		// client send ResendRequestsPerSecondMax more after each.
		s.mu.Lock()
		s.resends = slidingWindow{limit: ResendRequestsPerSecondMax}
		s.mu.Unlock()
		s.overRate.Store(false)
		s.loggingOut.Store(false)
	}
	fresh := !s.loggedOn.Swap(true)
	s.everLoggedOn.Store(true)
	if fresh {
		g.metrics.loggedOn.Inc()
	}
	s.out.loggedOn.Store(true)
	g.log.Info("session logged on", "session", id.String())
	if reason := g.halted(); reason != "" && fresh {
		// Told as the sessions logged on at the halt were (Halt, which
		// reads loggedOn after it sets the halt, as this reads the halt
		// after loggedOn: a session logging on meanwhile is told at least
		// once): a client that only waits for its resting orders to
		// trade would otherwise never learn that none will.
		s.out.enqueue(haltStatus(reason))
	}
}

// OnLogout implements quickfix.Application: the venue journals a
// SessionDisconnected command, which applies cancel-on-disconnect.
func (a *application) OnLogout(id quickfix.SessionID) {
	g := a.g()
	s, ok := g.bySession[id]
	if !ok {
		return
	}
	s.out.loggedOn.Store(false)
	s.out.resending.Store(false)
	if !s.loggedOn.Swap(false) {
		return // never logged on: nothing to cancel
	}
	s.loggedOutConn = s.conn
	g.metrics.loggedOn.Dec()
	g.log.Info("session logged out", "session", id.String(), "cancel_on_disconnect", s.cfg.CancelOnDisconnect)
	if err := g.Disconnected(s.idx, DisconnectCommandWait); err != nil {
		if reason := g.halted(); reason != "" {
			// A halted venue journals nothing, as it was meant to (a disk
			// that failed, a cluster leader deposed, whose successor
			// cancels after fix.cancel_grace): said, not an error of its own.
			g.log.Warn("disconnect not journaled: the venue is halted", "session", id.String(), "halt", reason)
		} else {
			g.log.Error("could not journal the disconnect", "session", id.String(), "err", err)
		}
	}
	if g.cfg.OnSessionEnd != nil {
		g.cfg.OnSessionEnd(s.idx)
	}
	g.awaitStopDrain()
}

// ToAdmin implements quickfix.Application: a Logout without a Text once a
// stop began (QuickFIX/Go's acceptor logs every session out with none) says
// the venue is shutting down, so a client tells it from a Logout for a
// fault of its own and knows to log on again later.
func (a *application) ToAdmin(m *quickfix.Message, _ quickfix.SessionID) {
	if a.g().stopping.Load() == nil || m.Body.Has(tag.Text) {
		return
	}
	if t, err := m.Header.GetBytes(tag.MsgType); err == nil && string(t) == "5" {
		text := a.g().cfg.StoppingText
		if text == "" {
			text = ShuttingDownText
		}
		m.Body.SetString(tag.Text, text)
	}
}

// ShuttingDownText is the Text (58) of the Logout each session gets when
// the venue stops (Config.StoppingText replaces it).
const ShuttingDownText = "venue shutting down: log on again once it is back"

// ToApp implements quickfix.Application. A market-data message
// (MarketDataSnapshotFullRefresh W, MarketDataIncrementalRefresh X) that
// QuickFIX/Go is about to send again for a ResendRequest (PossDupFlag set)
// is not sent: QuickFIX/Go fills its place with a SequenceReset-GapFill
// instead. The book it showed is stale by then, and the subscription it
// belonged to may have ended; a client that lost market data asks for a
// snapshot (docs/ARCHITECTURE.md, "FIX 4.4 conformance of outbound
// messages"). Every other message, ExecutionReports first, is resent,
// paced by the client's reading (paceResend).
func (a *application) ToApp(m *quickfix.Message, id quickfix.SessionID) error {
	if !m.Header.Has(tag.PossDupFlag) {
		return nil // a first send: the live path pays one lookup
	}
	dup, err := m.Header.GetBytes(tag.PossDupFlag)
	if err != nil || string(dup) != "Y" {
		return nil
	}
	if t, err := m.Header.GetBytes(tag.MsgType); err == nil && (string(t) == "W" || string(t) == "X") {
		return quickfix.ErrDoNotSend
	}
	g := a.g()
	g.metrics.resent.Inc()
	g.paceResend(id)
	return nil
}

// resendStallMax bounds how long a resend waits for the client to read
// before the next message goes out anyway (and the FIX edge closes a
// connection that reaches its bounds), as a mass status waits
// (massStatusStallMax).
const resendStallMax = 30 * time.Second

// paceResend waits, before QuickFIX/Go sends a stored message again for a
// ResendRequest, while the session's connection has more than half its
// outbound bounds waiting for the client (Backlogger). QuickFIX/Go writes a
// resend's messages as fast as it reads them from the store, with no
// pacing of its own: a session back after a day away, asking for the
// thousands of messages it missed (back to the store's bound), filled the
// edge's outbound buffer (fix.outbound_queue_max writes, 4 MiB) faster
// than any client reads, and was disconnected mid-resend, every time it
// asked again. Paced, the resend goes at the client's speed. A stop does
// not wait for it: QuickFIX/Go's session goroutine, which runs the resend,
// must be free to log the session out.
//
// QuickFIX/Go holds the session's send lock for the whole resend, so
// nothing else may wait for it: the session's answers go to its sender's
// queue while it resends (sender.resending; outbound hands them over
// itself otherwise), and the sender goroutine waits for the resend. A
// queue that overflows meanwhile disconnects the session
// (sender.queueCounted) and ends the wait at once, and the resend with it
// (ResendGoesOn): outbound waits for room in that queue, and the edge's
// close of the connection first flushes what the client has not read, for
// up to fix.write_timeout a write, so waiting for the connection to be
// gone held every session's answers for as long. A client that stops
// reading is closed by the edge's write timeout, which ends the wait too.
func (g *Gateway) paceResend(id quickfix.SessionID) {
	s, ok := g.bySession[id]
	if !ok {
		return
	}
	b, _ := s.out.pacer.(Backlogger)
	if b == nil || !b.Backlogged(id) {
		return
	}
	const pollWait = 100 * time.Microsecond
	for deadline := time.Now().Add(resendStallMax); b.Backlogged(id) && s.out.loggedOn.Load() &&
		g.stopping.Load() == nil && time.Now().Before(deadline); {
		time.Sleep(pollWait)
	}
}

// ResendGoesOn reports whether a resend to the session goes on
// (fixstore.Factory.ResendWhile): not once its connection is going, its
// outbound queue overflowed (sender.queueCounted), it logged out or the
// connection was closed (Closer: the FIX edge closes one whose client
// stopped reading, or that reached its outbound bounds), nor once the
// venue stops. QuickFIX/Go holds the session's send lock for the whole
// resend: the rest of a large one, written to a connection that was going,
// held that session's answers as long, and every session's once its queue
// was full (outbound waits for room in it). What the resend did not send
// stays in the store for the client's next one.
func (g *Gateway) ResendGoesOn(id quickfix.SessionID) bool {
	s, ok := g.bySession[id]
	if !ok {
		return true
	}
	if !s.out.loggedOn.Load() || g.stopping.Load() != nil {
		return false
	}
	c, _ := s.out.pacer.(Closer)
	return c == nil || !c.Closed(id)
}

// ResendEnded is called once QuickFIX/Go's resend to the session has
// handed over its last message (fixstore.Factory.AfterResend): outbound
// hands the session its answers itself again once its queue is empty.
func (g *Gateway) ResendEnded(id quickfix.SessionID) {
	if s, ok := g.bySession[id]; ok {
		s.out.resending.Store(false)
	}
}

// ResendRequestsPerSecondMax bounds the ResendRequests a connection may send
// in a second (the count starts again at each logon); one beyond it is
// rejected (a session Reject, 373=99), not served: each asks QuickFIX/Go to
// read and send again up to the whole store, so a burst of them made one
// session cost the venue seconds of CPU and a gigabyte of memory while
// every other session waited. QuickFIX's acceptance test 8 sends five in a
// row.
const ResendRequestsPerSecondMax = 10

// An ArrivalCounter counts each message a session's QuickFIX/Go loop reads,
// as it begins to handle it: the gateway's Application is one, called from
// the session's Log (quickfix.Log's OnIncoming, which QuickFIX/Go calls for
// every message it reads, before it parses it). Arrival returns the count
// of session id's messages, nil for a session it does not have; the Log
// looks it up once, not per message.
type ArrivalCounter interface {
	Arrival(id quickfix.SessionID) func()
}

// Arrival implements ArrivalCounter (arrived).
func (a *application) Arrival(id quickfix.SessionID) func() {
	s, ok := a.g().bySession[id]
	if !ok {
		return nil
	}
	return func() { a.arrived(s) }
}

// arrived counts a message of s: every message a logged-on session sends
// counts in its message rate (messages_per_second_logout), as it arrives
// and in the order QuickFIX/Go handles them, whatever becomes of it.
// Counted in FromApp and FromAdmin, the messages refused before them went
// uncounted: those QuickFIX/Go answers itself (a PossDupFlag message below
// the expected MsgSeqNum without OrigSendingTime gets its Reject), those
// the Validator refuses, those holding a byte that is not printable ASCII;
// a client sending only those drew a session Reject for each, each stored
// in its FIX store, at whatever rate it sent. Past the rate the session is
// logged out once (throttleLogout), and FromApp takes no application
// message from it until it logs on again.
func (a *application) arrived(s *session) {
	g := a.g()
	if !s.loggedOn.Load() || s.overRate.Load() {
		return // a Logon (the edge rate-limits those), or a session being logged out
	}
	if !s.throttle(&s.messages, g.cfg.Now()) {
		g.throttleLogout(s)
	}
}

// FromAdmin implements quickfix.Application: the session's Validator, if any,
// in place of QuickFIX/Go's. Credentials are checked by the FIX edge before
// QuickFIX/Go sees a Logon, so that a refused logon moves no sequence number.
// Session messages count in the session's message rate as application ones
// do (arrived), and ResendRequests are bounded.
func (a *application) FromAdmin(m *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	g := a.g()
	s, ok := g.bySession[id]
	if !ok {
		return nil
	}
	// Over its message rate (arrived), a session's admin messages are still
	// checked: QuickFIX/Go acts on any one taken (a SequenceReset's NewSeqNo,
	// a ResendRequest's range) until the connection closes.
	if s.cfg.Validator != nil {
		if _, err := s.cfg.Validator.Check(m); err != nil {
			return err
		}
	}
	if !s.loggedOn.Load() {
		return nil // a Logon (the edge rate-limits those)
	}
	now := g.cfg.Now()
	t, err := m.Header.GetBytes(tag.MsgType)
	if err != nil {
		return nil
	}
	switch string(t) {
	case "1":
		// Its TestReqID comes back in the Heartbeat (printable.go).
		if rej := refuseNonPrintable(m); rej != nil {
			return rej
		}
	case "2":
		if err := a.checkResendRequest(s, m, now); err != nil {
			return err
		}
		if m.Body.Has(tag.BeginSeqNo) && m.Body.Has(tag.EndSeqNo) {
			// QuickFIX/Go resends next (it rejects one without them).
			s.out.beginResend()
		}
	case "4":
		return checkSequenceReset(m)
	}
	return nil
}

// checkSequenceReset refuses a SequenceReset whose NewSeqNo has more than
// fixwire.SeqNumDigitsMax digits, with a session Reject (373=5, 371=36)
// that consumes its MsgSeqNum: QuickFIX/Go applies any NewSeqNo that fits
// an int64, after which every message the client numbered from it was
// dropped by the FIX edge (a MsgSeqNum that long is refused there), the
// session went silent and its next Logon was refused until a reset. It is
// called before QuickFIX/Go applies the NewSeqNo (FromAdmin).
func checkSequenceReset(m *quickfix.Message) quickfix.MessageRejectError {
	v, err := m.Body.GetBytes(tag.NewSeqNo)
	if err != nil || !seqNumTooLong(v) {
		return nil // missing: QuickFIX/Go's validation answers it
	}
	t := tag.NewSeqNo
	return quickfix.NewMessageRejectError(newSeqNoTooLargeText, rejectReasonValueIsIncorrect, &t)
}

// seqNumTooLong reports a sequence number field's value with more than
// fixwire.SeqNumDigitsMax digits after its sign and leading zeros: beyond
// the largest MsgSeqNum the venue takes, and one QuickFIX/Go reads
// modulo 2^64 (its int parser does not check for overflow), as another
// number.
func seqNumTooLong(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	for len(v) > 0 && v[0] == '0' {
		v = v[1:]
	}
	return len(v) > fixwire.SeqNumDigitsMax
}

// newSeqNoTooLargeText is the Text (58) of the Reject of a SequenceReset
// whose NewSeqNo is beyond the largest MsgSeqNum the venue takes.
var newSeqNoTooLargeText = fmt.Sprintf("NewSeqNo beyond the largest MsgSeqNum the venue takes (%d digits)", fixwire.SeqNumDigitsMax)

// seqNoTooLargeText is the Text (58) of the Reject of a ResendRequest whose
// BeginSeqNo or EndSeqNo (name) is beyond the largest MsgSeqNum the venue
// takes.
func seqNoTooLargeText(name string) string {
	return fmt.Sprintf("%s beyond the largest MsgSeqNum the venue takes (%d digits)", name, fixwire.SeqNumDigitsMax)
}

// checkResendRequest refuses a ResendRequest beyond the session's bound,
// one whose BeginSeqNo is not a sequence number (QuickFIX/Go would resend
// from it, numbering its gap fill 0 or below), one whose EndSeqNo, not 0
// (infinity), is below its BeginSeqNo, or one whose BeginSeqNo is past the
// next MsgSeqNum the venue will send (it asks for messages never sent, with
// a gap before them): QuickFIX/Go resends nothing and answers nothing for
// such a range, and the client waited for messages that never came. The
// last is a Reject (373=5) whose Text gives the last MsgSeqNum sent, so the
// client sees its numbers are out of step (FIX 4.4 has no answer of its own
// for it; gateway/doc.go, the paragraph on sessions). Before all of them, a
// BeginSeqNo or EndSeqNo of more than fixwire.SeqNumDigitsMax digits gets a
// Reject (373=5) naming it, as a SequenceReset's NewSeqNo does: QuickFIX/Go
// reads it modulo 2^64, and 7=18446744073709551617 was served as a resend
// from 1, 7=99999999999999999999 refused with a Text citing a BeginSeqNo
// the client never sent.
func (a *application) checkResendRequest(s *session, m *quickfix.Message, now int64) quickfix.MessageRejectError {
	for _, f := range [...]struct {
		t    quickfix.Tag
		name string
	}{{tag.BeginSeqNo, "BeginSeqNo"}, {tag.EndSeqNo, "EndSeqNo"}} {
		if v, err := m.Body.GetBytes(f.t); err == nil && seqNumTooLong(v) {
			t := f.t
			return quickfix.NewMessageRejectError(seqNoTooLargeText(f.name), rejectReasonValueIsIncorrect, &t)
		}
	}
	var begin, end quickfix.FIXInt
	if err := m.Body.GetField(tag.BeginSeqNo, &begin); err == nil && begin < 1 {
		return quickfix.ValueIsIncorrect(tag.BeginSeqNo)
	}
	if err := m.Body.GetField(tag.EndSeqNo, &end); err == nil && end != 0 && end < begin {
		return quickfix.ValueIsIncorrect(tag.EndSeqNo)
	}
	if next := a.g().cfg.NextSenderSeqNum; next != nil {
		if n, ok := next(s.cfg.ID); ok && int(begin) > n {
			t := tag.BeginSeqNo
			return quickfix.NewMessageRejectError(fmt.Sprintf("BeginSeqNo %d is beyond the messages sent: the last MsgSeqNum sent is %d", begin, n-1),
				rejectReasonValueIsIncorrect, &t)
		}
	}
	if !s.throttle(&s.resends, now) {
		a.g().metrics.throttled.Inc()
		return quickfix.NewMessageRejectError(fmt.Sprintf("more than %d ResendRequests in a second", ResendRequestsPerSecondMax),
			rejectReasonOther, nil)
	}
	return nil
}

// rejectReasonOther is SessionRejectReason 99 (Other).
const rejectReasonOther = 99

// rejectReasonValueIsIncorrect is SessionRejectReason 5 (Value is
// incorrect (out of range) for this tag).
const rejectReasonValueIsIncorrect = 5

// FromApp implements quickfix.Application: one FIX message in, at most one command out.
func (a *application) FromApp(m *quickfix.Message, id quickfix.SessionID) quickfix.MessageRejectError {
	g := a.g()
	s, ok := g.bySession[id]
	if !ok {
		return quickfix.UnsupportedMessageType()
	}
	if s.overRate.Load() {
		return nil // over its message rate, logged out (arrived): not answered
	}
	if isBusinessReject(m) {
		// The client's BusinessMessageReject of a message the venue sent (an
		// unsolicited TradingSessionStatus its engine does not take, say):
		// taken, never answered. Refused as an unsupported type, it drew a
		// BusinessMessageReject of a BusinessMessageReject, which a client
		// engine may answer in turn (QuickFIX/Go's own MessageRouter takes
		// one without an answer). It still counts in the message rate.
		return a.takeBusinessReject(s, m)
	}
	// Before anything reads or answers it: a value that is not printable
	// ASCII would be sent back (printable.go).
	if rej := refuseNonPrintable(m); rej != nil {
		return rej
	}
	if !s.loggedOn.Load() || s.loggingOut.Load() {
		// A message read after the session's Logout: QuickFIX/Go hands the
		// messages still buffered to the application after OnLogout, which
		// has journaled the disconnect, so an order taken here would rest
		// after its session's cancel-on-disconnect, with nobody logged on.
		// Or read once the venue has logged the session out (an operator's
		// logout or disable, a leadership moved, the FIX edge), before the
		// connection closes: the client was told the session ends, and an
		// order taken then would trade unseen until its next logon. It is
		// answered (the BusinessMessageReject is stored, so a resend brings
		// it) and takes nothing (gateway/doc.go, the paragraph on sessions).
		return businessReject(businessRejAppNotAvailable, businessRejectRefID(m), LoggedOutText)
	}
	// look: m may have a field of unsupportedTagSet (parseOrder, parseCancel
	// and onStatus look it up).
	look := true
	if s.cfg.Validator != nil {
		var err quickfix.MessageRejectError
		if m, look, err = s.cfg.Validator.CheckFor(m, &unsupportedTagSet); err != nil {
			return err
		}
	}
	now := g.cfg.Now()
	s.arrived.Store(g.monoNs()) // the start of the round trip of the command it publishes (roundtrip.go)
	if rej := thirdPartyRefused(m); rej != nil {
		return rej
	}
	if t, err := m.Header.GetBytes(tag.MsgType); err == nil && string(t) == "AD" {
		g.onTradeCaptureReportRequest(s, m)
		return nil
	}
	if s.cfg.DropCopy != nil {
		return g.dropCopyRequest(s, m)
	}
	// The type as bytes: switching on string(b) compares without a copy, where
	// m.MsgType() would allocate a string per message.
	msgTypeBytes, err := m.Header.GetBytes(tag.MsgType)
	if err != nil {
		return err
	}
	switch string(msgTypeBytes) {
	case "D":
		g.onNewOrderSingle(s, m, now, look)
	case "F":
		g.onCancel(s, m, now, look)
	case "G":
		g.onReplace(s, m, now, look)
	case "H":
		g.onStatus(s, m, now, look)
	case "q":
		g.onMassCancel(s, m, now)
	case "x":
		g.onSecurityListRequest(s, m)
	case "AF":
		return g.onMassStatus(s, m)
	case "g":
		g.onTradingSessionStatusRequest(s, m)
	default:
		if h := g.extraHandler(string(msgTypeBytes)); h != nil {
			return h(s.idx, m)
		}
		// QuickFIX/Go's UnsupportedMessageType has no BusinessRejectRefID,
		// which FIX 4.4 requires when the message has an ID field (a
		// SecurityDefinitionRequest's SecurityReqID, a QuoteRequest's
		// QuoteReqID): the same reject, with it.
		return businessReject(businessRejUnsupportedMsg, businessRejectRefID(m), unsupportedMessageTypeText)
	}
	return nil
}

// thirdPartyRefused refuses a message that names a third party in its
// header: OnBehalfOfCompID (115), a firm the sender says it acts for, or
// DeliverToCompID (128), one it asks the venue to forward to. The venue
// routes for no one: taken, such an order was entered as the sender's own
// (its risk, its cancel on disconnect, its drop copy) and answered to the
// sender alone, not to the firm it named. A BusinessMessageReject, not
// authorized (380=6), as a drop-copy session's request is refused; nil
// when the header names none.
func thirdPartyRefused(m *quickfix.Message) quickfix.MessageRejectError {
	for _, t := range [...]quickfix.Tag{tag.OnBehalfOfCompID, tag.DeliverToCompID} {
		if !m.Header.Has(t) {
			continue
		}
		v, _ := m.Header.GetBytes(t)
		return businessReject(businessRejNotAuthorized, businessRejectRefID(m), fmt.Sprintf("%s (%d) %s: the venue takes "+
			"no message for another firm; send it on that firm's own session", thirdPartyTagNames[t], t, v))
	}
	return nil
}

var thirdPartyTagNames = map[quickfix.Tag]string{tag.OnBehalfOfCompID: "OnBehalfOfCompID", tag.DeliverToCompID: "DeliverToCompID"}

// unsupportedMessageTypeText is the Text of a BusinessMessageReject of a
// message type the venue does not take (380=3): QuickFIX's words, as the
// reference scripts expect them.
const unsupportedMessageTypeText = "Unsupported Message Type"

// businessRejectRefIDTags are, per message type, the field whose value a
// BusinessMessageReject of that message echoes as its BusinessRejectRefID
// (379), which FIX 4.4 requires unless the message had none: every
// application type of FIX 4.4 with an identifier of its own, whichever
// the reason (380=3 for a type the venue does not take, 4 behind a
// Logout, 6 from a drop-copy session). A type not listed (News, an
// ExecutionReport, an OrderCancelReject…) is rejected without 379, as
// QuickFIX answers a type it does not support (380=3, the reference
// scripts' 2r_UnregisteredMsgType, an ExecutionReport).
var businessRejectRefIDTags = map[string]quickfix.Tag{
	"D": tag.ClOrdID, "F": tag.ClOrdID, "G": tag.ClOrdID, "H": tag.ClOrdID, "q": tag.ClOrdID,
	"AB": tag.ClOrdID, "AC": tag.ClOrdID,
	"E": tag.ListID, "K": tag.ListID, "L": tag.ListID, "M": tag.ListID,
	"s": tag.CrossID, "t": tag.CrossID, "u": tag.CrossID,
	"AF": tag.MassStatusReqID,
	"V":  tag.MDReqID,
	"x":  tag.SecurityReqID, "c": tag.SecurityReqID, "v": tag.SecurityReqID, "z": tag.SecurityReqID,
	"e":  tag.SecurityStatusReqID,
	"g":  tag.TradSesReqID,
	"AD": tag.TradeRequestID,
	"R":  tag.QuoteReqID, "AH": tag.RFQReqID, "S": tag.QuoteID, "Z": tag.QuoteID, "i": tag.QuoteID,
	"BE": tag.UserRequestID, "BF": tag.UserRequestID,
	// The other types of FIX 4.4 whose identifier a client would look the
	// reject up by.
	"Y": tag.MDReqID, "AG": tag.QuoteReqID, "AI": tag.QuoteID, "AJ": tag.QuoteRespID, "a": tag.QuoteStatusReqID,
	"N": tag.ListID, "r": tag.ClOrdID, "k": tag.ClientBidID, "l": tag.BidID,
	"6": tag.IOIID, "7": tag.AdvId, "C": tag.EmailThreadID,
	"J": tag.AllocID, "P": tag.AllocID, "AS": tag.AllocReportID, "AT": tag.AllocReportID,
	"AK": tag.ConfirmID, "AU": tag.ConfirmID, "BH": tag.ConfirmReqID,
	"T": tag.SettlInstMsgID, "AV": tag.SettlInstReqID,
	"AE": tag.TradeReportID, "AR": tag.TradeReportID, "AQ": tag.TradeRequestID,
	"AL": tag.PosReqID, "AM": tag.PosMaintRptID, "AN": tag.PosReqID, "AO": tag.PosMaintRptID, "AP": tag.PosMaintRptID,
	"AW": tag.AsgnRptID,
	"AX": tag.CollReqID, "AY": tag.CollAsgnID, "AZ": tag.CollRespID, "BA": tag.CollRptID, "BB": tag.CollInquiryID,
	"BG": tag.CollInquiryID,
	"BC": tag.NetworkRequestID, "BD": tag.NetworkResponseID,
	"o": tag.RegistID, "p": tag.RegistID,
	"d": tag.SecurityResponseID, "w": tag.SecurityResponseID, "y": tag.SecurityResponseID, "AA": tag.SecurityResponseID,
}

// businessRejectRefID is the BusinessRejectRefID (379) of a
// BusinessMessageReject of m: its ID field's value (businessRejectRefIDTags),
// or "" (379 left out) when m has none.
func businessRejectRefID(m *quickfix.Message) string {
	t, err := m.Header.GetBytes(tag.MsgType)
	if err != nil {
		return ""
	}
	id, ok := businessRejectRefIDTags[string(t)]
	if !ok {
		return ""
	}
	return string(fieldBytes(m, id))
}

// isBusinessReject reports a BusinessMessageReject (35=j).
func isBusinessReject(m *quickfix.Message) bool {
	t, err := m.Header.GetBytes(tag.MsgType)
	return err == nil && string(t) == "j"
}

// takeBusinessReject takes a client's BusinessMessageReject: validated and
// counted as any message and in fixvenue_client_business_rejects_total,
// logged at debug with what it refers to (not its Text, as nothing here logs
// message contents), never answered (FromApp).
func (a *application) takeBusinessReject(s *session, m *quickfix.Message) quickfix.MessageRejectError {
	g := a.g()
	if s.cfg.Validator != nil {
		var err quickfix.MessageRejectError
		if m, err = s.cfg.Validator.Check(m); err != nil {
			return err
		}
	}
	refSeq, _ := m.Body.GetString(tag.RefSeqNum)
	refType, _ := m.Body.GetString(tag.RefMsgType)
	reason, _ := m.Body.GetString(tag.BusinessRejectReason)
	g.metrics.clientRejects.Inc()
	g.log.Debug("client rejected a message", "session", s.cfg.ID.String(), "ref_seq_num", refSeq,
		"ref_msg_type", refType, "business_reject_reason", reason)
	return nil
}

// LoggedOutText answers an application message read after its session
// logged out (BusinessMessageReject 380=4): behind its Logout, or one the
// venue sent, or held when the venue disconnected it.
const LoggedOutText = "not processed: the session was logging out when it arrived; send it again once logged on"

// throttleLogout logs a session out that exceeded its message rate, once
// (arrived reads overRate, set here, before it counts); its disconnect then
// applies cancel-on-disconnect.
func (g *Gateway) throttleLogout(s *session) {
	s.overRate.Store(true)
	g.metrics.throttled.Inc()
	g.log.Warn("session over its message rate: logging out", "session", s.cfg.ID.String(), "limit_per_second", s.cfg.MessagesPerSecondLogout)
	g.logOut(s, "message rate limit exceeded")
	if st, ok := s.out.pacer.(InboundStopper); ok {
		// QuickFIX/Go answers some messages itself (a PossDupFlag one
		// below the expected MsgSeqNum without OrigSendingTime gets a
		// Reject), and would answer each until the connection closes.
		st.StopTaking(s.cfg.ID)
	}
}

// LogOutSession logs session id out, as LogOut does, with a Logout whose
// Text (58) is text: the FIX edge's request for what the client sent that
// FIX ends a session for (edge.Config.LogOut). False when the session is not
// logged on here; the edge then closes the connection.
func (g *Gateway) LogOutSession(id quickfix.SessionID, text string) bool {
	s, ok := g.bySession[id]
	if !ok {
		return false
	}
	// QuickFIX/Go answers a Logon before it calls OnLogon: a message the
	// client sends as soon as it reads the answer can reach the edge
	// first, and was closed on without the Logout that says why. Wait
	// for OnLogon, bounded: a Logon refused never comes to it.
	for deadline := time.Now().Add(logonSettleMax); !s.loggedOn.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	g.logOut(s, text)
	return true
}

// logonSettleMax bounds LogOutSession's wait for the OnLogon of a Logon
// QuickFIX/Go has answered.
const logonSettleMax = 500 * time.Millisecond

// logoutWriteWait is how long a Logout the venue starts is given to reach the
// client before its connection is closed.
const logoutWriteWait = 200 * time.Millisecond

// LogOut ends session idx, if logged on, with a Logout whose Text (58) says
// why, then closes its connection: a client is told it was logged out rather
// than finding the socket closed. Cancel-on-disconnect follows as for any
// disconnect.
//
// A session the venue is logging out already gets no second Logout: it has
// been told, and its connection closes as the first one said (a logout and
// then a disable sent a Logout each, with two texts, to a client that may
// have answered the first).
func (g *Gateway) LogOut(idx uint16, text string) {
	if s := g.sessionOf(idx); s != nil && s.loggedOn.Load() && !s.loggingOut.Load() {
		g.logOut(s, text)
	}
}

// LoggingOut reports whether session idx is logged on and the venue has
// sent it a Logout (an operator's, the message rate's, a stop's): its
// connection is about to close.
func (g *Gateway) LoggingOut(idx uint16) bool {
	s := g.sessionOf(idx)
	return s != nil && s.loggedOn.Load() && s.loggingOut.Load()
}

// LogOutAll ends every logged-on session as LogOut does, with text, and
// returns a channel closed once each of their connections has closed (the
// Logout written and logoutWriteWait passed, or the client gone first).
func (g *Gateway) LogOutAll(text string) <-chan struct{} {
	var closing []<-chan struct{}
	for _, s := range g.sessions {
		if !s.loggedOn.Load() {
			continue
		}
		if p := s.out.pacer; p != nil {
			if _, closed := p.WriteDone(s.cfg.ID); closed != nil {
				closing = append(closing, closed)
			}
		}
		g.logOut(s, text)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range closing {
			<-c
		}
	}()
	return done
}

// logOut sends s a Logout through its sender, so that it follows the answers
// already queued for the session instead of overtaking them, and closes the
// connection logoutWriteWait later. From now until the session logs on
// again, FromApp refuses its application messages (380=4, LoggedOutText).
func (g *Gateway) logOut(s *session, text string) {
	s.loggingOut.Store(true)
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "5")
	m.Body.SetString(tag.Text, text)
	s.out.enqueue(m)
	if p := s.out.pacer; p != nil {
		// This connection, not one the client logs on again with once it
		// has answered the Logout, which can be sooner.
		conn := s.out.conn()
		go func() {
			time.Sleep(logoutWriteWait)
			p.Disconnect(s.cfg.ID, conn)
		}()
	}
}
