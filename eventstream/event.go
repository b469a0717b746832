package eventstream

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// Message headers of every exported message (see doc.go, "Messages").
const (
	// HeaderBatch is the range of event sequences "<first>-<last>" of the
	// batch the message is part of: 1 is the journal's first event, one
	// more for each event after it.
	HeaderBatch = "Fixvenue-Batch"
	// HeaderPart is the message's place in its batch: "<part>/<parts>".
	HeaderPart = "Fixvenue-Part"
	// HeaderCauseSeq is the seq of the journaled command that produced
	// the batch's first event.
	HeaderCauseSeq = "Fixvenue-Cause-Seq"
	// HeaderIndex is the index of the batch's first event among its
	// command's events (from 0).
	HeaderIndex = "Fixvenue-Event-Index"
	// HeaderStreamSeq is the stream sequence the message was published
	// for: a message stored at another sequence means messages before it
	// were removed (a gap).
	HeaderStreamSeq = "Fixvenue-Stream-Seq"
	// HeaderSchema names the payload's schema: "venue/<id>/<version>/<format>/batch".
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

// schemaNames holds schemaName of each format.
var schemaNames = map[Format]string{FormatSBE: schemaName(FormatSBE), FormatJSON: schemaName(FormatJSON)}

// schemaName is the value of HeaderSchema for a format.
func schemaName(f Format) string {
	return fmt.Sprintf("venue/%d/%d/%s/batch", venue.SchemaID, venue.SchemaVersion, f)
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
		return KindTrades, instrumentOf[venue.Fill](ev)
	case venue.TradingStatusChangedTemplateID, venue.InstrumentAddedTemplateID:
		return KindStatus, 0
	}
	if instrument := orderEventInstrument[tid]; instrument != nil {
		return KindOrders, instrument(ev)
	}
	return KindOrders, 0
}

// orderEventInstrument reads the instrument of each event of the orders
// subjects that names one (a mass cancel over every instrument, an
// operator's command of none, names 0): every one that does, so that an
// instrument's stops, refills, auctions and interruptions are on its
// subject with its orders ("_" is for the events of no instrument:
// doc.go).
var orderEventInstrument = map[uint16]func(ev []byte) uint32{
	venue.OrderAcceptedTemplateID:          instrumentOf[venue.OrderAccepted],
	venue.OrderRejectedTemplateID:          instrumentOf[venue.OrderRejected],
	venue.OrderCancelledTemplateID:         instrumentOf[venue.OrderCancelled],
	venue.OrderReplacedTemplateID:          instrumentOf[venue.OrderReplaced],
	venue.CancelRejectedTemplateID:         instrumentOf[venue.CancelRejected],
	venue.OrderStatusTemplateID:            instrumentOf[venue.OrderStatus],
	venue.MassCancelReportTemplateID:       instrumentOf[venue.MassCancelReport],
	venue.OrderTriggeredTemplateID:         instrumentOf[venue.OrderTriggered],
	venue.OrderRefilledTemplateID:          instrumentOf[venue.OrderRefilled],
	venue.AuctionIndicativeTemplateID:      instrumentOf[venue.AuctionIndicative],
	venue.AuctionUncrossedTemplateID:       instrumentOf[venue.AuctionUncrossed],
	venue.VolatilityInterruptionTemplateID: instrumentOf[venue.VolatilityInterruption],
	venue.OperatorResultTemplateID:         instrumentOf[venue.OperatorResult],
	venue.RiskBreachTemplateID:             instrumentOf[venue.RiskBreach],
	venue.RiskControlResultTemplateID:      instrumentOf[venue.RiskControlResult],
}

// instrumentOf decodes an event of type M and returns its instrument, 0
// when it does not decode.
func instrumentOf[M any, P interface {
	*M
	WrapDecode(buf []byte, off int) error
	InstrumentID() uint32
}](ev []byte) uint32 {
	var m M
	if P(&m).WrapDecode(ev, 0) != nil {
		return 0
	}
	return P(&m).InstrumentID()
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
		sym = config.NoInstrumentToken
	}
	return s.Prefix + "." + s.Venue + "." + kind + "." + config.SubjectToken(sym)
}

