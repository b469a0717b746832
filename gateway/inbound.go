package gateway

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// rejection is a refusal decided in the gateway, before any command exists.
type rejection struct {
	reason ordRejReason // FIX OrdRejReason (103); cxlRejReasonOfOrd gives CxlRejReason (102)
	text   string       // FIX Text (58)
}

var qtyTick = decimal.Tick{Mantissa: 1, Scale: 0}

// fieldBytes returns a body field's value, nil when it is absent. It asks Has
// first: QuickFIX/Go's GetBytes builds a formatted reject error for an
// absent field (several allocations), and most orders omit some of the
// optional fields read here.
func fieldBytes(m *quickfix.Message, tag quickfix.Tag) []byte {
	if !m.Body.Has(tag) {
		return nil
	}
	b, err := m.Body.GetBytes(tag)
	if err != nil {
		return nil
	}
	return b
}

// orderFields are the fields shared by NewOrderSingle and OrderCancelReplaceRequest.
type orderFields struct {
	inst       *Instrument
	side       venue.Side
	ordType    venue.OrdType
	tif        venue.TimeInForce
	priceTicks int64
	qty        int64
	expireNs   int64
	postOnly   bool
	clOrdID    []byte
	account    []byte
	stopPx     int64 // Stop and StopLimit: StopPx (99) in ticks
	maxFloor   int64 // an iceberg's display quantity, MaxFloor (111); 0 when absent
}

// parseOrder validates an order's fields; a refusal carries the FIX reason
// and text. look is false when m surely has none of unsupportedTagSet
// (FromApp learns it from Validator.CheckFor).
func (g *Gateway) parseOrder(m *quickfix.Message, look bool) (orderFields, *rejection) {
	var o orderFields
	o.clOrdID = fieldBytes(m, tag.ClOrdID)
	if len(o.clOrdID) == 0 || len(o.clOrdID) > venue.ClOrdIDLength {
		return o, &rejection{ordRejOther, "ClOrdID must be 1 to " + strconv.Itoa(venue.ClOrdIDLength) + " characters"}
	}
	o.account = fieldBytes(m, tag.Account)
	if len(o.account) > venue.AccountLength {
		return o, &rejection{ordRejUnknownAccount, "Account longer than " + strconv.Itoa(venue.AccountLength) + " characters"}
	}
	var text string
	if o.inst, text = g.namedInstrument(m, look); o.inst == nil {
		return o, &rejection{ordRejUnknownSymbol, text}
	}
	var ok bool
	if o.side, ok = parseSide(fieldBytes(m, tag.Side)); !ok {
		return o, &rejection{ordRejUnsupportedOrderChar, "unsupported side " + string(fieldBytes(m, tag.Side))}
	}
	if o.ordType, ok = parseOrdType(fieldBytes(m, tag.OrdType)); !ok {
		return o, &rejection{ordRejUnsupportedOrderChar, "unsupported order type " + string(fieldBytes(m, tag.OrdType))}
	}
	if o.tif, ok = parseTIF(fieldBytes(m, tag.TimeInForce)); !ok {
		return o, &rejection{ordRejUnsupportedOrderChar, "unsupported time in force " + string(fieldBytes(m, tag.TimeInForce))}
	}
	qtyText := fieldBytes(m, tag.OrderQty)
	qty, err := decimal.ParseTicks(qtyText, qtyTick)
	if errors.Is(err, decimal.ErrRange) && qtyText[0] != '-' {
		// A whole number too large for the venue is above every
		// instrument's maximum: said as the matcher says it of one above
		// this instrument's, not as a quantity that is not a number.
		return o, &rejection{ordRejIncorrectQuantity, RejectText(venue.RejectReasonQtyOutOfRange)}
	}
	if err != nil || qty <= 0 {
		return o, &rejection{ordRejIncorrectQuantity, "OrderQty must be a positive whole number"}
	}
	o.qty = qty
	price := fieldBytes(m, tag.Price)
	limit := o.ordType == venue.OrdTypeLimit || o.ordType == venue.OrdTypeStopLimit
	switch {
	case limit && len(price) == 0:
		return o, &rejection{ordRejOther, "limit order without Price"}
	case !limit && len(price) > 0:
		// A market or stop order trades at any price: a Price there would
		// be a limit the order does not keep, so it is refused, not dropped
		// (doc.go, "Unsupported order fields").
		return o, &rejection{ordRejUnsupportedOrderChar, "Price (44) is only allowed on limit (40=2) and stop-limit (40=4) orders"}
	}
	if limit {
		ticks, err := decimal.ParseTicks(price, o.inst.Tick)
		if errors.Is(err, decimal.ErrOffTick) {
			return o, &rejection{ordRejOther, "price " + string(price) + " is not a multiple of the tick size " + o.inst.Tick.String()}
		}
		if errors.Is(err, decimal.ErrRange) && price[0] != '-' {
			// Too large for the venue, so beyond the band: said so, with its edges.
			return o, &rejection{ordRejOther, g.rejectText(venue.RejectReasonPriceOutOfBand, o.inst.ID, venue.OrdTypeLimit, 0)}
		}
		if err != nil || ticks <= 0 {
			return o, &rejection{ordRejOther, "invalid price " + string(price)}
		}
		o.priceTicks = ticks
	}
	if rej := o.parseStopPx(g, fieldBytes(m, tag.StopPx)); rej != nil {
		return o, rej
	}
	if mf := fieldBytes(m, tag.MaxFloor); len(mf) > 0 {
		// Its limits against the quantity and the lot are the matcher's
		// (core, "Icebergs"), answered with OrdRejReason 13.
		v, err := decimal.ParseTicks(mf, qtyTick)
		if err != nil || v < 0 {
			return o, &rejection{ordRejIncorrectQuantity, "MaxFloor (111) must be a whole number, 0 or more, not " + string(mf)}
		}
		o.maxFloor = v
	}
	if o.tif == venue.TimeInForceGTD {
		var rej *rejection
		if o.expireNs, rej = g.parseExpiry(m); rej != nil {
			return o, rej
		}
	}
	if inst := fieldBytes(m, tag.ExecInst); len(inst) > 0 {
		for _, f := range bytes.Fields(inst) {
			if len(f) == 1 && f[0] == '6' {
				o.postOnly = true
			} else {
				return o, &rejection{ordRejUnsupportedOrderChar, "unsupported ExecInst " + string(f)}
			}
		}
	}
	if rej := o.restingOnly(); rej != nil {
		return o, rej
	}
	if rej := o.unsupported(m, look, g.cfg.Currency); rej != nil {
		return o, rej
	}
	return o, nil
}

