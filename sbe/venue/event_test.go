package venue

import (
	"encoding/binary"
	"testing"
)

// TestEventHeadOffsets holds every event to the layout CauseSeqOf and
// TimestampNsOf read: causeSeq at 0 and timestampNs at 8 of the block. An
// event added to the schema must be listed here.
func TestEventHeadOffsets(t *testing.T) {
	events := []struct {
		name                    string
		templateID              uint16
		causeSeqAt, timestampAt int
	}{
		{"AuctionIndicative", AuctionIndicativeTemplateID, AuctionIndicativeCauseSeqOffset, AuctionIndicativeTimestampNsOffset},
		{"AuctionUncrossed", AuctionUncrossedTemplateID, AuctionUncrossedCauseSeqOffset, AuctionUncrossedTimestampNsOffset},
		{"CancelRejected", CancelRejectedTemplateID, CancelRejectedCauseSeqOffset, CancelRejectedTimestampNsOffset},
		{"Fill", FillTemplateID, FillCauseSeqOffset, FillTimestampNsOffset},
		{"InstrumentAdded", InstrumentAddedTemplateID, InstrumentAddedCauseSeqOffset, InstrumentAddedTimestampNsOffset},
		{"MassCancelReport", MassCancelReportTemplateID, MassCancelReportCauseSeqOffset, MassCancelReportTimestampNsOffset},
		{"OperatorResult", OperatorResultTemplateID, OperatorResultCauseSeqOffset, OperatorResultTimestampNsOffset},
		{"OrderAccepted", OrderAcceptedTemplateID, OrderAcceptedCauseSeqOffset, OrderAcceptedTimestampNsOffset},
		{"OrderCancelled", OrderCancelledTemplateID, OrderCancelledCauseSeqOffset, OrderCancelledTimestampNsOffset},
		{"OrderRefilled", OrderRefilledTemplateID, OrderRefilledCauseSeqOffset, OrderRefilledTimestampNsOffset},
		{"OrderRejected", OrderRejectedTemplateID, OrderRejectedCauseSeqOffset, OrderRejectedTimestampNsOffset},
		{"OrderReplaced", OrderReplacedTemplateID, OrderReplacedCauseSeqOffset, OrderReplacedTimestampNsOffset},
		{"OrderStatus", OrderStatusTemplateID, OrderStatusCauseSeqOffset, OrderStatusTimestampNsOffset},
		{"OrderTriggered", OrderTriggeredTemplateID, OrderTriggeredCauseSeqOffset, OrderTriggeredTimestampNsOffset},
		{"RiskBreach", RiskBreachTemplateID, RiskBreachCauseSeqOffset, RiskBreachTimestampNsOffset},
		{"RiskControlResult", RiskControlResultTemplateID, RiskControlResultCauseSeqOffset, RiskControlResultTimestampNsOffset},
		{"RiskUtilisation", RiskUtilisationTemplateID, RiskUtilisationCauseSeqOffset, RiskUtilisationTimestampNsOffset},
		{"TradingStatusChanged", TradingStatusChangedTemplateID, TradingStatusChangedCauseSeqOffset, TradingStatusChangedTimestampNsOffset},
		{"VolatilityInterruption", VolatilityInterruptionTemplateID, VolatilityInterruptionCauseSeqOffset, VolatilityInterruptionTimestampNsOffset},
	}
	listed := map[uint16]bool{}
	for _, e := range events {
		listed[e.templateID] = true
		if e.causeSeqAt != 0 || e.timestampAt != 8 {
			t.Errorf("%s: causeSeq at %d and timestampNs at %d, want 0 and 8", e.name, e.causeSeqAt, e.timestampAt)
		}
	}
	for id := range 1 << 16 {
		if name := MessageName(uint16(id)); name != "" && !IsCommand(uint16(id)) && !listed[uint16(id)] {
			t.Errorf("event %s (template %d) is not listed", name, id)
		}
	}
}

func TestCauseSeqAndTimestampOf(t *testing.T) {
	buf := make([]byte, MessageHeaderSize+FillBlockLength)
	var e Fill
	if err := e.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	e.SetCauseSeq(1234567)
	e.SetTimestampNs(-42)
	if got := CauseSeqOf(buf); got != 1234567 {
		t.Errorf("CauseSeqOf = %d, want 1234567", got)
	}
	if got := TimestampNsOf(buf); got != -42 {
		t.Errorf("TimestampNsOf = %d, want -42", got)
	}
	short := binary.LittleEndian.AppendUint64(make([]byte, MessageHeaderSize), 7)
	if CauseSeqOf(short[:MessageHeaderSize+7]) != 0 || TimestampNsOf(short) != 0 {
		t.Error("a buffer too short for the field reads as 0")
	}
	if CauseSeqOf(short) != 7 {
		t.Errorf("CauseSeqOf of a buffer that ends after causeSeq = %d, want 7", CauseSeqOf(short))
	}
}
