package eventstream

import (
	"bytes"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/internal/cmdtest"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

func fillEvent(t *testing.T, inst uint32) []byte {
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

// TestMessageRoundTrip: both formats decode to the same event bytes and position.
func TestMessageRoundTrip(t *testing.T) {
	ev := Event{Position: Position{EventSeq: 42, CauseSeq: 7, Index: 1}, Bytes: fillEvent(t, 1)}
	for _, f := range []Format{FormatSBE, FormatJSON} {
		m := message("s", ev, f)
		if m.Header.Get(nats.MsgIdHdr) != "42" {
			t.Fatalf("%s: Nats-Msg-Id %q", f, m.Header.Get(nats.MsgIdHdr))
		}
		got, err := Decode(m.Header, m.Data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got.Position != ev.Position || !bytes.Equal(got.Bytes, ev.Bytes) {
			t.Fatalf("%s: got %+v", f, got)
		}
		if f == FormatJSON && !bytes.Contains(m.Data, []byte(`"text":"Fill `)) {
			t.Fatalf("json payload without the text form: %s", m.Data)
		}
	}
}

func TestDecodeRefusesForeignMessages(t *testing.T) {
	good := message("s", Event{Position: Position{EventSeq: 1}, Bytes: fillEvent(t, 1)}, FormatSBE)
	cases := map[string]func(h nats.Header) []byte{
		"no schema":    func(h nats.Header) []byte { h.Del(HeaderSchema); return good.Data },
		"other schema": func(h nats.Header) []byte { h.Set(HeaderSchema, "venue/2/0/sbe"); return good.Data },
		"bad seq":      func(h nats.Header) []byte { h.Set(HeaderEventSeq, "x"); return good.Data },
		"short data":   func(h nats.Header) []byte { return good.Data[:10] },
		"long data":    func(h nats.Header) []byte { return append(append([]byte(nil), good.Data...), 0) },
	}
	for name, mutate := range cases {
		h := nats.Header{}
		for k, v := range good.Header {
			h[k] = append([]string(nil), v...)
		}
		data := mutate(h)
		if _, err := Decode(h, data); !errors.Is(err, ErrForeign) {
			t.Errorf("%s: %v, want ErrForeign", name, err)
		}
	}
}