// unsupportedOrderFields are fields of NewOrderSingle and
// OrderCancelReplaceRequest that would change how an order trades and that
// the venue does not implement: an order carrying one is refused with
// OrdRejReason 11 and a Text naming it, never traded as if it were absent
// (gateway/doc.go, "Unsupported order fields").
var unsupportedOrderFields = [...]struct {
	tag  quickfix.Tag
	name string
}{
	{tag.MaxShow, "MaxShow (210): use MaxFloor (111) for an iceberg"},
	{tag.EffectiveTime, "EffectiveTime (168): orders are active on arrival"},
	{tag.CashOrderQty, "CashOrderQty (152): give OrderQty (38)"},
	{tag.OrderPercent, "OrderPercent (516): give OrderQty (38)"},
	{tag.PegOffsetValue, "PegOffsetValue (211): no pegged orders"},
	{tag.DiscretionInst, "DiscretionInst (388): no discretion"},
	{tag.DiscretionOffsetValue, "DiscretionOffsetValue (389): no discretion"},
	{tag.TargetStrategy, "TargetStrategy (847): no strategies"},
	{tag.ParticipationRate, "ParticipationRate (849): no strategies"},
	{tag.Spread, "Spread (218): prices are per unit"},
	{tag.Yield, "Yield (236): prices are per unit"},
}

// instrumentTags are the fields of FIX 4.4's Instrument component that
// name an instrument otherwise than by its Symbol (SymbolSfx, SecurityID
// and its source, alternative IDs, SecurityExchange) or give it terms of
// its own (a maturity, an option's put or call and strike, coupons, repo
// terms, events), and the
// underlyings (NoUnderlyings) or legs (NoLegs) of a derivative. The venue
// names its instruments by Symbol alone and lists nothing else of them
// (SecurityList), so an order, a mass cancel by security or a
// MarketDataRequest naming its instrument by one of these asks for one the
// venue cannot tell apart: it is refused as an unknown symbol (security),
// never served on the Symbol alone (gateway/fixmd reads
// the same list). The component's other fields classify or describe the
// instrument (instrumentDescriptions) and are taken and not used, as
// fields that only describe the order are: the venue keeps no class of its
// instruments to hold them against, and clients commonly send one
// (SecurityType CS) with every order.
var instrumentTags = [...]quickfix.Tag{
	tag.SymbolSfx, tag.SecurityID, tag.SecurityIDSource, tag.NoSecurityAltID, tag.SecurityExchange,
	tag.MaturityMonthYear, tag.MaturityDate, tag.CouponPaymentDate, tag.IssueDate,
	tag.RepoCollateralSecurityType, tag.RepurchaseTerm, tag.RepurchaseRate, tag.Factor, tag.RedemptionDate,
	tag.PutOrCall, tag.StrikePrice, tag.StrikeCurrency, tag.OptAttribute, tag.ContractMultiplier, tag.CouponRate,
	tag.Pool, tag.ContractSettlMonth, tag.CPProgram, tag.CPRegType, tag.NoEvents, tag.DatedDate,
	tag.InterestAccrualDate,
	tag.NoUnderlyings, tag.NoLegs,
}

// instrumentDescriptions are the rest of the Instrument component but
// Symbol: taken and not used (instrumentTags).
// TestInstrumentTagsAreTheDictionarys checks both lists against the
// dictionary.
var instrumentDescriptions = [...]quickfix.Tag{
	tag.Product, tag.CFICode, tag.SecurityType, tag.SecuritySubType, tag.CreditRating, tag.InstrRegistry,
	tag.CountryOfIssue, tag.StateOrProvinceOfIssue, tag.LocaleOfIssue, tag.Issuer, tag.EncodedIssuerLen,
	tag.EncodedIssuer, tag.SecurityDesc, tag.EncodedSecurityDescLen, tag.EncodedSecurityDesc,
}

// NamesInstrument reports whether t is one of instrumentTags: a field an
// instrument named with it is refused for.
func NamesInstrument(t quickfix.Tag) bool {
	for _, n := range &instrumentTags {
		if n == t {
			return true
		}
	}
	return false
}

// unknownInstrument returns the Text of the refusal of m's instrument,
// named by symbol, when m also names it by one of instrumentTags, else "".
func unknownInstrument(m *quickfix.Message, symbol []byte) string {
	for _, t := range &instrumentTags {
		if v := fieldBytes(m, t); v != nil {
			return UnknownInstrumentText(string(symbol), t, v)
		}
	}
	return ""
}

// noSymbolText refuses an instrument named by none of the fields of
// FIX 4.4's Instrument component.
const noSymbolText = "unknown symbol: no Symbol (55); the venue's instruments are named by Symbol alone"

// namedInstrument returns the listed instrument an order, cancel, replace
// or status request names by its Symbol, or nil and the Text of the
// request's refusal as an unknown symbol, which names what was wrong: a
// Symbol the venue does not list; no Symbol, naming the field the
// instrument was named by instead (a SecurityID, say) if any; or, when look
// (as for parseOrder), the Symbol and also one of instrumentTags.
func (g *Gateway) namedInstrument(m *quickfix.Message, look bool) (*Instrument, string) {
	sym := fieldBytes(m, tag.Symbol)
	if len(sym) == 0 {
		if look {
			if text := unknownInstrument(m, nil); text != "" {
				return nil, text
			}
		}
		return nil, noSymbolText
	}
	inst := g.bySymbolBytes(sym)
	if inst == nil {
		return nil, "unknown symbol " + string(sym)
	}
	if look {
		if text := unknownInstrument(m, sym); text != "" {
			return nil, text
		}
	}
	return inst, ""
}

