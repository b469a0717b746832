package gateway

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// FIX tags the gateway reads or writes.
const (
	tagAccount               quickfix.Tag = 1
	tagAvgPx                 quickfix.Tag = 6
	tagClOrdID               quickfix.Tag = 11
	tagCumQty                quickfix.Tag = 14
	tagExecID                quickfix.Tag = 17
	tagExecInst              quickfix.Tag = 18
	tagLastPx                quickfix.Tag = 31
	tagLastQty               quickfix.Tag = 32
	tagOrderID               quickfix.Tag = 37
	tagOrderQty              quickfix.Tag = 38
	tagOrdStatus             quickfix.Tag = 39
	tagOrdType               quickfix.Tag = 40
	tagOrigClOrdID           quickfix.Tag = 41
	tagPossResend            quickfix.Tag = 97
	tagPrice                 quickfix.Tag = 44
	tagSide                  quickfix.Tag = 54
	tagSymbol                quickfix.Tag = 55
	tagText                  quickfix.Tag = 58
	tagTimeInForce           quickfix.Tag = 59
	tagTransactTime          quickfix.Tag = 60
	tagCxlRejReason          quickfix.Tag = 102
	tagOrdRejReason          quickfix.Tag = 103
	tagExpireTime            quickfix.Tag = 126
	tagNoRelatedSym          quickfix.Tag = 146
	tagExecType              quickfix.Tag = 150
	tagLeavesQty             quickfix.Tag = 151
	tagSecurityReqID         quickfix.Tag = 320
	tagSecurityResponseID    quickfix.Tag = 322
	tagCxlRejResponseTo      quickfix.Tag = 434
	tagMassCancelRequestType quickfix.Tag = 530
	tagMassCancelResponse    quickfix.Tag = 531
	tagMassCancelRejectRsn   quickfix.Tag = 532
	tagTotalAffectedOrders   quickfix.Tag = 533
	tagSecurityListReqType   quickfix.Tag = 559
	tagSecurityRequestResult quickfix.Tag = 560
	tagRoundLot              quickfix.Tag = 561
	tagMinTradeVol           quickfix.Tag = 562
	tagOrdStatusReqID        quickfix.Tag = 790
	// tagSecondaryExecID carries the trade id on fills: FIX 4.4 has no TrdMatchID (880) in ExecutionReport.
	tagSecondaryExecID   quickfix.Tag = 527
	tagMinPriceIncrement quickfix.Tag = 969
	tagTotNoRelatedSym   quickfix.Tag = 393
	tagLastFragment      quickfix.Tag = 893
)

// rejection is a refusal decided in the gateway, before any command exists.
type rejection struct {
	ordRejReason int    // FIX OrdRejReason (103) or CxlRejReason (102)
	text         string // FIX Text (58)
}

var qtyTick = decimal.Tick{Mantissa: 1, Scale: 0}

func fieldBytes(m *quickfix.Message, tag quickfix.Tag) []byte {
	b, err := m.Body.GetBytes(tag)
	if err != nil {
		return nil
	}
	return b
}

// parseSide maps FIX Side (54).
func parseSide(b []byte) (venue.Side, bool) {
	if len(b) == 1 {
		switch b[0] {
		case '1':
			return venue.SideBuy, true
		case '2':
			return venue.SideSell, true
		}
	}
	return 0, false
}

func parseOrdType(b []byte) (venue.OrdType, bool) {
	if len(b) == 1 {
		switch b[0] {
		case '1':
			return venue.OrdTypeMarket, true
		case '2':
			return venue.OrdTypeLimit, true
		}
	}
	return 0, false
}

func parseTIF(b []byte) (venue.TimeInForce, bool) {
	if len(b) == 0 {
		return venue.TimeInForceDay, true
	}
	if len(b) == 1 {
		switch b[0] {
		case '0':
			return venue.TimeInForceDay, true
		case '1':
			return venue.TimeInForceGTC, true
		case '3':
			return venue.TimeInForceIOC, true
		case '4':
			return venue.TimeInForceFOK, true
		case '6':
			return venue.TimeInForceGTD, true
		}
	}
	return 0, false
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
}

