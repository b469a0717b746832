package marketdata

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// phase sends a phase change for instrument 1 (an OperatorCommand
// SetPhaseStatus, as the schedule sends): a change to Open or Closed extends
// a call that would uncross outside the dynamic band.
func (s *scenario) phase(st venue.TradingStatus) string {
	s.seq++
	return s.apply(cmdtest.Encode(s.t, s.cmd[:], func(c *venue.OperatorCommand) {
		c.SetSeq(s.seq)
		c.SetTimestampNs(int64(s.seq))
		c.SetAction(venue.OperatorActionTypeSetPhaseStatus)
		c.SetInstrumentID(1)
		c.SetStatus(st)
	}))
}

// extendingInstruments are simInstruments with ACME's calls extended when
// they would uncross outside its dynamic band (15 ticks around 1000).
func extendingInstruments() []core.InstrumentConfig {
	ins := append([]core.InstrumentConfig(nil), simInstruments...)
	ins[0].CallExtension = true
	return ins
}

// callPhaseCases are calls whose instrument's status has left the call's
// phase since its last indicative: a closing call the schedule's close
// extended into a volatility auction, and an opening call an operator
// halted. Each leaves ACME with an indicative of 5@1030 in phase want.
var callPhaseCases = []struct {
	name       string
	run        func(s *scenario)
	status     mdsbe.TradingStatus
	want       mdsbe.TradingStatus
	instrument func() []core.InstrumentConfig
}{
	{"closing call extended", func(s *scenario) {
		s.status(venue.TradingStatusClosingCall)
		s.order(venue.SideBuy, 1030, 5, venue.TimeInForceDay)
		s.order(venue.SideSell, 1030, 5, venue.TimeInForceDay)
		s.phase(venue.TradingStatusClosed)
	}, mdsbe.TradingStatusVolatilityAuction, mdsbe.TradingStatusClosingCall, extendingInstruments},
	{"opening call halted", func(s *scenario) {
		s.status(venue.TradingStatusOpeningCall)
		s.order(venue.SideBuy, 1030, 5, venue.TimeInForceDay)
		s.order(venue.SideSell, 1030, 5, venue.TimeInForceDay)
		s.status(venue.TradingStatusHalted)
	}, mdsbe.TradingStatusHalted, mdsbe.TradingStatusOpeningCall, func() []core.InstrumentConfig { return simInstruments }},
}

// snapshotAuctions renders the AuctionUpdate messages of snapshot packets.
func snapshotAuctions(t *testing.T, pkts [][]byte) []string {
	t.Helper()
	var out []string
	for _, pkt := range pkts {
		var r packet.Reader
		if err := r.Reset(pkt); err != nil {
			t.Fatal(err)
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			if tid, _ := mdsbe.TemplateIDOf(msg, 0); tid == mdsbe.AuctionUpdateTemplateID {
				var m mdsbe.AuctionUpdate
				_ = m.WrapDecode(msg, 0)
				out = append(out, fmt.Sprintf("%v %v %d@%d", m.Kind(), m.Status(), m.MatchedQty(), m.PriceTicks()))
			}
		}
	}
	return out
}

// frames splits a snapshot's TCP frames into its packets.
func frames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var pkts [][]byte
	if err := forEachFrame(b, func(pkt []byte) error { pkts = append(pkts, pkt); return nil }); err != nil {
		t.Fatal(err)
	}
	return pkts
}

// TestSnapshotIndicativeKeepsTheCallPhase: a snapshot's indicative carries
// the phase the live AuctionUpdate carried, not the instrument's status
// now, which its entries carry: a client that joins during a closing
// call's extension sees ClosingCall as the live clients did, not
// VolatilityAuction, and one that joins a halted call sees the call, not
// Halted. The feed's saved state keeps the phase, so a start from it
// snapshots the same.
func TestSnapshotIndicativeKeepsTheCallPhase(t *testing.T) {
	for _, tc := range callPhaseCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenarioOf(t, tc.instrument())
			tc.run(s)
			st, _ := s.tr.State(1)
			if st.Status != tc.status || !st.Indicative.Active {
				t.Fatalf("the scenario left ACME %v with indicative %+v, want %v in a call", st.Status, st.Indicative, tc.status)
			}
			want := fmt.Sprintf("Indicative %v 5@1030", tc.want)
			snap, err := encodeSnapshot(s.tr, 1, s.b.NextSeq()-1, 1, 1, SnapshotBytesMaxDefault)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshotAuctions(t, frames(t, snap)); len(got) != 1 || got[0] != want {
				t.Fatalf("snapshot indicative %v, want %s", got, want)
			}

			var state bytes.Buffer
			if err := s.tr.writeState(&state, s.b.NextSeq()); err != nil {
				t.Fatal(err)
			}
			restored, _, _ := newStateTracker(t)
			next, err := restored.readState(bytes.NewReader(state.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := restored.State(1); got.Indicative != st.Indicative {
				t.Fatalf("restored indicative %+v, want %+v", got.Indicative, st.Indicative)
			}
			snap, err = encodeSnapshot(restored, 1, next-1, 1, 1, SnapshotBytesMaxDefault)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshotAuctions(t, frames(t, snap)); len(got) != 1 || got[0] != want {
				t.Fatalf("after a start from the state, snapshot indicative %v, want %s", got, want)
			}
		})
	}
}

// TestRecoverySnapshotKeepsTheCallPhase: the same through the running
// feed's recovery service, over TCP, during a closing call's extension.
func TestRecoverySnapshotKeepsTheCallPhase(t *testing.T) {
	fx := newFeedFixture(t, udpSink(t).LocalAddr().String(), nil)
	tc := callPhaseCases[0]
	s := newScenarioOf(t, tc.instrument())
	s.feed = fx.feed
	tc.run(s)
	rc := dialRecovery(t, fx.feed.RecoveryAddr().String())
	rc.snapshot(1, 1)
	var pkts [][]byte
	for done := false; !done; {
		pkt, err := packet.ReadFrame(rc.r, rc.buf)
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, bytes.Clone(pkt))
		var r packet.Reader
		if err := r.Reset(pkt); err != nil {
			t.Fatal(err)
		}
		for msg, ok := r.Next(); ok; msg, ok = r.Next() {
			if tid, _ := mdsbe.TemplateIDOf(msg, 0); tid == mdsbe.SnapshotEndTemplateID {
				done = true
			}
		}
	}
	want := fmt.Sprintf("Indicative %v 5@1030", tc.want)
	if got := snapshotAuctions(t, pkts); len(got) != 1 || got[0] != want {
		t.Fatalf("recovery snapshot indicative %v, want %s", got, want)
	}
}
