package marketdata

import (
	"errors"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// sliceSource hands out a fixed list of events in batches, then ends.
type sliceSource struct {
	events [][]byte
	batch  int
}

var errSourceDone = errors.New("source done")

func (s *sliceSource) Next() int64 { return 0 }
func (s *sliceSource) WaitFor(seq int64) (int64, error) {
	if int(seq) >= len(s.events) {
		return 0, errSourceDone
	}
	return min(seq+int64(s.batch), int64(len(s.events))) - 1, nil
}
func (s *sliceSource) Slot(seq int64) []byte { return s.events[seq] }
func (s *sliceSource) Release(int64)         {}

type countingRecorder struct{ n int }

func (r *countingRecorder) Record(int64) { r.n++ }

// TestFeedRecordsOrderToFeedOncePerCommand: the feed records one latency
// per command a FIX message caused (an order, a cancel, a replace, a mass
// cancel) whose events change a book or a status, and none for the others:
// rejects, and the commands no FIX message caused (a status change, a
// disconnect, an end of day, a tick), whose timestamps are no arrival.
func TestFeedRecordsOrderToFeedOncePerCommand(t *testing.T) {
	rec := &countingRecorder{}
	fx := newFeedFixture(t, udpSink(t).LocalAddr().String(), func(c *FeedConfig) { c.OrderToFeed = rec })
	sim := newVenueSim(t, 7)
	src := &sliceSource{}
	want, others := 0, 0
	for range 500 {
		var cmd uint16
		sink := sim.apply(func() []byte {
			b := sim.randomCommand()
			cmd, _ = venue.TemplateIDOf(b, 0)
			return b
		})
		changed := false
		for _, ev := range sink.All() {
			src.events = append(src.events, append([]byte(nil), ev...))
			switch tid, _ := venue.TemplateIDOf(ev, 0); tid {
			case venue.OrderAcceptedTemplateID, venue.FillTemplateID, venue.OrderCancelledTemplateID,
				venue.OrderReplacedTemplateID, venue.TradingStatusChangedTemplateID:
				changed = true
			}
		}
		switch {
		case !changed:
		case cmd == venue.NewOrderTemplateID || cmd == venue.CancelOrderTemplateID || cmd == venue.ReplaceOrderTemplateID ||
			cmd == venue.MassCancelTemplateID:
			want++
		default:
			others++
		}
	}
	src.batch = len(src.events) // RingSource's batches end on command boundaries; one batch does too
	if err := fx.feed.Run(src); !errors.Is(err, errSourceDone) {
		t.Fatal(err)
	}
	if rec.n != want || want == 0 || others == 0 {
		t.Fatalf("recorded %d latencies for %d FIX commands that reached the feed (and %d others that did)", rec.n, want, others)
	}
}
