package venue_test

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

const schemaPath = "../../schemas/venue.xml"

// codecs lists a constructor for every message of venue.xml; TestCodecsCoverSchema
// fails when a message is added to the schema and not here.
var codecs = sbetest.Codecs{
	"NewOrder":               func() sbetest.Codec { return new(venue.NewOrder) },
	"CancelOrder":            func() sbetest.Codec { return new(venue.CancelOrder) },
	"ReplaceOrder":           func() sbetest.Codec { return new(venue.ReplaceOrder) },
	"MassCancel":             func() sbetest.Codec { return new(venue.MassCancel) },
	"OrderStatusRequest":     func() sbetest.Codec { return new(venue.OrderStatusRequest) },
	"SessionDisconnected":    func() sbetest.Codec { return new(venue.SessionDisconnected) },
	"SetTradingStatus":       func() sbetest.Codec { return new(venue.SetTradingStatus) },
	"EndOfDay":               func() sbetest.Codec { return new(venue.EndOfDay) },
	"Snapshot":               func() sbetest.Codec { return new(venue.Snapshot) },
	"Tick":                   func() sbetest.Codec { return new(venue.Tick) },
	"OrderAccepted":          func() sbetest.Codec { return new(venue.OrderAccepted) },
	"OrderRejected":          func() sbetest.Codec { return new(venue.OrderRejected) },
	"Fill":                   func() sbetest.Codec { return new(venue.Fill) },
	"OrderCancelled":         func() sbetest.Codec { return new(venue.OrderCancelled) },
	"OrderReplaced":          func() sbetest.Codec { return new(venue.OrderReplaced) },
	"CancelRejected":         func() sbetest.Codec { return new(venue.CancelRejected) },
	"OrderStatus":            func() sbetest.Codec { return new(venue.OrderStatus) },
	"MassCancelReport":       func() sbetest.Codec { return new(venue.MassCancelReport) },
	"TradingStatusChanged":   func() sbetest.Codec { return new(venue.TradingStatusChanged) },
	"OperatorCommand":        func() sbetest.Codec { return new(venue.OperatorCommand) },
	"OperatorCancelOrder":    func() sbetest.Codec { return new(venue.OperatorCancelOrder) },
	"OperatorResult":         func() sbetest.Codec { return new(venue.OperatorResult) },
	"AddInstrument":          func() sbetest.Codec { return new(venue.AddInstrument) },
	"InstrumentAdded":        func() sbetest.Codec { return new(venue.InstrumentAdded) },
	"RiskSetLimit":           func() sbetest.Codec { return new(venue.RiskSetLimit) },
	"RiskControl":            func() sbetest.Codec { return new(venue.RiskControl) },
	"RiskBreach":             func() sbetest.Codec { return new(venue.RiskBreach) },
	"RiskControlResult":      func() sbetest.Codec { return new(venue.RiskControlResult) },
	"RiskUtilisation":        func() sbetest.Codec { return new(venue.RiskUtilisation) },
	"OrderTriggered":         func() sbetest.Codec { return new(venue.OrderTriggered) },
	"OrderRefilled":          func() sbetest.Codec { return new(venue.OrderRefilled) },
	"AuctionIndicative":      func() sbetest.Codec { return new(venue.AuctionIndicative) },
	"AuctionUncrossed":       func() sbetest.Codec { return new(venue.AuctionUncrossed) },
	"VolatilityInterruption": func() sbetest.Codec { return new(venue.VolatilityInterruption) },
}

func TestCodecsCoverSchema(t *testing.T) {
	sbetest.CheckCodecs(t, sbetest.LoadSchema(t, schemaPath), codecs, venue.MessageName)
}

// TestRoundTripEveryMessage sets every field of every message to a distinct
// value and reads it back, through the encoder and through a decoder.
func TestRoundTripEveryMessage(t *testing.T) {
	sbetest.RoundTripAll(t, sbetest.LoadSchema(t, schemaPath), codecs)
}
