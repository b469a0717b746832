package eventstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func fillEvent(t testing.TB, inst uint32) []byte {
	t.Helper()
	return cmdtest.Encode(t, make([]byte, core.EventSlotMin), func(f *venue.Fill) {
		f.SetCauseSeq(7)
		f.SetInstrumentID(inst)
		f.SetLastQty(5)
	})
}

func TestSubjects(t *testing.T) {
	s := Subjects{Prefix: "fixvenue", Venue: "V1", Symbols: map[uint32]string{1: "ACME", 2: "BRK.A"}}
	if got := s.Subject(fillEvent(t, 1)); got != "fixvenue.V1.trades.ACME" {
		t.Fatalf("fill subject %q", got)
	}
	if got := s.Subject(fillEvent(t, 2)); got != "fixvenue.V1.trades.BRK_A" {
		t.Fatalf("a dot in a symbol must not split the subject: %q", got)
	}
	if got := s.Subject(fillEvent(t, 9)); got != "fixvenue.V1.trades._" {
		t.Fatalf("unknown instrument subject %q", got)
	}
	status := cmdtest.Encode(t, make([]byte, core.EventSlotMin), func(*venue.TradingStatusChanged) {})
	if got := s.Subject(status); got != "fixvenue.V1.status" {
		t.Fatalf("status subject %q", got)
	}
	// An instrument listed while the venue runs: its addition is a status
	// event, and its later events get its symbol.
	for _, reason := range []venue.RejectReason{venue.RejectReasonDuplicateInstrument, venue.RejectReasonNone} {
		add := cmdtest.Encode(t, make([]byte, core.EventSlotMin), func(a *venue.InstrumentAdded) {
			a.SetInstrumentID(9)
			a.SetReason(reason)
			_ = a.SetSymbolString("NEWCO")
		})
		if got := s.Subject(add); got != "fixvenue.V1.status" {
			t.Fatalf("InstrumentAdded subject %q", got)
		}
		want := map[bool]string{true: "fixvenue.V1.trades.NEWCO", false: "fixvenue.V1.trades._"}[reason == venue.RejectReasonNone]
		if got := s.Subject(fillEvent(t, 9)); got != want {
			t.Fatalf("after an InstrumentAdded (%s): fill subject %q, want %q", reason, got, want)
		}
	}
}

// testBatch is a batch of events 42-44 of commands 7 and 8 in two parts:
// events 42 and 44 on one subject, 43 on another.
func testBatch(t testing.TB) (p1, p2 *Message) {
	ev := func(seq, cause uint64, index uint32) Event {
		b := fillEvent(t, uint32(seq))
		binary.LittleEndian.PutUint64(b[venue.MessageHeaderSize:], cause)
		return Event{Position: Position{EventSeq: seq, CauseSeq: cause, Index: index}, Bytes: b}
	}
	m := Message{First: 42, Last: 44, Start: Position{EventSeq: 42, CauseSeq: 7, Index: 1}, Parts: 2}
	p1, p2 = &Message{}, &Message{}
	*p1, *p2 = m, m
	p1.Part, p1.StreamSeq, p1.Events = 1, 10, []Event{ev(42, 7, 1), ev(44, 8, 1)}
	p2.Part, p2.StreamSeq, p2.Events = 2, 11, []Event{ev(43, 8, 0)}
	return p1, p2
}

