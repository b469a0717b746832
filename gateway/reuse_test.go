package gateway

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// fillReport writes an ExecutionReport with an Account (its lowest tag) or
// without one, so that two reports' bodies start with different tags.
func fillReport(b *erBuilder, i uint64, account []byte) *erBuilder {
	return b.uint(tag.OrderID, i).bytes(tag.ClOrdID, []byte("client-order-000001")).uint(tag.ExecID, i).
		exec(execTypeNew, ordStatusNew).symbol().str(tag.Side, "1").int(tag.OrderQty, 100).bytes(tag.Account, account).
		price(tag.Price, 10010).int(tag.LeavesQty, 100).str(tag.CumQty, "0").avgPx(0, 0).
		time(tag.TransactTime, 1_796_000_000_123_456_789)
}

// TestReusedReportWire: a report built in a message that was sent before
// (its header filled, BodyLength and CheckSum written, as QuickFIX/Go's send
// does) goes on the wire exactly as the same report in a new message, with
// nothing left of the previous body, whichever tag that body started with.
func TestReusedReportWire(t *testing.T) {
	g := acmeGateway(t, 7)
	s := newSender(quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT1"}, 4, time.Second, g)
	for i, account := range [][]byte{[]byte("ACC-A"), nil, []byte("ACC-B"), nil, nil} {
		m := s.takeReport()
		got := withHeader(fillReport(g.newER(7), uint64(i), account).into(m)).String()
		want := withHeader(fillReport(g.newER(7), uint64(i), account).message()).String()
		if got != want {
			t.Fatalf("report %d: reused message's bytes differ\n got %q\nwant %q", i, got, want)
		}
		s.giveBack(m)
		if i > 0 {
			if again := s.takeReport(); again != m {
				t.Fatalf("report %d: the free list did not give the sent message back", i)
			} else {
				s.giveBack(again)
			}
		}
	}
}

// TestReusedReportAllocations: building and serialising a report in a reused
// message allocates far less than in a new one, and the free list is bounded
// (reportsReusedMax): giving back more drops them.
func TestReusedReportAllocations(t *testing.T) {
	g := acmeGateway(t, 1)
	s := newSender(quickfix.SessionID{BeginString: "FIX.4.4", SenderCompID: "VENUE", TargetCompID: "CLIENT1"}, 4, time.Second, g)
	s.giveBack(newReport())
	reused := testing.AllocsPerRun(500, func() {
		m := s.takeReport()
		_ = withHeader(fillReport(g.newER(1), 5, nil).into(m)).String()
		s.giveBack(m)
	})
	fresh := testing.AllocsPerRun(500, func() {
		_ = withHeader(fillReport(g.newER(1), 5, nil).message()).String()
	})
	t.Logf("allocations per report serialised: %.0f in a reused message, %.0f in a new one", reused, fresh)
	if reused > fresh-15 {
		t.Fatalf("a reused report allocates %.0f times, a new one %.0f: want at least 15 fewer", reused, fresh)
	}
	// TestAllocationsPerOrder (server) allows this many more for each new
	// report a run counts: keep the two in step.
	if fresh-reused > 30 {
		t.Fatalf("a new report allocates %.0f times more than a reused one: want at most 30", fresh-reused)
	}
	// Only a report taken from an empty free list is counted as new, on
	// fixvenue_execution_reports_new_total.
	reg := prometheus.NewRegistry()
	g.metrics = NewMetrics(reg)
	newReports := func() float64 {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == "fixvenue_execution_reports_new_total" {
				return f.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("fixvenue_execution_reports_new_total is not registered")
		return 0
	}
	s = newSender(s.id, 4, time.Second, g)
	s.giveBack(s.takeReport())
	s.giveBack(s.takeReport())
	if n := newReports(); n != 1 {
		t.Fatalf("%.0f reports counted new, want 1 (the second came from the free list)", n)
	}
	for range 2 * reportsReusedMax {
		s.giveBack(newReport())
	}
	if n := len(s.free); n != reportsReusedMax {
		t.Fatalf("free list holds %d messages, want its bound %d", n, reportsReusedMax)
	}
}
