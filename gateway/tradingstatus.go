package gateway

import (
	"errors"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Trading status over FIX: TradingSessionStatusRequest (g) is answered with
// TradingSessionStatus (h), and every logged-on session gets an unsolicited
// h (325=Y) when an instrument is opened, halted or closed. FIX 4.4's h has
// no instrument: an instrument's status travels as the trading session named
// after its symbol (TradingSessionID 336 = Symbol), the venue's as the
// session venueTradingSessionID. See "TradingSessionStatusRequest" in
// docs/ARCHITECTURE.md.

// venueTradingSessionID names the venue-wide trading session: a g without
// TradingSessionID, or with this one, is answered with the venue's status.
const venueTradingSessionID = "ALL"

// statusChange is a TradingStatusChanged waiting for handOver.
type statusChange struct {
	instrumentID uint32
	status       venue.TradingStatus
	// extendsClose: a volatility auction entered from the closing call,
	// its extension (core, "Auctions"), which FIX tells as the pre-close.
	extendsClose bool
}

// extendsCloseBit marks a volatility auction that extends the closing call
// in an instrument's status word (instrumentTable.status).
const extendsCloseBit = 1 << 8

// onTradingStatusChanged (outbound) builds an unsolicited h for every
// session logged on at the hand-over; the status itself changes there too.
func (g *Gateway) onTradingStatusChanged(e *venue.TradingStatusChanged) {
	in := g.byID(e.InstrumentID())
	if in == nil {
		return
	}
	change := statusChange{instrumentID: e.InstrumentID(), status: e.Status(),
		extendsClose: e.Status() == venue.TradingStatusVolatilityAuction && g.heldStatus(e.InstrumentID()) == venue.TradingStatusClosingCall}
	g.statusHeld = append(g.statusHeld, change)
	if g.uncross.instrumentID == e.InstrumentID() {
		g.uncross.active = false // the uncross's trades and cancels are done
	}
	text := g.statusText(e.InstrumentID(), e.Status())
	for _, s := range g.sessions {
		// Built for every session: which are logged on is decided at the
		// hand-over (handsOver).
		m := tradingSessionStatus("", in.Symbol, change.tradSes(), text)
		m.Body.SetString(tag.UnsolicitedIndicator, string(fixYes))
		g.held = append(g.held, heldAnswer{idx: s.idx, m: m, broadcast: true})
	}
}

// statusText says what a status means for orders, and why an instrument
// entered a volatility auction (the VolatilityInterruption before it).
func (g *Gateway) statusText(instrumentID uint32, status venue.TradingStatus) string {
	switch status {
	case venue.TradingStatusOpeningCall:
		return "opening call: orders and cancels accepted, no matching until the uncross at the open"
	case venue.TradingStatusClosingCall:
		return "closing call: orders and cancels accepted, no matching until the uncross at the close"
	case venue.TradingStatusVolatilityAuction:
		if g.interruption.instrumentID == instrumentID && g.interruption.text != "" {
			text := g.interruption.text
			g.interruption.text = ""
			return text
		}
		return "volatility auction: orders and cancels accepted, no matching until the uncross"
	}
	return ""
}

// onVolatilityInterruption (outbound) keeps the reason for the
// TradingSessionStatus of the status change that follows it.
func (g *Gateway) onVolatilityInterruption(e *venue.VolatilityInterruption) {
	in := g.byID(e.InstrumentID())
	if in == nil {
		return
	}
	px := func(ticks int64) string { return string(decimal.FormatTicks(nil, ticks, in.Tick)) }
	what := "a trade at "
	if e.OrderID() == 0 { // a call's uncross: the call is extended (core, "Auctions")
		what = "the uncross at "
	}
	g.interruption.instrumentID = e.InstrumentID()
	g.interruption.text = "volatility interruption: " + what + px(e.PriceTicks()) + " would be outside " +
		px(e.BandLowTicks()) + " to " + px(e.BandHighTicks()) + " around " + px(e.ReferencePriceTicks()) +
		"; volatility auction until " + time.Unix(0, e.AuctionEndNs()).UTC().Format(time.RFC3339Nano)
}

// tradingSessionSubID is FIX TradingSessionSubID (625), a free string in
// FIX 4.4 (so not in fixenums.go, whose values the dictionary enumerates): the venue uses the values FIX 5.0 defines for it to say in which
// auction a trade was made (an ExecutionReport of an uncross).
type tradingSessionSubID string

const (
	tradingSessionSubIDOpeningAuction  tradingSessionSubID = "2"
	tradingSessionSubIDClosingAuction  tradingSessionSubID = "4"
	tradingSessionSubIDIntradayAuction tradingSessionSubID = "6"
)

// auctionSubID is the TradingSessionSubID (625) of an uncross's trades
// from the call phase they end.
func auctionSubID(phase venue.TradingStatus) tradingSessionSubID {
	switch phase {
	case venue.TradingStatusOpeningCall:
		return tradingSessionSubIDOpeningAuction
	case venue.TradingStatusClosingCall:
		return tradingSessionSubIDClosingAuction
	}
	return tradingSessionSubIDIntradayAuction
}

// tradSes is the TradSesStatus (340) of a status change.
func (c statusChange) tradSes() tradSesStatus {
	if c.extendsClose {
		return tradSesPreClose
	}
	return tradSesStatusOf(c.status)
}

// heldStatus is an instrument's status as of the last status change held
// for the hand-over, else its current one (outbound goroutine).
func (g *Gateway) heldStatus(id uint32) venue.TradingStatus {
	for i := len(g.statusHeld) - 1; i >= 0; i-- {
		if g.statusHeld[i].instrumentID == id {
			return g.statusHeld[i].status
		}
	}
	return g.instrumentStatus(id)
}

// applyStatus makes the held status changes (handOver).
func (g *Gateway) applyStatus() {
	t := g.instruments.Load()
	for _, c := range g.statusHeld {
		if st := t.status[c.instrumentID]; st != nil {
			w := uint32(c.status)
			if c.extendsClose {
				w |= extendsCloseBit
			}
			st.Store(w)
		}
	}
}

// instrumentStatus returns an instrument's current trading status.
func (g *Gateway) instrumentStatus(id uint32) venue.TradingStatus {
	return g.instrumentStatusChange(id).status
}

// instrumentStatusChange returns an instrument's current trading status,
// with whether it extends the closing call.
func (g *Gateway) instrumentStatusChange(id uint32) statusChange {
	if st := g.instruments.Load().status[id]; st != nil {
		w := st.Load()
		return statusChange{instrumentID: id, status: venue.TradingStatus(w &^ extendsCloseBit), extendsClose: w&extendsCloseBit != 0}
	}
	return statusChange{instrumentID: id, status: venue.TradingStatusClosed}
}

// venueStatus is the venue-wide status: halted after a failure stop, else
// open while any instrument is open, else pre-close while any is in its
// closing call, pre-open while any is in its opening call or a volatility
// auction (orders are taken in both), halted while any is halted, closed.
// (It answered closed through the whole pre-open.)
func (g *Gateway) venueStatus() tradSesStatus {
	if g.halted() != "" {
		return tradSesHalted
	}
	// In order of precedence, lowest first.
	order := [...]tradSesStatus{tradSesClosed, tradSesHalted, tradSesPreOpen, tradSesPreClose}
	best := 0
	for id := range g.instruments.Load().status {
		rank := 0
		switch g.instrumentStatusChange(id).tradSes() {
		case tradSesOpen:
			return tradSesOpen
		case tradSesHalted:
			rank = 1
		case tradSesPreOpen:
			rank = 2
		case tradSesPreClose:
			rank = 3
		}
		best = max(best, rank)
	}
	return order[best]
}

func tradingSessionStatus(reqID, sessionID string, status tradSesStatus, text string) *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetString(tag.MsgType, "h")
	if reqID != "" {
		m.Body.SetString(tag.TradSesReqID, reqID)
	}
	m.Body.SetString(tag.TradingSessionID, sessionID)
	m.Body.SetString(tag.TradSesStatus, string(status))
	if text != "" {
		m.Body.SetString(tag.Text, text)
	}
	return m
}