// TestMessageRoundTrip: both formats decode to the same batch, events,
// positions and bytes; the message id is the batch's range and part.
func TestMessageRoundTrip(t *testing.T) {
	p1, _ := testBatch(t)
	for _, f := range []Format{FormatSBE, FormatJSON} {
		m := encodeMessage("s", p1, f)
		if m.Header.Get(nats.MsgIdHdr) != "42-44/1" {
			t.Fatalf("%s: Nats-Msg-Id %q", f, m.Header.Get(nats.MsgIdHdr))
		}
		got, err := DecodeMessage(m.Header, m.Data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got.First != 42 || got.Last != 44 || got.Part != 1 || got.Parts != 2 || got.Start != p1.Start || got.StreamSeq != 10 ||
			len(got.Events) != 2 {
			t.Fatalf("%s: got %+v", f, got)
		}
		for i, ev := range got.Events {
			if ev.Position != p1.Events[i].Position || !bytes.Equal(ev.Bytes, p1.Events[i].Bytes) {
				t.Fatalf("%s: event %d: got %+v, want %+v", f, i, ev, p1.Events[i])
			}
		}
		if f == FormatJSON && !bytes.Contains(m.Data, []byte(`"text":"Fill `)) {
			t.Fatalf("json payload without the text form: %s", m.Data)
		}
	}
}

// TestBatchesReorder: a batch's parts give its events in event order once
// the last part is in; a missing or repeated part is a gap.
func TestBatchesReorder(t *testing.T) {
	p1, p2 := testBatch(t)
	var got []uint64
	emit := func(ev Event) error { got = append(got, ev.EventSeq); return nil }
	b := Batches{Next: 42}
	if err := b.Add(p1, emit); err != nil || len(got) != 0 {
		t.Fatalf("part 1: %v, emitted %v", err, got)
	}
	if err := b.Add(p2, emit); err != nil || len(got) != 3 || got[0] != 42 || got[1] != 43 || got[2] != 44 || b.Next != 45 {
		t.Fatalf("part 2: %v, emitted %v, next %d", err, got, b.Next)
	}
	for name, parts := range map[string][]*Message{"part 2 first": {p2}, "part 1 twice": {p1, p1}, "not the next batch": {p1}} {
		b := Batches{Next: 42}
		if name == "not the next batch" {
			b.Next = 40
		}
		var err error
		for _, p := range parts {
			if err = b.Add(p, emit); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), "gap") {
			t.Errorf("%s: %v, want a gap", name, err)
		}
	}
	short := *p2
	short.Events = nil
	b = Batches{Next: 42}
	if err := b.Add(p1, emit); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(&short, emit); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Errorf("a batch missing an event: %v, want a gap", err)
	}
}

func TestDecodeRefusesForeignMessages(t *testing.T) {
	p1, _ := testBatch(t)
	good := encodeMessage("s", p1, FormatSBE)
	cases := map[string]func(h nats.Header) []byte{
		"no schema":        func(h nats.Header) []byte { h.Del(HeaderSchema); return good.Data },
		"other schema":     func(h nats.Header) []byte { h.Set(HeaderSchema, "venue/2/0/sbe/batch"); return good.Data },
		"one-event schema": func(h nats.Header) []byte { h.Set(HeaderSchema, "venue/1/0/sbe"); return good.Data },
		"bad batch":        func(h nats.Header) []byte { h.Set(HeaderBatch, "x"); return good.Data },
		"batch too long":   func(h nats.Header) []byte { h.Set(HeaderBatch, "1-100000"); return good.Data },
		"bad part":         func(h nats.Header) []byte { h.Set(HeaderPart, "3/2"); return good.Data },
		"event outside":    func(h nats.Header) []byte { h.Set(HeaderBatch, "43-44"); return good.Data },
		"short data":       func(h nats.Header) []byte { return good.Data[:10] },
		"long data":        func(h nats.Header) []byte { return append(append([]byte(nil), good.Data...), 0) },
		"no event":         func(h nats.Header) []byte { return nil },
	}
	for name, mutate := range cases {
		h := nats.Header{}
		for k, v := range good.Header {
			h[k] = append([]string(nil), v...)
		}
		data := mutate(h)
		if _, err := DecodeMessage(h, data); !errors.Is(err, ErrForeign) {
			t.Errorf("%s: %v, want ErrForeign", name, err)
		}
	}
}

// TestChecksLastKept: the check that a stream still holds its last message
// goes to NATS 2.11 and later only; an older server, or a version not
// understood, gets the batches without it (doc.go, "Messages").
func TestChecksLastKept(t *testing.T) {
	for v, want := range map[string]bool{"2.15.2": true, "2.11.0": true, "3.0.0": true, "2.10.29": false, "2.9.0": false, "": false, "x.y": false} {
		if got := checksLastKept(v); got != want {
			t.Errorf("checksLastKept(%q) = %v, want %v", v, got, want)
		}
	}
}
