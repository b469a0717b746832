package eventstream

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Message headers of every exported event (see doc.go, "Messages").
const (
	// HeaderEventSeq is the event's sequence: 1 for the journal's first
	// event, one more for each event after it. It equals the message's
	// stream sequence, and Nats-Msg-Id carries it too.
	HeaderEventSeq = "Fixvenue-Event-Seq"
	// HeaderCauseSeq is the seq of the journaled command that produced the event.
	HeaderCauseSeq = "Fixvenue-Cause-Seq"
	// HeaderIndex is the event's index among its command's events (from 0).
	HeaderIndex = "Fixvenue-Event-Index"
	// HeaderSchema names the payload's schema: "venue/<id>/<version>/<format>".
	HeaderSchema = "Fixvenue-Schema"
)

// Format is the payload of an exported event.
type Format string

// Payload formats.
const (
	// FormatSBE is the event's bytes as the matcher wrote them (header and block).
	FormatSBE Format = "sbe"
	// FormatJSON is a JSON object with the event's text form and its bytes in base64.
	FormatJSON Format = "json"
)

// schemaName is the value of HeaderSchema for a format.
func schemaName(f Format) string {
	return fmt.Sprintf("venue/%d/%d/%s", venue.SchemaID, venue.SchemaVersion, f)
}

// Position is where an event stands in the venue's event stream.
type Position struct {
	EventSeq uint64 // 0: before the first event
	CauseSeq uint64
	Index    uint32
}

// Event is one exported event.
type Event struct {
	Position
	Bytes []byte // the SBE event: header plus block
}

// eventLen is the length of the event at the start of slot.
func eventLen(slot []byte) int {
	return venue.MessageHeaderSize + int(binary.LittleEndian.Uint16(slot))
}

// Kinds of subjects.
const (
	KindTrades = "trades" // Fill events
	KindOrders = "orders" // every other order event
	KindStatus = "status" // TradingStatusChanged, InstrumentAdded
)

// kindAndInstrument classifies an event for its subject.
func kindAndInstrument(ev []byte) (string, uint32) {
	tid, err := venue.TemplateIDOf(ev, 0)
	if err != nil {
		return KindOrders, 0
	}
	switch tid {
	case venue.FillTemplateID:
		m, _ := venue.DecodeFill(ev)
		return KindTrades, m.InstrumentID()
	case venue.TradingStatusChangedTemplateID, venue.InstrumentAddedTemplateID:
		return KindStatus, 0
	case venue.OrderAcceptedTemplateID:
		m, _ := venue.DecodeOrderAccepted(ev)
		return KindOrders, m.InstrumentID()
	case venue.OrderRejectedTemplateID:
		m, _ := venue.DecodeOrderRejected(ev)
		return KindOrders, m.InstrumentID()
	case venue.OrderCancelledTemplateID:
		m, _ := venue.DecodeOrderCancelled(ev)
		return KindOrders, m.InstrumentID()
	case venue.OrderReplacedTemplateID:
		m, _ := venue.DecodeOrderReplaced(ev)
		return KindOrders, m.InstrumentID()
	case venue.CancelRejectedTemplateID:
		m, _ := venue.DecodeCancelRejected(ev)
		return KindOrders, m.InstrumentID()
	case venue.OrderStatusTemplateID:
		m, _ := venue.DecodeOrderStatus(ev)
		return KindOrders, m.InstrumentID()
	case venue.MassCancelReportTemplateID:
		m, _ := venue.DecodeMassCancelReport(ev)
		return KindOrders, m.InstrumentID()
	}
	return KindOrders, 0
}

// Subjects names the subjects of one venue's events:
// <prefix>.<venue>.trades.<SYMBOL>, <prefix>.<venue>.orders.<SYMBOL> and
// <prefix>.<venue>.status. An event of no known instrument (a mass cancel
// over every instrument) has the symbol "_".
type Subjects struct {
	Prefix, Venue string
	Symbols       map[uint32]string
}