// UnknownInstrumentText is the Text of the refusal of an instrument named
// by symbol (none when empty) and by field t (value v), which the venue
// does not name its instruments by: for an order (OrdRejReason 1), a
// cancel or status request and a MarketDataRequest (MDReqRejReason 0)
// alike.
func UnknownInstrumentText(symbol string, t quickfix.Tag, v []byte) string {
	named := symbol + " with tag "
	if symbol == "" {
		named = "no Symbol (55), and tag "
	}
	return "unknown symbol: " + named + strconv.Itoa(int(t)) + "=" + string(v) +
		" names none of the venue's instruments, which are named by Symbol (55) alone"
}

// expiryYearMax is the last year an expiry is taken in: Unix nanoseconds
// in an int64 end in April 2262.
const expiryYearMax = 2261

// expiryEarliest is the earliest time Unix nanoseconds in an int64 hold
// (September 1677). An expiry before it has long passed: it is given as
// that time, which the matcher refuses as past, since its own nanoseconds
// would wrap round into the future.
var expiryEarliest = time.Unix(0, math.MinInt64)

// parseExpiry reads a GTD order's expiry (gateway/doc.go, "GTD expiry"):
// ExpireTime (126), or else ExpireDate (432), a local market date the order
// may trade through, which ends at MarketDateEnd. The result is the last
// nanosecond the order rests: the matcher expires it at the first command
// after it.
func (g *Gateway) parseExpiry(m *quickfix.Message) (int64, *rejection) {
	if m.Body.Has(tag.ExpireTime) {
		t, err := m.Body.GetTime(tag.ExpireTime)
		if err != nil || t.Year() > expiryYearMax {
			return 0, &rejection{ordRejOther, "invalid ExpireTime (126) " + string(fieldBytes(m, tag.ExpireTime))}
		}
		if t.Before(expiryEarliest) {
			return math.MinInt64, nil
		}
		return t.UnixNano(), nil
	}
	d := fieldBytes(m, tag.ExpireDate)
	if d == nil {
		return 0, &rejection{ordRejOther, "GTD order without ExpireTime (126) or ExpireDate (432)"}
	}
	t, err := time.Parse("20060102", string(d))
	if err != nil {
		return 0, &rejection{ordRejOther, "ExpireDate (432) must be a date YYYYMMDD, not " + string(d)}
	}
	if t.Year() > expiryYearMax {
		// A date, but one whose end the matcher's nanoseconds cannot hold:
		// "must be a date" would tell the client its 99991231 is no date.
		return 0, &rejection{ordRejOther, "ExpireDate (432) " + string(d) + " is after " + strconv.Itoa(expiryYearMax) + ", the last year the venue takes (GTC, 59=1, for no expiry)"}
	}
	end := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
	if g.cfg.MarketDateEnd != nil {
		end = g.cfg.MarketDateEnd(t.Year(), t.Month(), t.Day())
	}
	if !end.After(expiryEarliest) {
		return math.MinInt64, nil
	}
	return end.UnixNano() - 1, nil
}

// unsupportedTagSet holds the tags parseOrder looks up only when an order
// may have one (instrumentTags and those unsupported looks at), for the
// Validator's fast check to say whether a message has any (CheckFor).
var unsupportedTagSet = func() (set TagSet) {
	for _, f := range &unsupportedOrderFields {
		_ = set.Add(f.tag)
	}
	for _, t := range &instrumentTags {
		_ = set.Add(t)
	}
	_ = set.Add(tag.PriceType)
	_ = set.Add(tag.MinQty)
	_ = set.Add(tag.Currency)
	_ = set.Add(tag.SettlType)
	_ = set.Add(tag.SettlDate)
	_ = set.Add(tag.ExpireTime)
	_ = set.Add(tag.ExpireDate)
	_ = set.Add(tag.NoTradingSessions)
	return set
}()

// unsupported refuses an order with a field of unsupportedOrderFields, an
// ExpireTime (126) or ExpireDate (432) on an order that is not GTD, a
// TrdgSesGrp that restricts where it trades (tradingSessions), a
// MinQty (110) above the lot (every fill is at least a lot, so a smaller one
// asks nothing) or a PriceType (423) other than 2 (per unit). It looks only
// when the message may have one of them (FromApp learns it from Validator.CheckFor).
// Its Currency and settlement terms are settlement's.
func (o *orderFields) unsupported(m *quickfix.Message, look bool, currency string) *rejection {
	if !look {
		return nil
	}
	for _, f := range &unsupportedOrderFields {
		if m.Body.Has(f.tag) {
			return &rejection{ordRejUnsupportedOrderChar, "unsupported " + f.name}
		}
	}
	if o.tif != venue.TimeInForceGTD && (m.Body.Has(tag.ExpireTime) || m.Body.Has(tag.ExpireDate)) {
		// Only a GTD order expires at a time of its own: another would
		// rest past the expiry it was given (doc.go, "Unsupported order
		// fields" and "GTD expiry").
		return &rejection{ordRejUnsupportedOrderChar, "ExpireTime (126) and ExpireDate (432) are only allowed on GTD (59=6) orders"}
	}
	if rej := o.tradingSessions(m); rej != nil {
		return rej
	}
	if rej := o.settlement(m, currency); rej != nil {
		return rej
	}
	if v := fieldBytes(m, tag.PriceType); len(v) > 0 && string(v) != "2" {
		return &rejection{ordRejUnsupportedOrderChar, "unsupported PriceType (423) " + string(v) + ": prices are per unit (2)"}
	}
	if v := fieldBytes(m, tag.MinQty); len(v) > 0 {
		lot := max(o.inst.LotSize, 1)
		q, err := decimal.ParseTicks(v, qtyTick)
		switch {
		case err != nil || q < 0:
			return &rejection{ordRejUnsupportedOrderChar, "MinQty (110) must be a whole number from 0 to the lot of " + strconv.FormatInt(lot, 10) + ", not " + string(v)}
		case q > lot:
			return &rejection{ordRejUnsupportedOrderChar, "unsupported MinQty (110) " + string(v) + ": no minimum fill beyond the lot of " + strconv.FormatInt(lot, 10)}
		}
	}
	return nil
}