// All is the wildcard that covers every subject of the venue.
func (s Subjects) All() string { return s.Prefix + "." + s.Venue + ".>" }

// jsonEvent is one event of the JSON payload (a JSON array of them).
type jsonEvent struct {
	EventSeq uint64 `json:"eventSeq"`
	CauseSeq uint64 `json:"causeSeq"`
	Index    uint32 `json:"index"`
	Text     string `json:"text"`
	SBE      string `json:"sbe"`
}

// frameHeader is the bytes before each event of the SBE payload: its
// event sequence (uint64) and its index among its command's events
// (uint32), little-endian.
const frameHeader = 12

// Message is one stream message: one part of a batch, the events of the
// batch that share the message's subject, in order.
type Message struct {
	Subject string
	// StreamSeq is the stream sequence the message was published for.
	StreamSeq uint64
	// First and Last are the batch's first and last event sequences.
	First, Last uint64
	// Start is the position of the batch's first event.
	Start Position
	// Part (from 1) of Parts.
	Part, Parts int
	Events      []Event
}

// BatchEventsMax bounds the events of one batch (and so of one message:
// 256 events are at most 71 KiB in SBE (272-byte event slots), some 250
// KiB in JSON, under NATS's default max_payload of 1 MiB).
const BatchEventsMax = 256

// BatchPartsMax bounds the messages (subjects) of one batch; the exporter
// ends a batch before an event that would need one more.
const BatchPartsMax = 32

// encodeMessage builds the NATS message of a batch's part; m.Events are
// its events, in order.
func encodeMessage(subject string, m *Message, f Format) *nats.Msg {
	msg := nats.NewMsg(subject)
	batch := strconv.FormatUint(m.First, 10) + "-" + strconv.FormatUint(m.Last, 10)
	part := strconv.Itoa(m.Part)
	msg.Header[nats.MsgIdHdr] = []string{msgID(m.First, m.Last, m.Part)}
	msg.Header[HeaderBatch] = []string{batch}
	msg.Header[HeaderPart] = []string{part + "/" + strconv.Itoa(m.Parts)}
	msg.Header[HeaderCauseSeq] = []string{strconv.FormatUint(m.Start.CauseSeq, 10)}
	msg.Header[HeaderIndex] = []string{strconv.FormatUint(uint64(m.Start.Index), 10)}
	msg.Header[HeaderStreamSeq] = []string{strconv.FormatUint(m.StreamSeq, 10)}
	msg.Header[HeaderSchema] = []string{schemaNames[f]}
	msg.Data = appendPayload(nil, m.Events, f)
	return msg
}

// msgID is the Nats-Msg-Id of part of the batch of events first to last.
func msgID(first, last uint64, part int) string {
	return strconv.FormatUint(first, 10) + "-" + strconv.FormatUint(last, 10) + "/" + strconv.Itoa(part)
}

// appendPayload appends the payload of events in format f.
func appendPayload(b []byte, events []Event, f Format) []byte {
	if f == FormatJSON {
		js := make([]jsonEvent, len(events))
		for i, ev := range events {
			text, _ := core.AppendText(nil, ev.Bytes, 0)
			js[i] = jsonEvent{EventSeq: ev.EventSeq, CauseSeq: ev.CauseSeq, Index: ev.Index,
				Text: string(text), SBE: base64.StdEncoding.EncodeToString(ev.Bytes)}
		}
		out, _ := json.Marshal(js)
		return append(b, out...)
	}
	n := len(b)
	for _, ev := range events {
		n += frameHeader + len(ev.Bytes)
	}
	b = slices.Grow(b, n-len(b))
	for _, ev := range events {
		b = binary.LittleEndian.AppendUint64(b, ev.EventSeq)
		b = binary.LittleEndian.AppendUint32(b, ev.Index)
		b = append(b, ev.Bytes...)
	}
	return b
}

// ErrForeign is wrapped by the error for a stream message the venue did not write.
var ErrForeign = errors.New("eventstream: message not written by this venue's exporter")