// Subject is the subject of an event. An InstrumentAdded event that listed
// an instrument enters its symbol in Symbols, so the instrument's later
// events get their own subjects: call Subject from one goroutine, in event
// order.
func (s Subjects) Subject(ev []byte) string {
	kind, inst := kindAndInstrument(ev)
	if a, ok := venue.DecodeInstrumentAdded(ev); ok && a.Reason() == venue.RejectReasonNone && s.Symbols != nil {
		s.Symbols[a.InstrumentID()] = string(a.Symbol())
	}
	if kind == KindStatus {
		return s.Prefix + "." + s.Venue + "." + kind
	}
	sym, ok := s.Symbols[inst]
	if !ok {
		sym = "_"
	}
	return s.Prefix + "." + s.Venue + "." + kind + "." + token(sym)
}

// All is the wildcard that covers every subject of the venue.
func (s Subjects) All() string { return s.Prefix + "." + s.Venue + ".>" }

// token makes a symbol usable as a subject token.
func token(sym string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r <= ' ' {
			return '_'
		}
		return r
	}, sym)
}

// jsonEvent is the JSON payload.
type jsonEvent struct {
	EventSeq uint64 `json:"eventSeq"`
	CauseSeq uint64 `json:"causeSeq"`
	Index    uint32 `json:"index"`
	Text     string `json:"text"`
	SBE      string `json:"sbe"`
}

// message builds the NATS message of an event.
func message(subject string, ev Event, f Format) *nats.Msg {
	m := nats.NewMsg(subject)
	seq := strconv.FormatUint(ev.EventSeq, 10)
	m.Header.Set(nats.MsgIdHdr, seq)
	m.Header.Set(HeaderEventSeq, seq)
	m.Header.Set(HeaderCauseSeq, strconv.FormatUint(ev.CauseSeq, 10))
	m.Header.Set(HeaderIndex, strconv.FormatUint(uint64(ev.Index), 10))
	m.Header.Set(HeaderSchema, schemaName(f))
	if f == FormatJSON {
		text, _ := venue.AppendText(nil, ev.Bytes, 0)
		m.Data, _ = json.Marshal(jsonEvent{EventSeq: ev.EventSeq, CauseSeq: ev.CauseSeq, Index: ev.Index,
			Text: string(text), SBE: base64.StdEncoding.EncodeToString(ev.Bytes)})
	} else {
		m.Data = ev.Bytes
	}
	return m
}

// ErrForeign is wrapped by the error for a stream message the venue did not write.
var ErrForeign = errors.New("eventstream: message not written by this venue's exporter")

// Decode reads an exported message: its position and its SBE event bytes,
// whichever format it was written in.
func Decode(h nats.Header, data []byte) (Event, error) {
	var ev Event
	schema := h.Get(HeaderSchema)
	var f Format
	switch schema {
	case schemaName(FormatSBE):
		f = FormatSBE
	case schemaName(FormatJSON):
		f = FormatJSON
	default:
		return ev, fmt.Errorf("%w: schema %q, want %q or %q", ErrForeign, schema, schemaName(FormatSBE), schemaName(FormatJSON))
	}
	var err1, err2, err3 error
	ev.EventSeq, err1 = strconv.ParseUint(h.Get(HeaderEventSeq), 10, 64)
	ev.CauseSeq, err2 = strconv.ParseUint(h.Get(HeaderCauseSeq), 10, 64)
	idx, err3 := strconv.ParseUint(h.Get(HeaderIndex), 10, 32)
	if err := errors.Join(err1, err2, err3); err != nil {
		return ev, fmt.Errorf("%w: headers: %v", ErrForeign, err)
	}
	ev.Index = uint32(idx)
	if f == FormatJSON {
		var j jsonEvent
		if err := json.Unmarshal(data, &j); err != nil {
			return ev, fmt.Errorf("%w: json: %v", ErrForeign, err)
		}
		b, err := base64.StdEncoding.DecodeString(j.SBE)
		if err != nil {
			return ev, fmt.Errorf("%w: json sbe: %v", ErrForeign, err)
		}
		data = b
	}
	if len(data) < venue.MessageHeaderSize || eventLen(data) != len(data) {
		return ev, fmt.Errorf("%w: %d payload bytes are not one event", ErrForeign, len(data))
	}
	ev.Bytes = data
	return ev, nil
}
