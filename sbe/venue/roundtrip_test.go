package venue_test

import (
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/sbetest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

const schemaPath = "../../schemas/venue.xml"

// codecs lists a constructor for every message of venue.xml; TestCodecsCoverSchema
// fails when a message is added to the schema and not here.
var codecs = map[string]func() sbetest.Codec{
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
	s := sbetest.LoadSchema(t, schemaPath)
	if len(codecs) != len(s.Messages) {
		t.Errorf("codecs lists %d messages, the schema has %d", len(codecs), len(s.Messages))
	}
	for _, m := range s.Messages {
		if codecs[m.Name] == nil {
			t.Errorf("message %q is missing from codecs", m.Name)
		}
		if got := venue.MessageName(m.ID); got != m.Name {
			t.Errorf("MessageName(%d) = %q, want %q", m.ID, got, m.Name)
		}
	}
}

// TestRoundTripEveryMessage sets every field of every message to a distinct
// value and reads it back, through the encoder and through a decoder.
func TestRoundTripEveryMessage(t *testing.T) {
	s := sbetest.LoadSchema(t, schemaPath)
	for _, m := range s.Messages {
		t.Run(m.Name, func(t *testing.T) {
			newCodec := codecs[m.Name]
			if newCodec == nil {
				t.Skip("not in codecs; TestCodecsCoverSchema reports it")
			}
			sbetest.RoundTrip(t, m, newCodec(), newCodec())
		})
	}
}