// DecodeMessage reads an exported message, whichever format it was
// written in: its batch and its events (their Bytes alias data). Events
// must lie in the batch's range, in increasing order, each with its
// command seq in its bytes.
func DecodeMessage(h nats.Header, data []byte) (*Message, error) {
	schema := h.Get(HeaderSchema)
	var f Format
	switch schema {
	case schemaName(FormatSBE):
		f = FormatSBE
	case schemaName(FormatJSON):
		f = FormatJSON
	default:
		return nil, fmt.Errorf("%w: schema %q, want %q or %q", ErrForeign, schema, schemaName(FormatSBE), schemaName(FormatJSON))
	}
	m := &Message{}
	var errs [6]error
	first, last, ok1 := strings.Cut(h.Get(HeaderBatch), "-")
	part, parts, ok2 := strings.Cut(h.Get(HeaderPart), "/")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: headers %s %q, %s %q", ErrForeign, HeaderBatch, h.Get(HeaderBatch), HeaderPart, h.Get(HeaderPart))
	}
	m.First, errs[0] = strconv.ParseUint(first, 10, 64)
	m.Last, errs[1] = strconv.ParseUint(last, 10, 64)
	m.Part, errs[2] = strconv.Atoi(part)
	m.Parts, errs[3] = strconv.Atoi(parts)
	m.Start.CauseSeq, errs[4] = strconv.ParseUint(h.Get(HeaderCauseSeq), 10, 64)
	idx, err := strconv.ParseUint(h.Get(HeaderIndex), 10, 32)
	m.StreamSeq, errs[5] = strconv.ParseUint(h.Get(HeaderStreamSeq), 10, 64)
	if err := errors.Join(append(errs[:], err)...); err != nil {
		return nil, fmt.Errorf("%w: headers: %v", ErrForeign, err)
	}
	m.Start.Index, m.Start.EventSeq = uint32(idx), m.First
	if m.First == 0 || m.Last < m.First || m.Last-m.First >= BatchEventsMax || m.Part < 1 || m.Part > m.Parts || m.Parts > BatchPartsMax {
		return nil, fmt.Errorf("%w: batch %d-%d part %d/%d", ErrForeign, m.First, m.Last, m.Part, m.Parts)
	}
	if f == FormatJSON {
		var js []jsonEvent
		if err := json.Unmarshal(data, &js); err != nil {
			return nil, fmt.Errorf("%w: json: %v", ErrForeign, err)
		}
		for _, j := range js {
			b, err := base64.StdEncoding.DecodeString(j.SBE)
			if err != nil {
				return nil, fmt.Errorf("%w: json sbe: %v", ErrForeign, err)
			}
			if err := m.addEvent(j.EventSeq, j.Index, b); err != nil {
				return nil, err
			}
		}
	} else {
		for len(data) > 0 {
			if len(data) < frameHeader+venue.MessageHeaderSize || frameHeader+eventLen(data[frameHeader:]) > len(data) {
				return nil, fmt.Errorf("%w: %d payload bytes left are not an event", ErrForeign, len(data))
			}
			n := frameHeader + eventLen(data[frameHeader:])
			if err := m.addEvent(binary.LittleEndian.Uint64(data), binary.LittleEndian.Uint32(data[8:]), data[frameHeader:n]); err != nil {
				return nil, err
			}
			data = data[n:]
		}
	}
	if len(m.Events) == 0 {
		return nil, fmt.Errorf("%w: no event", ErrForeign)
	}
	return m, nil
}

// addEvent appends a decoded event after checking its place.
func (m *Message) addEvent(seq uint64, index uint32, b []byte) error {
	if len(b) < venue.MessageHeaderSize+8 || eventLen(b) != len(b) {
		return fmt.Errorf("%w: %d bytes are not one event", ErrForeign, len(b))
	}
	if seq < m.First || seq > m.Last || (len(m.Events) > 0 && seq <= m.Events[len(m.Events)-1].EventSeq) {
		return fmt.Errorf("%w: event %d out of place in batch %d-%d", ErrForeign, seq, m.First, m.Last)
	}
	cause := venue.CauseSeqOf(b)
	m.Events = append(m.Events, Event{Position: Position{EventSeq: seq, CauseSeq: cause, Index: index}, Bytes: b})
	return nil
}