// parseOrder validates an order's fields; a refusal carries the FIX reason and text.
func (g *Gateway) parseOrder(m *quickfix.Message) (orderFields, *rejection) {
	var o orderFields
	o.clOrdID = fieldBytes(m, tagClOrdID)
	if len(o.clOrdID) == 0 || len(o.clOrdID) > venue.ClOrdIDLength {
		return o, &rejection{99, "ClOrdID must be 1 to " + strconv.Itoa(venue.ClOrdIDLength) + " characters"}
	}
	o.account = fieldBytes(m, tagAccount)
	if len(o.account) > venue.AccountLength {
		return o, &rejection{15, "Account longer than " + strconv.Itoa(venue.AccountLength) + " characters"}
	}
	sym := fieldBytes(m, tagSymbol)
	o.inst = g.bySymbol[string(sym)]
	if o.inst == nil {
		return o, &rejection{1, "unknown symbol " + string(sym)}
	}
	var ok bool
	if o.side, ok = parseSide(fieldBytes(m, tagSide)); !ok {
		return o, &rejection{11, "unsupported side " + string(fieldBytes(m, tagSide))}
	}
	if o.ordType, ok = parseOrdType(fieldBytes(m, tagOrdType)); !ok {
		return o, &rejection{11, "unsupported order type " + string(fieldBytes(m, tagOrdType))}
	}
	if o.tif, ok = parseTIF(fieldBytes(m, tagTimeInForce)); !ok {
		return o, &rejection{11, "unsupported time in force " + string(fieldBytes(m, tagTimeInForce))}
	}
	qty, err := decimal.ParseTicks(fieldBytes(m, tagOrderQty), qtyTick)
	if err != nil || qty <= 0 {
		return o, &rejection{13, "OrderQty must be a positive whole number"}
	}
	o.qty = qty
	price := fieldBytes(m, tagPrice)
	switch {
	case o.ordType == venue.OrdTypeLimit && len(price) == 0:
		return o, &rejection{99, "limit order without Price"}
	case o.ordType == venue.OrdTypeLimit:
		ticks, err := decimal.ParseTicks(price, o.inst.Tick)
		if errors.Is(err, decimal.ErrOffTick) {
			return o, &rejection{18, "price " + string(price) + " is not a multiple of the tick size " + o.inst.Tick.String()}
		}
		if err != nil || ticks <= 0 {
			return o, &rejection{99, "invalid price " + string(price)}
		}
		o.priceTicks = ticks
	}
	if o.tif == venue.TimeInForceGTD {
		t, err := m.Body.GetTime(tagExpireTime)
		if err != nil {
			return o, &rejection{99, "GTD order without a valid ExpireTime (126)"}
		}
		o.expireNs = t.UnixNano()
	}
	if inst := fieldBytes(m, tagExecInst); len(inst) > 0 {
		for _, f := range bytes.Fields(inst) {
			if len(f) == 1 && f[0] == '6' {
				o.postOnly = true
			} else {
				return o, &rejection{11, "unsupported ExecInst " + string(f)}
			}
		}
	}
	return o, nil
}

// claim takes a command slot, or explains why none can be had.
func (g *Gateway) claim() (int64, []byte, *rejection) {
	if err := g.halted(); err != nil {
		return 0, nil, &rejection{99, "venue halted: " + err.Error()}
	}
	seq, slot, err := g.commands.Claim()
	if err != nil {
		if errors.Is(err, ring.ErrBusy) {
			g.metrics.busy.Inc()
			return 0, nil, &rejection{99, "system busy, try again"}
		}
		return 0, nil, &rejection{99, "venue not accepting orders: " + err.Error()}
	}
	return seq, slot, nil
}

func (g *Gateway) onNewOrderSingle(s *session, m *quickfix.Message, now int64) {
	o, rej := g.parseOrder(m)
	if rej == nil && !s.throttleOrder(now) {
		rej = &rejection{99, "throttled: more than " + strconv.Itoa(s.cfg.OrdersPerSecondReject) + " orders per second"}
		g.metrics.throttled.Inc()
	}
	var seq int64
	var slot []byte
	if rej == nil {
		seq, slot, rej = g.claim()
	}
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
	if possResend, _ := m.Header.GetBool(tagPossResend); possResend {
		flags |= venue.OrderFlagsPossResend
	}
	c.SetFlags(flags)
	c.SetStpMode(venue.StpModeDefault)
	c.SetPriceTicks(o.priceTicks)
	c.SetQty(o.qty)
	c.SetExpireTimeNs(o.expireNs)
	_ = c.SetClOrdID(o.clOrdID) // lengths checked in parseOrder
	_ = c.SetAccount(o.account)
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
	g.metrics.orders.Inc()
}

