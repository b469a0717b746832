package eventstream

import (
	"bytes"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// FuzzDecodeMessage reads arbitrary stream messages as `fixvenue events
// tail` and `events verify` do: DecodeMessage, then each event's subject
// and text form, then Batches. A stream is written by whoever can publish
// on its subjects, so nothing may panic; a refusal is ErrForeign; an
// accepted message holds events in its batch's range, ascending, each one
// whole event with its command seq, and encodes back to the same events.
func FuzzDecodeMessage(f *testing.F) {
	p1, p2 := testBatch(f)
	for _, p := range []*Message{p1, p2} {
		for _, format := range []Format{FormatSBE, FormatJSON} {
			m := encodeMessage("s", p, format)
			f.Add(format == FormatJSON, m.Header.Get(HeaderBatch), m.Header.Get(HeaderPart), m.Header.Get(HeaderCauseSeq),
				m.Header.Get(HeaderIndex), m.Header.Get(HeaderStreamSeq), m.Data)
		}
	}
	f.Add(false, "1-1", "1/1", "0", "0", "1", []byte{})
	f.Add(true, "1-2", "1/1", "1", "0", "1", []byte(`[{"eventSeq":1,"sbe":"AA=="}]`))
	subjects := Subjects{Prefix: "fixvenue", Venue: "V1", Symbols: map[uint32]string{1: "ACME", 42: "BRK.A"}}
	f.Fuzz(func(t *testing.T, asJSON bool, batch, part, cause, index, streamSeq string, data []byte) {
		format := FormatSBE
		if asJSON {
			format = FormatJSON
		}
		h := nats.Header{}
		h.Set(HeaderSchema, schemaName(format))
		h.Set(HeaderBatch, batch)
		h.Set(HeaderPart, part)
		h.Set(HeaderCauseSeq, cause)
		h.Set(HeaderIndex, index)
		h.Set(HeaderStreamSeq, streamSeq)
		m, err := DecodeMessage(h, data)
		if err != nil {
			if m != nil || !errors.Is(err, ErrForeign) {
				t.Fatalf("refused with %v (message %v), not ErrForeign alone", err, m)
			}
			return
		}
		for i, ev := range m.Events {
			if ev.EventSeq < m.First || ev.EventSeq > m.Last || (i > 0 && ev.EventSeq <= m.Events[i-1].EventSeq) {
				t.Fatalf("event %d at %d out of place in batch %d-%d", i, ev.EventSeq, m.First, m.Last)
			}
			if len(ev.Bytes) < venue.MessageHeaderSize+8 || eventLen(ev.Bytes) != len(ev.Bytes) || ev.CauseSeq != venue.CauseSeqOf(ev.Bytes) {
				t.Fatalf("event %d: %d bytes, cause %d, not one event", i, len(ev.Bytes), ev.CauseSeq)
			}
			_ = subjects.Subject(ev.Bytes)
			_, _ = venue.AppendText(nil, ev.Bytes, 0)
		}
		again, err := DecodeMessage(h, encodeMessage("s", m, format).Data)
		if err != nil || len(again.Events) != len(m.Events) {
			t.Fatalf("encoded again: %v", err)
		}
		for i, ev := range again.Events {
			if ev.Position != m.Events[i].Position || !bytes.Equal(ev.Bytes, m.Events[i].Bytes) {
				t.Fatalf("event %d encoded again: %+v, was %+v", i, ev, m.Events[i])
			}
		}
		for _, next := range []uint64{0, m.First} {
			b := Batches{Next: next}
			emitted := 0
			err := b.Add(m, func(Event) error { emitted++; return nil })
			if err == nil && m.Parts == 1 && emitted != int(m.Last-m.First+1) {
				t.Fatalf("a whole batch %d-%d of one part gave %d events", m.First, m.Last, emitted)
			}
		}
	})
}