// settlement refuses an order whose Currency (15) is not the venue's
// (currency; any when it is empty) or that asks for a settlement other than
// the venue's regular one: a SettlType (63) other than 0 (Regular), or a
// SettlDate (64). The venue prices every instrument in one currency and
// settles every trade on one cycle; an order taken with other terms would
// trade on terms its sender did not ask for (doc.go, "Currency and
// settlement").
func (o *orderFields) settlement(m *quickfix.Message, currency string) *rejection {
	if v := fieldBytes(m, tag.Currency); len(v) > 0 && currency != "" && string(v) != currency {
		return &rejection{ordRejUnsupportedOrderChar, "unsupported Currency (15) " + string(v) + ": " + o.inst.Symbol + " trades in " + currency}
	}
	if v := fieldBytes(m, tag.SettlType); len(v) > 0 && string(v) != "0" {
		return &rejection{ordRejUnsupportedOrderChar, "unsupported SettlType (63) " + string(v) + ": trades settle on the venue's regular cycle (0)"}
	}
	if m.Body.Has(tag.SettlDate) {
		return &rejection{ordRejUnsupportedOrderChar, "unsupported SettlDate (64): trades settle on the venue's regular cycle"}
	}
	return nil
}

// tradingSessions refuses a TrdgSesGrp (NoTradingSessions 386) that would
// restrict where the order trades. An instrument's trading session is named
// by its Symbol, and ALL is the venue's (TradingSessionStatus names them so),
// and an order trades in every phase of it: an entry naming another
// TradingSessionID (336), or any TradingSessionSubID (625: an auction,
// continuous trading), asks for what the venue does not do, and the order
// would trade where it was not meant to. TimeInForce 2 and 7 are how an order
// keeps to the opening or closing auction. An entry naming the order's own
// Symbol, or ALL, asks nothing and is taken.
func (o *orderFields) tradingSessions(m *quickfix.Message) *rejection {
	if !m.Body.Has(tag.NoTradingSessions) {
		return nil
	}
	g := quickfix.NewRepeatingGroup(tag.NoTradingSessions, quickfix.GroupTemplate{
		quickfix.GroupElement(tag.TradingSessionID), quickfix.GroupElement(tag.TradingSessionSubID)})
	if err := m.Body.GetGroup(g); err != nil {
		return &rejection{ordRejUnsupportedOrderChar, "unsupported NoTradingSessions (386): an order trades in its instrument's trading session, named by its Symbol (or ALL)"}
	}
	for i := 0; i < g.Len(); i++ {
		e := g.Get(i)
		if e.Has(tag.TradingSessionSubID) {
			sub, _ := e.GetBytes(tag.TradingSessionSubID)
			return &rejection{ordRejUnsupportedOrderChar, "unsupported TradingSessionSubID (625) " + string(sub) +
				" in NoTradingSessions (386): an order trades in every phase of its instrument's session; TimeInForce 2 or 7 for the opening or closing auction alone"}
		}
		id, _ := e.GetBytes(tag.TradingSessionID)
		if string(id) != o.inst.Symbol && string(id) != "ALL" {
			return &rejection{ordRejUnsupportedOrderChar, "unsupported TradingSessionID (336) " + string(id) +
				" in NoTradingSessions (386): an order trades in its instrument's trading session, named by its Symbol (or ALL)"}
		}
	}
	return nil
}

// restingOnly refuses a display size (MaxFloor 111) or post-only (ExecInst
// 6) on an order that cannot rest: a market or stop order, or an IOC or FOK
// (a post-only stop is the matcher's StopPostOnly, which says so). The
// matcher refuses them too (core doc, "Rules"), but its
// UnsupportedOrderCharacteristic names neither field, and the client is told
// which (doc.go, "Unsupported order fields").
func (o *orderFields) restingOnly() *rejection {
	immediate := o.tif == venue.TimeInForceIOC || o.tif == venue.TimeInForceFOK
	switch {
	case o.maxFloor != 0 && (o.ordType != venue.OrdTypeLimit || immediate):
		return &rejection{ordRejUnsupportedOrderChar, "MaxFloor (111) is only allowed on a limit order that may rest (40=2, not IOC or FOK)"}
	case o.postOnly && !core.IsStop(o.ordType) && (o.ordType != venue.OrdTypeLimit || immediate):
		return &rejection{ordRejUnsupportedOrderChar, "post-only (ExecInst 6) is only allowed on a limit order that may rest (40=2, not IOC or FOK)"}
	}
	return nil
}

// parseStopPx reads StopPx (99): required on a stop or stop-limit order
// (40=3 or 4), refused on any other. Its checks against the market are the
// matcher's (core, "Stops"). FIX 4.4 has no OrdRejReason for a missing or
// malformed StopPx: 99 (Other) with a Text; a StopPx on another order type
// is 11 (Unsupported order characteristic).
func (o *orderFields) parseStopPx(g *Gateway, stopPx []byte) *rejection {
	stop := o.ordType == venue.OrdTypeStop || o.ordType == venue.OrdTypeStopLimit
	switch {
	case !stop && len(stopPx) > 0:
		return &rejection{ordRejUnsupportedOrderChar, "StopPx (99) is only allowed on stop (40=3) and stop-limit (40=4) orders"}
	case !stop:
		return nil
	case len(stopPx) == 0:
		return &rejection{ordRejOther, "stop order without StopPx (99)"}
	}
	ticks, err := decimal.ParseTicks(stopPx, o.inst.Tick)
	if errors.Is(err, decimal.ErrOffTick) {
		return &rejection{ordRejOther, "StopPx " + string(stopPx) + " is not a multiple of the tick size " + o.inst.Tick.String()}
	}
	if errors.Is(err, decimal.ErrRange) && stopPx[0] != '-' {
		// Too large for the venue, so beyond the band, as for a Price (parseOrder).
		return &rejection{ordRejOther, g.rejectText(venue.RejectReasonPriceOutOfBand, o.inst.ID, venue.OrdTypeStop, 0)}
	}
	if err != nil || ticks <= 0 {
		return &rejection{ordRejOther, "invalid StopPx " + string(stopPx)}
	}
	o.stopPx = ticks
	return nil
}

