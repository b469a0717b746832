package marketdata

import (
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Call auctions on the feed (see the package documentation, "Auctions"):
// an AuctionIndicative or AuctionUncrossed event becomes an AuctionUpdate,
// a VolatilityInterruption gives the reason of the InstrumentStatus that
// follows it, and an uncross's trades are Trade messages flagged auction.
// Market orders waiting for an uncross are in no book: their accepts,
// fills and cancels change nothing the feed shows but the trades.

// auctionDecoders are the flyweights of the auction events.
type auctionDecoders struct {
	indicative   venue.AuctionIndicative
	uncrossed    venue.AuctionUncrossed
	interruption venue.VolatilityInterruption
}

// isCall reports whether a status is a call phase.
func isCall(s mdsbe.TradingStatus) bool {
	return s == mdsbe.TradingStatusOpeningCall || s == mdsbe.TradingStatusClosingCall || s == mdsbe.TradingStatusVolatilityAuction
}

// waitsForUncross reports whether an accepted order of this type on this
// instrument waits for an uncross off the book: a market order in a call.
func waitsForUncross(t *Tracker, instrumentID uint32, ordType venue.OrdType) bool {
	if ordType != venue.OrdTypeMarket {
		return false
	}
	_, in, err := t.instrument(instrumentID)
	return err == nil && isCall(in.status)
}

func (t *Tracker) applyAuction(tid uint16, ev []byte) error {
	d := &t.auctions
	var u auctionUpdate
	switch tid {
	case venue.AuctionIndicativeTemplateID:
		if err := d.indicative.WrapDecode(ev, 0); err != nil {
			return err
		}
		u = auctionUpdateOf(&d.indicative, mdsbe.AuctionUpdateKindIndicative)
	case venue.AuctionUncrossedTemplateID:
		if err := d.uncrossed.WrapDecode(ev, 0); err != nil {
			return err
		}
		u = auctionUpdateOf(&d.uncrossed, mdsbe.AuctionUpdateKindUncrossed)
	default: // VolatilityInterruption
		if err := d.interruption.WrapDecode(ev, 0); err != nil {
			return err
		}
		e := &d.interruption
		if err := t.beginEvent(e.CauseSeq(), e.TimestampNs()); err != nil {
			return err
		}
		_, in, err := t.instrument(e.InstrumentID())
		if err != nil {
			return err
		}
		in.statusReason = mdsbe.StatusReasonVolatilityInterruption
		return nil
	}
	if err := t.beginEvent(u.causeSeq, u.timeNs); err != nil {
		return err
	}
	if u.kind == mdsbe.AuctionUpdateKindIndicative {
		// The matcher publishes an indicative after its command has
		// changed the book (core, refreshIndicatives): the orders that
		// command entered rest now, in a call without trading, so they go
		// out before the uncross computed with them, not after it.
		if err := t.publishPending(true); err != nil {
			return err
		}
	}
	_, in, err := t.instrument(u.instrumentID)
	if err != nil {
		return err
	}
	if !u.side.Valid() || !u.rule.Valid() || !mdsbe.TradingStatus(u.status).Valid() {
		return ErrInconsistent
	}
	if u.kind == mdsbe.AuctionUpdateKindIndicative {
		in.indicative = Indicative{Active: true, PriceTicks: u.priceTicks, MatchedQty: u.matchedQty,
			ImbalanceSide: u.side, ImbalanceQty: u.imbalanceQty, Rule: u.rule, Phase: u.status}
	} else {
		in.indicative = Indicative{}
	}
	return t.emitAuction(in, &u)
}

// Indicative is the uncross a call would make now, as its last
// AuctionIndicative said; Active is false outside a call and after the
// uncross (a halted call keeps it).
type Indicative struct {
	Active        bool
	PriceTicks    int64
	MatchedQty    int64
	ImbalanceSide venue.ImbalanceSide
	ImbalanceQty  int64
	Rule          venue.AuctionRule
	// Phase is the status the AuctionIndicative carried, which its
	// AuctionUpdate published: a snapshot repeats it, not the instrument's
	// status now, which a call's extension (VolatilityAuction) or a halt
	// has changed since (package documentation, "Auctions").
	Phase venue.TradingStatus
}

// auctionUpdate is what an AuctionUpdate message says.
type auctionUpdate struct {
	causeSeq     uint64
	timeNs       int64
	instrumentID uint32
	status       venue.TradingStatus
	kind         mdsbe.AuctionUpdateKind
	side         venue.ImbalanceSide
	rule         venue.AuctionRule
	priceTicks   int64
	matchedQty   int64
	imbalanceQty int64
}

// auctionEvent is what AuctionIndicative and AuctionUncrossed both carry.
// The tracker passes its own flyweights by pointer, so the interface does
// not allocate; auction events come only in call phases (an indicative
// when the uncross it shows changes, throttled by the matcher), never on
// the continuous order path.
type auctionEvent interface {
	CauseSeq() uint64
	TimestampNs() int64
	InstrumentID() uint32
	Status() venue.TradingStatus
	ImbalanceSide() venue.ImbalanceSide
	Rule() venue.AuctionRule
	PriceTicks() int64
	MatchedQty() int64
	ImbalanceQty() int64
}

// auctionUpdateOf reads the AuctionUpdate of kind that e says.
func auctionUpdateOf(e auctionEvent, kind mdsbe.AuctionUpdateKind) auctionUpdate {
	return auctionUpdate{e.CauseSeq(), e.TimestampNs(), e.InstrumentID(), e.Status(), kind,
		e.ImbalanceSide(), e.Rule(), e.PriceTicks(), e.MatchedQty(), e.ImbalanceQty()}
}

func (t *Tracker) emitAuction(in *instrument, u *auctionUpdate) error {
	buf, off, err := t.out.Reserve(mdsbe.AuctionUpdateEncodedLength, t.timeNs)
	if err != nil {
		return err
	}
	m := &t.mAuction
	if err := m.WrapEncode(buf, off); err != nil {
		return err
	}
	m.SetInstrumentID(uint32(in.def.ID))
	m.SetStatus(mdsbe.TradingStatus(u.status))
	m.SetKind(u.kind)
	m.SetImbalanceSide(mdsbe.ImbalanceSide(u.side))
	m.SetRule(mdsbe.AuctionRule(u.rule))
	m.SetRptSeq(t.nextRptSeq(in))
	m.SetPriceTicks(u.priceTicks)
	m.SetMatchedQty(u.matchedQty)
	m.SetImbalanceQty(u.imbalanceQty)
	m.SetTransactTimeNs(t.timeNs)
	return nil
}
