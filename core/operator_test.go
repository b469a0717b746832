package core

import (
	"bytes"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

type operatorArgs struct {
	seq        uint64
	action     venue.OperatorActionType
	status     venue.TradingStatus
	session    uint16
	instrument uint32
	account    string
}

func encodeOperator(buf []byte, a operatorArgs) []byte {
	var c venue.OperatorCommand
	mustEncode(c.WrapEncode(buf, 0))
	c.SetSeq(a.seq)
	c.SetTimestampNs(1) // before the fixture's GTD order expires
	c.SetAction(a.action)
	c.SetStatus(a.status)
	c.SetFilterSessionIdx(a.session)
	c.SetInstrumentID(a.instrument)
	mustEncode(c.SetAccountString(a.account))
	mustEncode(c.SetOperatorString("alice"))
	mustEncode(c.SetReasonString("test"))
	return buf[:c.EncodedLength()]
}

// operatorResult applies an operator command and returns its result event,
// checking that it is the last event and names the operator.
func operatorResult(t *testing.T, m *Matcher, a operatorArgs) (venue.OperatorResult, int) {
	t.Helper()
	var buf [cmdSlotSize]byte
	sink := NewBufferSink(8)
	if err := m.Apply(encodeOperator(buf[:], a), sink); err != nil {
		t.Fatalf("%+v: Apply: %v", a, err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	var r venue.OperatorResult
	if sink.Len() == 0 {
		t.Fatalf("%+v: no event", a)
	}
	if err := r.WrapDecode(sink.Event(sink.Len()-1), 0); err != nil {
		t.Fatalf("%+v: last event is not an OperatorResult: %v", a, err)
	}
	if r.CauseSeq() != a.seq || r.Action() != a.action || !bytes.Equal(r.Operator(), []byte("alice")) {
		t.Fatalf("%+v: result cause %d action %s operator %q", a, r.CauseSeq(), r.Action(), r.Operator())
	}
	return r, sink.Len() - 1
}

func TestOperatorCommands(t *testing.T) {
	m := invariantsFixture(t) // instrument 1; sessions 1 and 2 have live orders
	snap := func() []byte {
		var b bytes.Buffer
		if err := m.WriteSnapshot(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	refused := []struct {
		name string
		args operatorArgs
		want venue.RejectReason
	}{
		{"resume an open instrument", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusOpen, instrument: 1}, venue.RejectReasonInvalidTransition},
		{"open all when all are open", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusOpen}, venue.RejectReasonInvalidTransition},
		{"unknown instrument", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 9}, venue.RejectReasonUnknownInstrument},
		{"invalid status", operatorArgs{action: venue.OperatorActionTypeSetTradingStatus, status: 9, instrument: 1}, venue.RejectReasonInvalidTransition},
		{"cancel an unknown instrument", operatorArgs{action: venue.OperatorActionTypeMassCancel, session: 1, instrument: 9}, venue.RejectReasonUnknownInstrument},
		{"cancel an unknown session", operatorArgs{action: venue.OperatorActionTypeMassCancel, session: 4}, venue.RejectReasonUnknownSession},
		{"disable an unknown session", operatorArgs{action: venue.OperatorActionTypeSessionDisable, session: 4}, venue.RejectReasonUnknownSession},
		{"unknown action", operatorArgs{action: 99}, venue.RejectReasonUnsupportedOrderCharacteristic},
	}
	seq := uint64(100)
	// The snapshot holds the matcher's clock: move it to the commands' time first.
	var buf [cmdSlotSize]byte
	if err := m.Apply(encodeTick(buf[:], seq-1, 1), NewBufferSink(1)); err != nil {
		t.Fatal(err)
	}
	for _, c := range refused {
		before := snap()
		c.args.seq = seq
		seq++
		r, others := operatorResult(t, m, c.args)
		if r.Reason() != c.want || others != 0 {
			t.Errorf("%s: reason %s with %d other events, want %s and none", c.name, r.Reason(), others, c.want)
		}
		if after := snap(); !bytes.Equal(before, after) {
			t.Errorf("%s: the state changed", c.name)
		}
	}
	// Halt, halt again (refused), cancel session 1's orders, close everything, EOD.
	r, n := operatorResult(t, m, operatorArgs{seq: seq, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 1})
	if r.Reason() != venue.RejectReasonNone || r.Count() != 1 || n != 1 {
		t.Fatalf("halt: %s count %d events %d", r.Reason(), r.Count(), n)
	}
	if st, _ := m.TradingStatus(1); st != venue.TradingStatusHalted {
		t.Fatalf("status %s after halt", st)
	}
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 1, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusHalted, instrument: 1}); r.Reason() != venue.RejectReasonInvalidTransition {
		t.Fatalf("halt twice: %s", r.Reason())
	}
	live := m.RestingOrders()
	r, n = operatorResult(t, m, operatorArgs{seq: seq + 2, action: venue.OperatorActionTypeMassCancel, session: 1})
	if r.Reason() != venue.RejectReasonNone || int(r.Count()) != n || n == 0 || m.RestingOrders() != live-n {
		t.Fatalf("cancel session 1: %s count %d events %d live %d → %d", r.Reason(), r.Count(), n, live, m.RestingOrders())
	}
	r, _ = operatorResult(t, m, operatorArgs{seq: seq + 3, action: venue.OperatorActionTypeSetTradingStatus, status: venue.TradingStatusClosed})
	if r.Reason() != venue.RejectReasonNone || r.Count() != 1 {
		t.Fatalf("close all: %s count %d", r.Reason(), r.Count())
	}
	live = m.RestingOrders()
	r, n = operatorResult(t, m, operatorArgs{seq: seq + 4, action: venue.OperatorActionTypeEndOfDay})
	if r.Reason() != venue.RejectReasonNone || int(r.Count()) != n || m.RestingOrders() != live-n {
		t.Fatalf("end of day: %s count %d events %d", r.Reason(), r.Count(), n)
	}
	if r, _ := operatorResult(t, m, operatorArgs{seq: seq + 5, action: venue.OperatorActionTypeSessionDisable, session: 2}); r.Reason() != venue.RejectReasonNone {
		t.Fatalf("disable session 2: %s", r.Reason())
	}
}