// claim takes a command slot, or explains why none can be had.
func (g *Gateway) claim() (int64, []byte, *rejection) {
	if reason := g.halted(); reason != "" {
		return 0, nil, &rejection{ordRejOther, "venue halted: " + reason}
	}
	if g.cfg.CatchingUp != nil && g.cfg.CatchingUp() {
		return 0, nil, &rejection{ordRejOther, CatchingUpText}
	}
	seq, slot, err := g.commands.Claim()
	if err != nil {
		if errors.Is(err, ring.ErrBusy) {
			g.metrics.busy.Inc()
			return 0, nil, &rejection{ordRejOther, "system busy, try again"}
		}
		return 0, nil, &rejection{ordRejOther, "venue not accepting orders: " + err.Error()}
	}
	return seq, slot, nil
}

// admit passes on a refusal rej of the message's parse; else it counts the
// message against the session's window w (perSecond what: the configured
// rate, for the refusal's text) and claims its command slot.
func (g *Gateway) admit(s *session, rej *rejection, w *slidingWindow, perSecond int, what string, now int64) (int64, []byte, *rejection) {
	if rej != nil {
		return 0, nil, rej
	}
	if !s.throttle(w, now) {
		g.metrics.throttled.Inc()
		return 0, nil, &rejection{ordRejOther, "throttled: more than " + strconv.Itoa(perSecond) + " " + what + " per second"}
	}
	if w == &s.orders && g.stopping.Load() != nil {
		// An order taken now could fill a session QuickFIX/Go has already
		// logged out and forgotten in this stop: its report would be
		// neither sent nor stored (stop.go).
		return 0, nil, &rejection{ordRejOther, stoppingText}
	}
	return g.claim()
}

// CatchingUpText is the Text of a message refused while the trading day's
// schedule catches up (Config.CatchingUp).
const CatchingUpText = "venue catching up with its trading day's schedule (transitions due at once): try again"

// stoppingText is the Text of an order or replace refused once a stop began.
const stoppingText = "venue stopping: new orders and replaces are refused; cancels are taken"

// publish hands the command in slot seq to the matcher and makes it the
// session's last command (answers.go waits for it).
func (g *Gateway) publish(s *session, seq int64) {
	g.fixCommands.note(g.cfg.SeqBase+uint64(seq), s.arrived.Load()) // its answers are measured (roundtrip.go)
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
}

func (g *Gateway) onNewOrderSingle(s *session, m *quickfix.Message, now int64, look bool) {
	o, rej := g.parseOrder(m, look)
	resend := possResend(m)
	if rej == nil {
		rej = g.accountRefused(s, o.account)
	}
	if rej == nil && resend {
		rej = g.resentFromEarlierDay(s, m, o.clOrdID, "an order")
	}
	counts := false // against the session's open-order bound (openbound.go)
	if rej == nil {
		counts = g.countsAgainstBound(&o)
		var ask bool
		if rej, ask = g.openBoundRefused(s, counts, resend); ask {
			g.askAtBound(s, m, &o, rej, now)
			return
		}
	}
	seq, slot, rej := g.admit(s, rej, &s.orders, s.cfg.OrdersPerSecondReject, "orders", now)
	if rej != nil {
		g.rejectOrder(s, m, rej)
		return
	}
	var c venue.NewOrder
	_ = c.WrapEncode(slot, 0) // slots are larger than any command
	c.SetSeq(g.cfg.SeqBase + uint64(seq))
	c.SetTimestampNs(now)
	c.SetSessionIdx(s.idx)
	c.SetSide(o.side)
	c.SetOrdType(o.ordType)
	c.SetInstrumentID(o.inst.ID)
	c.SetTimeInForce(o.tif)
	var flags venue.OrderFlags
	if o.postOnly {
		flags |= venue.OrderFlagsPostOnly
	}
	if resend {
		flags |= venue.OrderFlagsPossResend
	}
	c.SetFlags(flags)
	c.SetStpMode(venue.StpModeDefault)
	c.SetPriceTicks(o.priceTicks)
	c.SetQty(o.qty)
	c.SetExpireTimeNs(o.expireNs)
	c.SetStopPxTicks(o.stopPx)
	c.SetMaxFloorQty(o.maxFloor)
	_ = c.SetClOrdID(o.clOrdID) // lengths checked in parseOrder
	_ = c.SetAccount(o.account)
	if e := (orderEcho{postOnly: o.postOnly, gtd: o.tif == venue.TimeInForceGTD, expireNs: o.expireNs,
		stop: core.IsStop(o.ordType), stopPxTicks: o.stopPx,
		iceberg: !core.IsStop(o.ordType) && o.maxFloor != 0, maxFloorQty: o.maxFloor}); e.noted() {
		g.rejectEchoes.note(g.cfg.SeqBase+uint64(seq), e) // for its reject (postonly.go)
	}
	g.noteBoundOrder(s, g.cfg.SeqBase+uint64(seq), counts)
	g.publish(s, seq)
	g.metrics.orders.Inc()
}

