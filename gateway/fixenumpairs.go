package gateway

import "github.com/fixvenue/fixvenue/sbe/venue"

// The FIX fields the gateway both reads and writes (Side, OrdType,
// TimeInForce) map one to one onto the engine's enums. Each such field has
// one table of pairs below, which parses the inbound value and writes the
// outbound one, so that a value cannot be added in one direction only. The
// FIX values are fixenums.go's constants (checked against the dictionary).
// A table lists the commonest values first: a look-up stops at the first
// match, so a limit DAY order costs what the switches it replaces did.

// fixEnum pairs an engine enum value with its FIX value.
type fixEnum[E comparable, F ~string] struct {
	engine E
	fix    F
}

// fixOf returns the FIX value of e in table, def when e is not in it.
func fixOf[E comparable, F ~string](table []fixEnum[E, F], e E, def F) F {
	for _, p := range table {
		if p.engine == e {
			return p.fix
		}
	}
	return def
}

// engineOf returns the engine value of the FIX value b in table; false when
// b is none of the table's values. The fields with a table are FIX char
// fields: each value is one character.
func engineOf[E comparable, F ~string](table []fixEnum[E, F], b []byte) (E, bool) {
	if len(b) == 1 {
		for _, p := range table {
			if p.fix[0] == b[0] {
				return p.engine, true
			}
		}
	}
	var none E
	return none, false
}

var sides = []fixEnum[venue.Side, side]{
	{venue.SideBuy, sideBuy},
	{venue.SideSell, sideSell},
}

var ordTypes = []fixEnum[venue.OrdType, ordType]{
	{venue.OrdTypeLimit, ordTypeLimit},
	{venue.OrdTypeMarket, ordTypeMarket},
	{venue.OrdTypeStop, ordTypeStop},
	{venue.OrdTypeStopLimit, ordTypeStopLimit},
}

var timesInForce = []fixEnum[venue.TimeInForce, timeInForce]{
	{venue.TimeInForceDay, timeInForceDay},
	{venue.TimeInForceIOC, timeInForceIOC},
	{venue.TimeInForceGTC, timeInForceGTC},
	{venue.TimeInForceFOK, timeInForceFOK},
	{venue.TimeInForceGTD, timeInForceGTD},
	{venue.TimeInForceAtTheOpening, timeInForceAtTheOpening},
	{venue.TimeInForceAtTheClose, timeInForceAtTheClose},
}

// parseSide reads FIX Side (54).
func parseSide(b []byte) (venue.Side, bool) { return engineOf(sides, b) }

// parseOrdType reads FIX OrdType (40).
func parseOrdType(b []byte) (venue.OrdType, bool) { return engineOf(ordTypes, b) }

// parseTIF reads FIX TimeInForce (59); absent is Day.
func parseTIF(b []byte) (venue.TimeInForce, bool) {
	if len(b) == 0 {
		return venue.TimeInForceDay, true
	}
	return engineOf(timesInForce, b)
}

// sideOf writes a side; the engine has only buy and sell.
func sideOf(s venue.Side) side { return fixOf(sides, s, sideBuy) }

// ordTypeOf writes an order type, Limit for a value the table lacks.
func ordTypeOf(t venue.OrdType) ordType { return fixOf(ordTypes, t, ordTypeLimit) }

// timeInForceOf writes a time in force, Day for a value the table lacks.
func timeInForceOf(t venue.TimeInForce) timeInForce {
	return fixOf(timesInForce, t, timeInForceDay)
}