// cancelFields are the identifiers of a cancel or replace.
type cancelFields struct {
	inst        *Instrument
	side        venue.Side
	clOrdID     []byte
	origClOrdID []byte
	orderID     uint64
}

func (g *Gateway) parseCancel(m *quickfix.Message) (cancelFields, *rejection) {
	var c cancelFields
	c.clOrdID = fieldBytes(m, tagClOrdID)
	c.origClOrdID = fieldBytes(m, tagOrigClOrdID)
	if len(c.clOrdID) == 0 || len(c.clOrdID) > venue.ClOrdIDLength || len(c.origClOrdID) > venue.ClOrdIDLength {
		return c, &rejection{99, "ClOrdID and OrigClOrdID must be 1 to " + strconv.Itoa(venue.ClOrdIDLength) + " characters"}
	}
	if id := fieldBytes(m, tagOrderID); len(id) > 0 {
		if v, err := strconv.ParseUint(string(id), 10, 64); err == nil {
			c.orderID = v
		} else if len(c.origClOrdID) == 0 {
			return c, &rejection{1, "unknown OrderID " + string(id)}
		}
	}
	if len(c.origClOrdID) == 0 && c.orderID == 0 {
		return c, &rejection{1, "neither OrigClOrdID nor OrderID given"}
	}
	sym := fieldBytes(m, tagSymbol)
	if c.inst = g.bySymbol[string(sym)]; c.inst == nil {
		return c, &rejection{1, "unknown symbol " + string(sym)}
	}
	c.side, _ = parseSide(fieldBytes(m, tagSide))
	return c, nil
}

func (g *Gateway) onCancel(s *session, m *quickfix.Message, now int64) {
	c, rej := g.parseCancel(m)
	if rej == nil && !s.throttleCancel(now) {
		rej = &rejection{99, "throttled: more than " + strconv.Itoa(s.cfg.CancelsPerSecondReject) + " cancels per second"}
		g.metrics.throttled.Inc()
	}
	var seq int64
	var slot []byte
	if rej == nil {
		seq, slot, rej = g.claim()
	}
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
	cmd.SetInstrumentID(c.inst.ID)
	cmd.SetOrderID(c.orderID)
	_ = cmd.SetClOrdID(c.clOrdID)
	_ = cmd.SetOrigClOrdID(c.origClOrdID)
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
	g.metrics.cancels.Inc()
}

func (g *Gateway) onReplace(s *session, m *quickfix.Message, now int64) {
	c, rej := g.parseCancel(m)
	var o orderFields
	if rej == nil {
		o, rej = g.parseOrder(m)
		if rej != nil {
			rej.ordRejReason = 99
		}
	}
	if rej == nil && !s.throttleOrder(now) {
		rej = &rejection{99, "throttled: more than " + strconv.Itoa(s.cfg.OrdersPerSecondReject) + " orders per second"}
		g.metrics.throttled.Inc()
	}
	var seq int64
	var slot []byte
	if rej == nil {
		seq, slot, rej = g.claim()
	}
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
	_ = cmd.SetClOrdID(o.clOrdID)
	_ = cmd.SetOrigClOrdID(c.origClOrdID)
	_ = cmd.SetAccount(o.account)
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
	g.metrics.replaces.Inc()
}

func (g *Gateway) onStatus(s *session, m *quickfix.Message, now int64) {
	clOrdID := fieldBytes(m, tagClOrdID)
	var orderID uint64
	if id := fieldBytes(m, tagOrderID); len(id) > 0 {
		orderID, _ = strconv.ParseUint(string(id), 10, 64)
	}
	inst := g.bySymbol[string(fieldBytes(m, tagSymbol))]
	if len(clOrdID) > venue.ClOrdIDLength || inst == nil || (len(clOrdID) == 0 && orderID == 0) {
		g.sendUnknownStatus(s, m, "unknown order")
		return
	}
	seq, slot, rej := g.claim()
	if rej != nil {
		g.sendUnknownStatus(s, m, rej.text)
		return
	}
	side, _ := parseSide(fieldBytes(m, tagSide))
	var cmd venue.OrderStatusRequest
	_ = cmd.WrapEncode(slot, 0)
	cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
	cmd.SetTimestampNs(now)
	cmd.SetSessionIdx(s.idx)
	cmd.SetSide(side)
	cmd.SetInstrumentID(inst.ID)
	cmd.SetOrderID(orderID)
	_ = cmd.SetClOrdID(clOrdID)
	if reqID := fieldBytes(m, tagOrdStatusReqID); len(reqID) > 0 {
		s.rememberStatusReq(int64(g.cfg.SeqBase)+seq, string(reqID))
	}
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
}