// possResend reports whether the client says it may have sent the message
// before: PossResend (97) = Y, or PossDupFlag (43) = Y. The core answers
// either with a known ClOrdID by the order's status instead of a duplicate
// reject. QuickFIX/Go drops a PossDup below the expected sequence number,
// so a PossDup reaches the application when the session layer cannot tell
// (a client that reset its numbers, or resends under new ones); FIX 4.4 leaves
// its handling to the application ("treat as a new message or discard as
// appropriate"), and a reject with 39=8 for an order that is working would
// tell the client its order is dead (README, "FIX").
func possResend(m *quickfix.Message) bool {
	return headerFlagY(m, tag.PossResend) || headerFlagY(m, tag.PossDupFlag)
}

// headerFlagY reports a header Boolean field equal to Y, without the error
// GetBool builds when the field is absent.
func headerFlagY(m *quickfix.Message, t quickfix.Tag) bool {
	if !m.Header.Has(t) {
		return false
	}
	v, err := m.Header.GetBytes(t)
	return err == nil && len(v) == 1 && v[0] == 'Y'
}

// cancelFields are the identifiers of a cancel or replace.
type cancelFields struct {
	inst        *Instrument
	side        venue.Side
	clOrdID     []byte
	origClOrdID []byte
	orderID     uint64
}

// parseCancel reads a cancel's or replace's identifiers. look is as for
// parseOrder: when m may name its instrument by more than its Symbol
// (instrumentTags), it is refused as an unknown symbol, as an order naming
// it so is: the venue's orders are all for an instrument named by Symbol
// alone, so a cancel naming another is not for the order it names.
func (g *Gateway) parseCancel(m *quickfix.Message, look bool) (cancelFields, *rejection) {
	var c cancelFields
	c.clOrdID = fieldBytes(m, tag.ClOrdID)
	c.origClOrdID = fieldBytes(m, tag.OrigClOrdID)
	if len(c.clOrdID) == 0 || len(c.clOrdID) > venue.ClOrdIDLength || len(c.origClOrdID) > venue.ClOrdIDLength {
		return c, &rejection{ordRejOther, "ClOrdID and OrigClOrdID must be 1 to " + strconv.Itoa(venue.ClOrdIDLength) + " characters"}
	}
	if id := fieldBytes(m, tag.OrderID); len(id) > 0 {
		if v, err := strconv.ParseUint(string(id), 10, 64); err == nil {
			c.orderID = v
		} else if len(c.origClOrdID) == 0 {
			return c, &rejection{ordRejUnknownSymbol, "unknown OrderID " + string(id)}
		}
	}
	if len(c.origClOrdID) == 0 && c.orderID == 0 {
		return c, &rejection{ordRejUnknownSymbol, "neither OrigClOrdID nor OrderID given"}
	}
	var text string
	if c.inst, text = g.namedInstrument(m, look); c.inst == nil {
		return c, &rejection{ordRejUnknownSymbol, text}
	}
	var ok bool
	if c.side, ok = parseSide(fieldBytes(m, tag.Side)); !ok {
		// Only a session with RejectInvalidMessage=N passes one: the
		// order's side compared with none said "Side (54) 1, not 1".
		return c, &rejection{ordRejOther, "Side (54) must be 1 (buy) or 2 (sell), not " + strconv.Quote(string(fieldBytes(m, tag.Side)))}
	}
	return c, nil
}

func (g *Gateway) onCancel(s *session, m *quickfix.Message, now int64, look bool) {
	c, rej := g.parseCancel(m, look)
	seq, slot, rej := g.admit(s, rej, &s.cancels, s.cfg.CancelsPerSecondReject, "cancels", now)
	if rej != nil {
		g.rejectCancel(s, m, venue.CxlRejResponseToCancel, rej)
		return
	}
	var cmd venue.CancelOrder
	_ = cmd.WrapEncode(slot, 0)
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(now)
	cmd.SetSessionIdx(s.idx)
	cmd.SetSide(c.side)
	// Symbol and Side must be the order's; the cancel's ClOrdID is recorded
	// for the day, naming the cancelled order (core/doc.go, "Rules"), so that
	// a status request by it answers the order and an order reusing it is a
	// duplicate.
	cmd.SetChecks(core.CancelMatchesOrder | core.CancelRemembersClOrdID)
	cmd.SetInstrumentID(c.inst.ID)
	cmd.SetOrderID(c.orderID)
	_ = cmd.SetClOrdID(c.clOrdID)
	_ = cmd.SetOrigClOrdID(c.origClOrdID)
	s.rememberAsk(changeAsk{cmdSeq: int64(g.cfg.SeqBase) + seq, instrumentID: c.inst.ID, side: c.side})
	g.publish(s, seq)
	g.metrics.cancels.Inc()
}

