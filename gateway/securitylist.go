package gateway

import (
	"strconv"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
)

// onSecurityListRequest answers with every instrument (559=4) or one symbol
// (559=0), fields in the dictionary's order (see fixBody).
//
// FIX 4.4 has no MinPriceIncrement (969 is FIX 5.0, and a strict FIX 4.4
// client refuses it as an undefined tag), no maximum order quantity and no
// price limits in SecurityList. Each entry therefore carries the tick size,
// the minimum quantity and the price band as Stipulations (StipulationType
// MININCR, MINQTY and PRICE, the FIX 4.4 values for them), the lot as
// RoundLot (561), the minimum as MinTradeVol (562), and all of it, the
// maximum quantity included, in the entry's Text (58). See "SecurityList"
// in docs/ARCHITECTURE.md.
func (g *Gateway) onSecurityListRequest(s *session, req *quickfix.Message) {
	g.awaitEarlierAnswers(s)
	var w fixBody
	reqID, _ := req.Body.GetString(tag.SecurityReqID)
	w.str(tag.SecurityReqID, reqID).str(tag.SecurityResponseID, g.gatewayExecID())
	typ, _ := req.Body.GetString(tag.SecurityListRequestType)
	var list []*Instrument
	switch typ {
	case "4":
		list = g.instruments.Load().list
	case "0":
		// An instrument named by more than its Symbol is none of the
		// venue's (instrumentTags): no instrument is found, as an order
		// naming it so is refused.
		sym, _ := req.Body.GetString(tag.Symbol)
		if in := g.bySymbol(sym); in != nil && unknownInstrument(req, []byte(sym)) == "" {
			list = append(list, in)
		}
	default:
		// SecurityList has no Text (58) outside its entries in FIX 4.4:
		// the result alone says the request type is not supported.
		w.str(tag.SecurityRequestResult, string(securityRequestInvalid))
		s.out.enqueue(w.message("y"))
		return
	}
	list = securityListFilter(req, list, g.cfg.Currency)
	if len(list) == 0 {
		w.str(tag.SecurityRequestResult, string(securityRequestNoInstrument))
		s.out.enqueue(w.message("y"))
		return
	}
	w.str(tag.SecurityRequestResult, string(securityRequestValid)).int(tag.TotNoRelatedSym, int64(len(list))).
		str(tag.LastFragment, string(fixYes)).int(tag.NoRelatedSym, int64(len(list)))
	for _, in := range list {
		writeSecurity(&w, in, g.cfg.Currency)
	}
	s.out.enqueue(w.message("y"))
}

// writeSecurity writes one NoRelatedSym entry, in the group's order: Symbol,
// Currency (the venue's, when it has one), NoStipulations, RoundLot,
// MinTradeVol, Text.
func writeSecurity(w *fixBody, in *Instrument, currency string) {
	tick := in.Tick.String()
	minQty := strconv.FormatInt(in.MinQty, 10)
	lot := strconv.FormatInt(in.LotSize, 10)
	text := "tick size " + tick + ", lot " + lot + ", quantity " + minQty + " to " + strconv.FormatInt(in.MaxQty, 10)
	band := ""
	stips := int64(2)
	if in.BandHighTicks > 0 {
		band = string(decimal.FormatTicks(nil, in.BandLowTicks, in.Tick)) + "-" + string(decimal.FormatTicks(nil, in.BandHighTicks, in.Tick))
		text += ", price band " + band
		stips++
	}
	w.str(tag.Symbol, in.Symbol)
	if currency != "" {
		w.str(tag.Currency, currency)
	}
	w.int(tag.NoStipulations, stips).
		str(tag.StipulationType, string(stipulationMinIncrement)).str(tag.StipulationValue, tick).
		str(tag.StipulationType, string(stipulationMinQty)).str(tag.StipulationValue, minQty)
	if band != "" {
		w.str(tag.StipulationType, string(stipulationPriceRange)).str(tag.StipulationValue, band)
	}
	w.str(tag.RoundLot, lot).str(tag.MinTradeVol, minQty).str(tag.Text, text)
}

// securityListFilter restricts list to the instruments the request's
// Currency (15) and TradingSessionID (336) ask for, as FIX 4.4 defines
// them on a SecurityListRequest. Every instrument trades in the venue's
// currency, and an instrument's trading session is its Symbol (ALL: the
// venue's, every instrument; "TradingSessionStatusRequest" in
// docs/ARCHITECTURE.md). Ignored, a request for EUR instruments, or for
// another trading session, was answered with every USD instrument as a
// valid list (560=0): a client would take them for what it asked.
func securityListFilter(req *quickfix.Message, list []*Instrument, currency string) []*Instrument {
	if cur, err := req.Body.GetString(tag.Currency); err == nil && currency != "" && cur != currency {
		return nil
	}
	ts, err := req.Body.GetString(tag.TradingSessionID)
	if err != nil || ts == "ALL" {
		return list
	}
	for _, in := range list {
		if in.Symbol == ts {
			return []*Instrument{in}
		}
	}
	return nil
}