// statusReqsMax bounds the OrdStatusReqIDs a session has waiting for their
// answer; past it the oldest is forgotten and its answer goes out without 790.
const statusReqsMax = 256

type statusReq struct {
	cmdSeq int64
	reqID  string
}

// rememberStatusReq keeps a request's OrdStatusReqID (790) until the answer
// to its command goes out: the matcher's OrderStatus event does not carry it.
func (s *session) rememberStatusReq(cmdSeq int64, reqID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.statusReqs) == statusReqsMax {
		s.statusReqs = s.statusReqs[1:]
	}
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
	clOrdID := fieldBytes(m, tagClOrdID)
	typ := fieldBytes(m, tagMassCancelRequestType)
	var instID uint32
	reject := func(reason int, text string) { g.rejectMassCancel(s, m, reason, text) }
	switch {
	case len(clOrdID) == 0 || len(clOrdID) > venue.ClOrdIDLength:
		reject(99, "ClOrdID must be 1 to "+strconv.Itoa(venue.ClOrdIDLength)+" characters")
		return
	case len(typ) == 1 && typ[0] == massCancelAll:
	case len(typ) == 1 && typ[0] == massCancelBySecurity:
		inst := g.bySymbol[string(fieldBytes(m, tagSymbol))]
		if inst == nil {
			reject(1, "unknown symbol "+string(fieldBytes(m, tagSymbol)))
			return
		}
		instID = inst.ID
	default:
		reject(0, "MassCancelRequestType "+string(typ)+" is not supported (1 and 7 are)")
		return
	}
	account := fieldBytes(m, tagAccount)
	if len(account) > venue.AccountLength {
		reject(99, "Account longer than "+strconv.Itoa(venue.AccountLength)+" characters")
		return
	}
	if !s.throttleCancel(now) {
		reject(99, "throttled")
		return
	}
	seq, slot, rej := g.claim()
	if rej != nil {
		reject(99, rej.text)
		return
	}
	side, _ := parseSide(fieldBytes(m, tagSide))
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
	g.commands.Publish(seq)
	s.lastCmd.Store(int64(g.cfg.SeqBase) + seq)
}

// Disconnected journals a SessionDisconnected command for the session, which
// cancels its DAY orders when cancel-on-disconnect is on. It waits up to the
// ring's claim timeout for a slot, retrying until deadline: this command must not be lost.
func (g *Gateway) Disconnected(idx uint16, deadline time.Duration) error {
	s := g.sessions[idx]
	end := time.Now().Add(deadline)
	for {
		seq, slot, err := g.commands.Claim()
		if err == nil {
			var cmd venue.SessionDisconnected
			_ = cmd.WrapEncode(slot, 0)
			cmd.SetSeq(g.cfg.SeqBase + uint64(seq))
			cmd.SetTimestampNs(g.cfg.Now())
			cmd.SetSessionIdx(s.idx)
			if s.cfg.CancelOnDisconnect {
				cmd.SetCancelOnDisconnect(venue.BooleanTypeTrue)
			}
			g.commands.Publish(seq)
			return nil
		}
		if !errors.Is(err, ring.ErrBusy) || time.Now().After(end) {
			return err
		}
	}
}

func (s *session) throttleOrder(now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counted(s.orders.allow(now))
}

func (s *session) throttleCancel(now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counted(s.cancels.allow(now))
}

func (s *session) throttleMessage(now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counted(s.messages.allow(now))
}

// counted counts a throttle's refusal (SessionRates.ThrottleHits).
func (s *session) counted(allowed bool) bool {
	if !allowed {
		s.throttleHits.Add(1)
	}
	return allowed
}