func (g *Gateway) onReplace(s *session, m *quickfix.Message, now int64, look bool) {
	c, rej := g.parseCancel(m, false) // parseOrder looks at the instrument
	var o orderFields
	if rej == nil {
		o, rej = g.parseOrder(m, look)
		if rej == nil {
			rej = g.accountRefused(s, o.account)
		}
		if rej == nil && possResend(m) {
			rej = g.resentFromEarlierDay(s, m, o.clOrdID, "a replace")
		}
		if rej != nil {
			rej.reason = ordRejOther
		}
	}
	seq, slot, rej := g.admit(s, rej, &s.orders, s.cfg.OrdersPerSecondReject, "orders", now)
	if rej != nil {
		g.rejectCancel(s, m, venue.CxlRejResponseToReplace, rej)
		return
	}
	var cmd venue.ReplaceOrder
	_ = cmd.WrapEncode(slot, 0)
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(now)
	cmd.SetSessionIdx(s.idx)
	cmd.SetSide(o.side)
	cmd.SetOrdType(o.ordType)
	cmd.SetInstrumentID(o.inst.ID)
	cmd.SetTimeInForce(o.tif)
	cmd.SetOrderID(c.orderID)
	cmd.SetPriceTicks(o.priceTicks)
	cmd.SetQty(o.qty)
	cmd.SetExpireTimeNs(o.expireNs)
	cmd.SetStopPxTicks(o.stopPx)
	cmd.SetMaxFloorQty(o.maxFloor)
	_ = cmd.SetClOrdID(o.clOrdID)
	_ = cmd.SetOrigClOrdID(c.origClOrdID)
	_ = cmd.SetAccount(o.account)
	// A ClOrdID of an order ended since is too late, not unknown; a market
	// order waiting for an uncross (an elected stop too) is refused saying
	// so, not as a replace that changes what the order is.
	flags := core.ReplaceEndedTooLate | core.ReplaceSaysMarket
	if possResend(m) {
		flags |= core.ReplacePossResend
	}
	if o.postOnly {
		// The matcher keeps an order's post-only through a replace and
		// refuses one that would add it: dropped here, the replace of a
		// plain order could take liquidity its ExecInst 6 asked it not to
		// (doc.go, "Unsupported order fields").
		flags |= core.ReplacePostOnly
	}
	cmd.SetFlags(flags)
	ask := changeAsk{cmdSeq: int64(g.cfg.SeqBase) + seq, instrumentID: o.inst.ID, side: o.side, ordType: o.ordType,
		tif: o.tif, postOnly: o.postOnly, priceTicks: o.priceTicks, accountLen: uint8(len(o.account))}
	copy(ask.account[:], o.account)
	s.rememberAsk(ask)
	g.publish(s, seq)
	g.metrics.replaces.Inc()
}

// onStatus answers an OrderStatusRequest. An order named with an
// instrument the venue does not list is unknown (103=5), the Text saying
// what of the instrument was wrong as an order's or cancel's refusal does
// (namedInstrument): no order was entered so.
func (g *Gateway) onStatus(s *session, m *quickfix.Message, now int64, look bool) {
	clOrdID := fieldBytes(m, tag.ClOrdID)
	var orderID uint64
	if id := fieldBytes(m, tag.OrderID); len(id) > 0 {
		orderID, _ = strconv.ParseUint(string(id), 10, 64)
	}
	if len(clOrdID) > venue.ClOrdIDLength || (len(clOrdID) == 0 && orderID == 0) {
		g.sendUnknownStatus(s, m, "unknown order")
		return
	}
	inst, text := g.namedInstrument(m, look)
	if inst == nil {
		g.sendUnknownStatus(s, m, text)
		return
	}
	reqID := fieldBytes(m, tag.OrdStatusReqID)
	if len(reqID) > 0 && s.statusReqsFull() {
		g.sendUnknownStatus(s, m, statusReqsFullText)
		return
	}
	side, ok := parseSide(fieldBytes(m, tag.Side))
	if !ok {
		// Side identifies the order as ClOrdID does (FIX 4.4), and every
		// order of the venue is a buy or a sell.
		g.sendUnknownStatus(s, m, statusMismatchText(string(fieldBytes(m, tag.Side)), inst.Symbol))
		return
	}
	seq, slot, rej := g.claim()
	if rej != nil {
		g.sendUnknownStatus(s, m, rej.text)
		return
	}
	var cmd venue.OrderStatusRequest
	_ = cmd.WrapEncode(slot, 0)
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(now)
	cmd.SetSessionIdx(s.idx)
	cmd.SetSide(side)
	cmd.SetChecks(core.StatusMatchesOrder)
	cmd.SetInstrumentID(inst.ID)
	cmd.SetOrderID(orderID)
	_ = cmd.SetClOrdID(clOrdID)
	if len(reqID) > 0 {
		s.rememberStatusReq(int64(g.cfg.SeqBase)+seq, string(reqID))
	}
	g.publish(s, seq)
}

// statusMismatchText is the Text of a status request's unknown-order
// answer when the order it names has another Side (54) or Symbol (55) than
// those it gives: they identify the order as ClOrdID does (FIX 4.4), so
// the request names no order (onOrderStatus, core.StatusMatchesOrder;
// inbound for a side the venue has none of).
func statusMismatchText(side, symbol string) string {
	if side == "" { // a session that does not validate lets it through
		return "unknown order: no Side (54), which names the order with its ClOrdID (11) or OrderID (37)"
	}
	return "unknown order: no order of Side (54) " + side + " in " + symbol + " has that ClOrdID (11) or OrderID (37)"
}

// statusReqsMax bounds the OrdStatusReqIDs a session has waiting for their
// answer; past it a status request with one is refused (statusReqsFullText),
// as one is when the command ring is busy, so that no answer goes out
// without the 790 it was asked with.
const statusReqsMax = 256

var statusReqsFullText = "too many status requests with an OrdStatusReqID (790) waiting for their answers (" +
	strconv.Itoa(statusReqsMax) + "): ask again once they are answered"

// statusReqsFull reports whether the session has statusReqsMax requests
// waiting. Only its own inbound adds to them, so the room it sees stays.
func (s *session) statusReqsFull() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.statusReqs) >= statusReqsMax
}

type statusReq struct {
	cmdSeq int64
	reqID  string
}

// rememberStatusReq keeps a request's OrdStatusReqID (790) until the answer
// to its command goes out: the matcher's OrderStatus event does not carry it.
func (s *session) rememberStatusReq(cmdSeq int64, reqID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statusReqs = append(s.statusReqs, statusReq{cmdSeq, reqID})
}

// takeStatusReq returns and forgets the OrdStatusReqID of a status command.
func (s *session) takeStatusReq(cmdSeq int64) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.statusReqs {
		if r.cmdSeq == cmdSeq {
			s.statusReqs = append(s.statusReqs[:i], s.statusReqs[i+1:]...)
			return r.reqID, true
		}
	}
	return "", false
}

// FIX MassCancelRequestType (530) values the venue supports.
const (
	massCancelBySecurity = '1'
	massCancelAll        = '7'
)

