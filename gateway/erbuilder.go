package gateway

import (
	"bytes"
	"strconv"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

	"github.com/fixvenue/fixvenue/core/decimal"
)

// erFieldsMax bounds the body fields of one ExecutionReport; the largest
// report the venue writes has 26. A builder that reaches the bound panics: it
// is a programming error, not an input the venue can receive.
const erFieldsMax = 40

// erBodyMax is the body buffer kept between reports: the largest report is
// about 400 bytes with 36-byte ClOrdIDs. A longer body grows the buffer once.
const erBodyMax = 1024

// erBuilder writes the body of an ExecutionReport as FIX bytes, field by
// field, straight from an event: values are appended to one reused buffer
// (no string or map per field). message() orders the fields by tag, as a
// quickfix.Message would, keeps the last of a repeated tag, and hands the
// whole body to QuickFIX/Go as one field (see message).
//
// Outbound owns one erBuilder (Gateway.er): newER resets it, so one report
// must be finished with message() before the next is started.
type erBuilder struct {
	inst   *Instrument
	body   []byte
	fields [erFieldsMax]erField
	n      int
}

// erField is one "tag=value<SOH>" of erBuilder.body.
type erField struct {
	tag        quickfix.Tag
	start, end int32
}

// newER starts a report on the outbound goroutine's builder. instID selects
// the tick size for prices and the symbol.
func (g *Gateway) newER(instID uint32) *erBuilder {
	return g.er.reset(g.byID(instID))
}

// reset starts a new report for an instrument (nil: unknown) on b.
func (b *erBuilder) reset(inst *Instrument) *erBuilder {
	b.inst = inst
	if b.body == nil {
		b.body = make([]byte, 0, erBodyMax)
	}
	b.body = b.body[:0]
	b.n = 0
	return b
}

// open appends "tag=" and returns the body; close records the field.
func (b *erBuilder) open(tag quickfix.Tag) []byte {
	if b.n == erFieldsMax {
		panic("gateway: ExecutionReport has more than erFieldsMax fields")
	}
	b.fields[b.n] = erField{tag: tag, start: int32(len(b.body))}
	b.body = strconv.AppendInt(b.body, int64(tag), 10)
	return append(b.body, '=')
}

func (b *erBuilder) close(body []byte) *erBuilder {
	b.body = append(body, 1)
	b.fields[b.n].end = int32(len(b.body))
	b.n++
	return b
}

func (b *erBuilder) str(tag quickfix.Tag, v string) *erBuilder {
	return b.close(append(b.open(tag), v...))
}

// bytes writes v; an empty v writes no field.
func (b *erBuilder) bytes(tag quickfix.Tag, v []byte) *erBuilder {
	if len(v) == 0 {
		return b
	}
	return b.close(append(b.open(tag), v...))
}

func (b *erBuilder) uint(tag quickfix.Tag, v uint64) *erBuilder {
	return b.close(strconv.AppendUint(b.open(tag), v, 10))
}

func (b *erBuilder) int(tag quickfix.Tag, v int64) *erBuilder {
	return b.close(strconv.AppendInt(b.open(tag), v, 10))
}

// price writes ticks as a decimal price of the report's instrument (ticks as
// they are when the instrument is unknown).
func (b *erBuilder) price(tag quickfix.Tag, ticks int64) *erBuilder {
	if b.inst == nil {
		return b.int(tag, ticks)
	}
	return b.close(decimal.FormatTicks(b.open(tag), ticks, b.inst.Tick))
}

// priceText formats a price in ticks as the reports write prices.
func (b *erBuilder) priceText(ticks int64) string {
	if b.inst == nil {
		return strconv.FormatInt(ticks, 10)
	}
	return string(decimal.FormatTicks(nil, ticks, b.inst.Tick))
}

// avgPx writes AvgPx = notional / qty with four more decimals than the tick.
func (b *erBuilder) avgPx(notional, qty int64) *erBuilder {
	if qty == 0 || b.inst == nil {
		return b.str(tag.AvgPx, "0")
	}
	return b.close(decimal.FormatRatio(b.open(tag.AvgPx), notional, qty, b.inst.Tick, 4))
}

// time writes a UTCTimestamp with milliseconds.
func (b *erBuilder) time(tag quickfix.Tag, ns int64) *erBuilder {
	return b.close(time.Unix(0, ns).UTC().AppendFormat(b.open(tag), "20060102-15:04:05.000"))
}

// exec writes ExecType (150) and OrdStatus (39).
func (b *erBuilder) exec(et execType, st ordStatus) *erBuilder {
	return b.str(tag.ExecType, string(et)).str(tag.OrdStatus, string(st))
}

// symbol writes the report's instrument symbol.
func (b *erBuilder) symbol() *erBuilder {
	if b.inst != nil {
		return b.str(tag.Symbol, b.inst.Symbol)
	}
	return b.str(tag.Symbol, "[N/A]")
}

// message finishes the report as a new quickfix.Message of type 8 (into: in
// m, a message from newReport or sender.takeReport).
//
// QuickFIX/Go serialises a field as "tag=" + value + SOH and computes
// BodyLength and CheckSum from those bytes, so the sorted body is handed to it
// as the value of its first field: "37=" + "12<SOH>11=c1<SOH>…<SOH>60=…".
// The bytes on the wire are exactly those a field-by-field message would
// give (TestERBuilderWire checks it against one built field by field), at one
// allocation for the body instead of a map entry, a field slice and two or
// three byte slices per field. The message's Body therefore holds one field:
// nothing reads an outbound report's body before QuickFIX/Go writes it.
func (b *erBuilder) message() *quickfix.Message { return b.into(newReport()) }

func (b *erBuilder) into(m *quickfix.Message) *quickfix.Message {
	// Insertion sort by tag, stable, so that the last of a repeated tag is
	// the one kept below (QuickFIX/Go's Set overwrites too).
	f := b.fields[:b.n]
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].tag < f[j-1].tag; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
	size, kept := 0, 0
	for i := range f {
		if i+1 < len(f) && f[i+1].tag == f[i].tag {
			continue
		}
		f[kept] = f[i]
		kept++
		size += int(f[i].end - f[i].start)
	}
	f = f[:kept]
	if kept == 0 {
		return m
	}
	out := make([]byte, 0, size)
	for _, fd := range f {
		out = append(out, b.body[fd.start:fd.end]...)
	}
	value := bytes.IndexByte(out, '=') + 1 // after the first field's "tag="
	m.Body.SetBytes(f[0].tag, out[value:len(out)-1])
	return m
}
