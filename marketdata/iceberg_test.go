package marketdata

import (
	"bytes"
	"testing"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// TestTrackerNeverReadsIcebergReserve feeds a tracker a random stream with
// icebergs twice: as the engine wrote it, and with every quantity that
// tells an iceberg's reserve (order quantity, leaves, cumulative and
// cancelled quantity) raised by a large amount. The feed must not change by
// a byte: the tracker uses only the display quantities of an iceberg.
func TestTrackerNeverReadsIcebergReserve(t *testing.T) {
	events := recordEvents(t, 77, 6000)
	icebergs := map[uint64]bool{}
	var refills int
	scrambled := make([][]byte, len(events))
	const reserve = 1 << 40
	for i, ev := range events {
		ev = bytes.Clone(ev)
		scrambled[i] = ev
		tid, _ := venue.TemplateIDOf(ev, 0)
		switch tid {
		case venue.OrderAcceptedTemplateID:
			var m venue.OrderAccepted
			_ = m.WrapDecode(ev, 0)
			if m.Flags().Has(venue.OrderFlagsIceberg) {
				icebergs[m.OrderID()] = true
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
			}
		case venue.OrderReplacedTemplateID:
			var m venue.OrderReplaced
			_ = m.WrapDecode(ev, 0)
			if was := icebergs[m.OrderID()]; was || m.MaxFloorQty() != 0 {
				icebergs[m.OrderID()] = m.MaxFloorQty() != 0
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
				if was {
					m.SetOldLeavesQty(m.OldLeavesQty() + reserve)
				}
			}
		case venue.FillTemplateID:
			var m venue.Fill
			_ = m.WrapDecode(ev, 0)
			if icebergs[m.OrderID()] {
				m.SetQty(m.Qty() + reserve)
				m.SetLeavesQty(m.LeavesQty() + reserve)
				m.SetCumQty(m.CumQty() + reserve)
			}
		case venue.OrderCancelledTemplateID:
			var m venue.OrderCancelled
			_ = m.WrapDecode(ev, 0)
			if icebergs[m.OrderID()] {
				m.SetQty(m.Qty() + reserve)
				m.SetCancelledQty(m.CancelledQty() + reserve)
			}
		case venue.OrderRefilledTemplateID:
			refills++
		}
	}
	if refills == 0 || len(icebergs) == 0 {
		t.Fatalf("weak stream: %d icebergs, %d refills", len(icebergs), refills)
	}
	run := func(events [][]byte) []byte {
		capture := &packetCapture{}
		b, _ := packet.NewBuilder(packet.BuilderConfig{Channel: 1, Sequenced: true, Sink: capture})
		tr, err := NewTracker(TrackerConfig{Instruments: simTrackerDefs(), OrdersMax: simOrdersMax, LevelsMax: 1024}, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if err := tr.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.EndCommand(); err != nil {
			t.Fatal(err)
		}
		_ = b.Flush()
		return bytes.Join(capture.packets, nil)
	}
	if !bytes.Equal(run(events), run(scrambled)) {
		t.Fatal("the feed changed with the icebergs' reserves: the tracker read them")
	}
	t.Logf("%d events, %d icebergs, %d refills", len(events), len(icebergs), refills)
}