func (g *Gateway) onMassCancel(s *session, m *quickfix.Message, now int64) {
	clOrdID := fieldBytes(m, tag.ClOrdID)
	typ := fieldBytes(m, tag.MassCancelRequestType)
	var instID uint32
	var sym []byte
	reject := func(reason massCancelRejectReason, text string) { g.rejectMassCancel(s, m, reason, text) }
	switch {
	case len(clOrdID) == 0 || len(clOrdID) > venue.ClOrdIDLength:
		reject(massCancelRejOther, "ClOrdID must be 1 to "+strconv.Itoa(venue.ClOrdIDLength)+" characters")
		return
	case len(typ) == 1 && typ[0] == massCancelAll:
	case len(typ) == 1 && typ[0] == massCancelBySecurity:
		sym = fieldBytes(m, tag.Symbol)
		if len(sym) == 0 {
			// A security named otherwise (a SecurityID) is none of the
			// venue's, as for an order: the Text names the field.
			text := unknownInstrument(m, nil)
			if text == "" {
				text = "MassCancelRequestType 1 needs a Symbol (55)"
			}
			reject(massCancelRejInvalidSecurity, text)
			return
		}
		inst := g.bySymbolBytes(sym)
		if inst == nil {
			reject(massCancelRejInvalidSecurity, "unknown symbol "+string(sym))
			return
		}
		// Named otherwise too, the security may not be the Symbol's: its
		// orders are not cancelled for it (as an order is refused).
		if text := unknownInstrument(m, sym); text != "" {
			reject(massCancelRejInvalidSecurity, text)
			return
		}
		instID = inst.ID
	default:
		reject(massCancelRejNotSupported, "MassCancelRequestType "+string(typ)+" is not supported (1 and 7 are)")
		return
	}
	if text := sessionQualifier(m, sym, "mass cancel", "MassCancelRequestType"); text != "" {
		reject(massCancelRejInvalidTradingSession, text)
		return
	}
	account := fieldBytes(m, tag.Account)
	if len(account) > venue.AccountLength {
		reject(massCancelRejOther, "Account longer than "+strconv.Itoa(venue.AccountLength)+" characters")
		return
	}
	var side venue.Side // 0: either side
	if b := fieldBytes(m, tag.Side); len(b) > 0 {
		// A Side the venue has no orders of is refused: read as "either
		// side" it would cancel the orders of both (README, "FIX": it is
		// refused in the report and cancels nothing).
		var ok bool
		if side, ok = parseSide(b); !ok {
			reject(massCancelRejOther, "unsupported side "+string(b)+": a mass cancel's Side (54) is 1 (buy) or 2 (sell), or absent for both")
			return
		}
	}
	if !s.throttle(&s.cancels, now) {
		reject(massCancelRejOther, "throttled")
		return
	}
	seq, slot, rej := g.claim()
	if rej != nil {
		reject(massCancelRejOther, rej.text)
		return
	}
	var cmd venue.MassCancel
	_ = cmd.WrapEncode(slot, 0)
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(now)
	cmd.SetSessionIdx(s.idx)
	cmd.SetFilterSessionIdx(s.idx) // a session cancels only its own orders
	cmd.SetInstrumentID(instID)
	cmd.SetSide(uint8(side))
	cmd.SetMassCancelRequestType(typ[0])
	_ = cmd.SetClOrdID(clOrdID)
	_ = cmd.SetAccount(account)
	g.publish(s, seq)
}

// sessionQualifier returns the Text of the refusal of a mass cancel or mass
// status (request, its type field typeField) whose TradingSessionID (336) or
// TradingSessionSubID (625) restricts it to orders the venue cannot tell
// apart, else "". An instrument's trading session is named by its Symbol
// and ALL is the venue's (as TradingSessionStatus names them), and an order
// trades in every phase of it, so a request "in" another session, or in one
// phase (the closing auction's orders, say), would act on or list orders it
// does not describe if the field were read as absent: it is refused, as one
// naming its security otherwise than by its Symbol is. ALL, and by security
// (sym) the Symbol's own session, ask nothing more.
func sessionQualifier(m *quickfix.Message, sym []byte, request, typeField string) string {
	if sub := fieldBytes(m, tag.TradingSessionSubID); sub != nil {
		return "unsupported TradingSessionSubID (625) " + string(sub) + ": a " + request + " covers every phase of a trading session"
	}
	id := fieldBytes(m, tag.TradingSessionID)
	if id == nil || string(id) == "ALL" || (len(sym) > 0 && bytes.Equal(id, sym)) {
		return ""
	}
	return "unknown TradingSessionID (336) " + string(id) + ": a " + request + "'s is ALL, or with " + typeField + " 1 its Symbol"
}

// Disconnected journals a SessionDisconnected command for the session, which
// cancels its DAY orders when cancel-on-disconnect is on. It waits up to the
// ring's claim timeout for a slot, retrying until deadline: this command must not be lost.
func (g *Gateway) Disconnected(idx uint16, deadline time.Duration) error {
	s := g.sessions[idx]
	return publishWait(g, deadline, func(cmd *venue.SessionDisconnected) {
		cmd.SetSessionIdx(s.idx)
		if s.cfg.CancelOnDisconnect {
			cmd.SetCancelOnDisconnect(venue.BooleanTypeTrue)
		}
	})
}

// claimWait claims a command slot for a command that must not be lost
// (a disconnect, an operator's), retrying a busy ring until deadline.
func (g *Gateway) claimWait(deadline time.Duration) (int64, []byte, error) {
	if reason := g.halted(); reason != "" {
		return 0, nil, errors.New("venue halted: " + reason)
	}
	end := time.Now().Add(deadline)
	for {
		seq, slot, err := g.commands.Claim()
		if err == nil {
			return seq, slot, nil
		}
		if !errors.Is(err, ring.ErrBusy) || time.Now().After(end) {
			return 0, nil, err
		}
	}
}

// throttle counts a message against one of the session's windows (orders,
// cancels, messages) and counts a refusal (SessionRates.ThrottleHits).
func (s *session) throttle(w *slidingWindow, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.allow(now) {
		s.throttleHits.Add(1)
		return false
	}
	return true
}