// onTradingSessionStatusRequest answers a g with the status of the trading
// session it names: an instrument's symbol, or the venue's (none or "ALL").
// An unknown TradingSessionID is answered with TradSesStatus 6 (request
// rejected) and TradSesStatusRejReason 1 (unknown trading session). Every
// SubscriptionRequestType gets the current status (the unsolicited updates
// go to every logged-on session regardless). Missing required fields never
// reach here: the data dictionary answers them with a session Reject.
func (g *Gateway) onTradingSessionStatusRequest(s *session, req *quickfix.Message) {
	g.awaitEarlierAnswers(s)
	reqID, _ := req.Body.GetString(tag.TradSesReqID)
	id, _ := req.Body.GetString(tag.TradingSessionID)
	var m *quickfix.Message
	switch in := g.bySymbol(id); {
	case id == "" || id == venueTradingSessionID:
		m = tradingSessionStatus(reqID, venueTradingSessionID, g.venueStatus(), "")
	case in != nil:
		m = tradingSessionStatus(reqID, id, g.instrumentStatusChange(in.ID).tradSes(), "")
	default:
		m = tradingSessionStatus(reqID, id, tradSesRejected,
			"unknown TradingSessionID "+id+": use a symbol, or "+venueTradingSessionID+" for the venue")
		m.Body.SetString(tag.TradSesStatusRejReason, string(tradSesRejUnknownSession))
	}
	s.out.enqueue(m)
}

// ErrUnknownSymbol is returned for an instrument the venue does not list.
var ErrUnknownSymbol = errors.New("unknown symbol")

// SetTradingStatus journals an operator's SetTradingStatus command for an
// instrument: the matcher applies it (a halted instrument takes cancels
// only) and its TradingStatusChanged reaches every logged-on session as an
// unsolicited TradingSessionStatus. It waits up to wait for a command slot.
func (g *Gateway) SetTradingStatus(symbol string, status venue.TradingStatus, wait time.Duration) error {
	in := g.bySymbol(symbol)
	if in == nil {
		return ErrUnknownSymbol
	}
	if !status.Valid() {
		return errors.New("gateway: invalid trading status " + status.String())
	}
	return publishWait(g, wait, func(cmd *venue.SetTradingStatus) {
		cmd.SetInstrumentID(in.ID)
		cmd.SetStatus(status)
	})
}

// publishWait publishes a command that must not be lost (a disconnect, an
// operator's): it claims a slot (claimWait, up to deadline), wraps the
// command's flyweight (*M) over it, stamps its sequence and time, has set
// write the rest, and publishes it.
func publishWait[M any, P interface {
	*M
	WrapEncode(buf []byte, off int) error
	SetSeq(uint64)
	SetTimestampNs(int64)
}](g *Gateway, deadline time.Duration, set func(P)) error {
	seq, slot, err := g.claimWait(deadline)
	if err != nil {
		return err
	}
	cmd := P(new(M))
	_ = cmd.WrapEncode(slot, 0) // a slot holds any command
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(g.cfg.Now())
	set(cmd)
	g.commands.Publish(seq)
	return nil
}
