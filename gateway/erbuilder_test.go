package gateway

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/core/decimal"
)

// withHeader gives m the header fields QuickFIX/Go adds before it writes a
// message, so that two messages can be compared as they go on the wire.
func withHeader(m *quickfix.Message) *quickfix.Message {
	m.Header.SetString(8, "FIX.4.4")
	m.Header.SetString(49, "VENUE")
	m.Header.SetString(56, "CLIENT1")
	m.Header.SetInt(34, 42)
	m.Header.SetString(52, "20261130-15:04:05.123")
	return m
}

// acmeGateway is a Gateway that knows one instrument, ACME (tick 0.01),
// under the given id: enough for erBuilder.
func acmeGateway(tb testing.TB, id uint32) *Gateway {
	tb.Helper()
	tick, err := decimal.ParseTick("0.01")
	if err != nil {
		tb.Fatal(err)
	}
	return &Gateway{byID: map[uint32]*Instrument{id: {ID: id, Symbol: "ACME", Tick: tick}}}
}

// TestERBuilderWire checks that an ExecutionReport written by erBuilder goes
// on the wire byte for byte as the same report set field by field on a
// quickfix.Message: fields in tag order, a repeated tag written once with its
// last value, an empty byte field left out, BodyLength and CheckSum right.
func TestERBuilderWire(t *testing.T) {
	g := acmeGateway(t, 7)
	ts := time.Date(2026, 11, 30, 15, 4, 5, 678_000_000, time.UTC).UnixNano()

	for _, tc := range []struct {
		name  string
		build func(b *erBuilder)
		want  map[quickfix.Tag]string // set field by field on the reference
	}{
		{"accepted", func(b *erBuilder) {
			b.uint(tagOrderID, 12).bytes(tagClOrdID, []byte("c-1")).uint(tagExecID, 3).str(tagExecType, "0").
				str(tagOrdStatus, "0").symbol().str(tagSide, "1").int(tagOrderQty, 10).price(tagPrice, 10010).
				bytes(tagAccount, nil).int(tagLeavesQty, 10).str(tagCumQty, "0").avgPx(0, 0).time(tagTransactTime, ts)
		}, map[quickfix.Tag]string{tagOrderID: "12", tagClOrdID: "c-1", tagExecID: "3", tagExecType: "0", tagOrdStatus: "0",
			tagSymbol: "ACME", tagSide: "1", tagOrderQty: "10", tagPrice: "100.10", tagLeavesQty: "10", tagCumQty: "0",
			tagAvgPx: "0", tagTransactTime: "20261130-15:04:05.678"}},
		{"fill with a repeated tag", func(b *erBuilder) {
			b.str(tagText, "first").int(tagCumQty, 4).avgPx(40040, 4).price(tagLastPx, -5).str(tagText, "last").
				bytes(tagAccount, []byte("ACC-A"))
		}, map[quickfix.Tag]string{tagText: "last", tagCumQty: "4", tagAvgPx: "100.100000", tagLastPx: "-0.05", tagAccount: "ACC-A"}},
		{"one field", func(b *erBuilder) { b.str(tagExecType, "I") }, map[quickfix.Tag]string{tagExecType: "I"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := g.newER(7)
			tc.build(b)
			got := withHeader(b.message()).String()

			ref := quickfix.NewMessage()
			ref.Header.SetString(35, "8")
			for tag, v := range tc.want {
				ref.Body.SetString(tag, v)
			}
			if want := withHeader(ref).String(); got != want {
				t.Fatalf("wire bytes differ\n got %q\nwant %q", got, want)
			}
			// What went out parses back to the same fields.
			parsed := quickfix.NewMessage()
			if err := quickfix.ParseMessage(parsed, bytes.NewBufferString(got)); err != nil {
				t.Fatalf("parse %q: %v", got, err)
			}
			for tag, v := range tc.want {
				if s, err := parsed.Body.GetString(tag); err != nil || s != v {
					t.Errorf("tag %d = %q (%v), want %q", tag, s, err, v)
				}
			}
		})
	}
}

// TestERBuilderFieldsDoNotAllocate: the builder writes fields into its kept
// buffer; only message() allocates.
func TestERBuilderFieldsDoNotAllocate(t *testing.T) {
	g := acmeGateway(t, 1)
	id := []byte("client-order-000001")
	allocs := testing.AllocsPerRun(1000, func() {
		b := g.newER(1)
		b.uint(tagOrderID, 123456).bytes(tagClOrdID, id).uint(tagExecID, 99).str(tagExecType, "F").
			symbol().int(tagOrderQty, 100).price(tagPrice, 10010).price(tagLastPx, 10010).int(tagLastQty, 5).
			avgPx(50050, 5).time(tagTransactTime, 1_796_000_000_123_456_789)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per report's fields, want 0", allocs)
	}
}

func BenchmarkERBuild(b *testing.B) {
	g := acmeGateway(b, 1)
	id := []byte("client-order-000001")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bd := g.newER(1)
		bd.uint(tagOrderID, uint64(i)).bytes(tagClOrdID, id).uint(tagExecID, uint64(i)).str(tagExecType, "F").
			str(tagOrdStatus, "1").symbol().str(tagSide, "1").int(tagOrderQty, 100).str(tagOrdType, "2").
			price(tagPrice, 10010).str(tagTimeInForce, "0").price(tagLastPx, 10010).int(tagLastQty, 5).
			int(tagLeavesQty, 95).int(tagCumQty, 5).avgPx(50050, 5).uint(tagSecondaryExecID, 7).
			time(tagTransactTime, 1_796_000_000_123_456_789)
		_ = withHeader(bd.message()).String()
	}
}

// BenchmarkERBuildFieldByField is the same report set field by field on a
// quickfix.Message, as outbound built reports before erBuilder.
func BenchmarkERBuildFieldByField(b *testing.B) {
	tick, _ := decimal.ParseTick("0.01")
	id := []byte("client-order-000001")
	var buf [64]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := quickfix.NewMessage()
		m.Header.SetString(35, "8")
		m.Body.SetString(tagOrderID, strconv.FormatUint(uint64(i), 10))
		m.Body.SetBytes(tagClOrdID, append([]byte(nil), id...))
		m.Body.SetString(tagExecID, strconv.FormatUint(uint64(i), 10))
		m.Body.SetString(tagExecType, "F")
		m.Body.SetString(tagOrdStatus, "1")
		m.Body.SetString(tagSymbol, "ACME")
		m.Body.SetString(tagSide, "1")
		m.Body.SetString(tagOrderQty, strconv.FormatInt(100, 10))
		m.Body.SetString(tagOrdType, "2")
		m.Body.SetString(tagPrice, string(decimal.FormatTicks(buf[:0], 10010, tick)))
		m.Body.SetString(tagTimeInForce, "0")
		m.Body.SetString(tagLastPx, string(decimal.FormatTicks(buf[:0], 10010, tick)))
		m.Body.SetString(tagLastQty, strconv.FormatInt(5, 10))
		m.Body.SetString(tagLeavesQty, strconv.FormatInt(95, 10))
		m.Body.SetString(tagCumQty, strconv.FormatInt(5, 10))
		m.Body.SetString(tagAvgPx, string(decimal.FormatRatio(buf[:0], 50050, 5, tick, 4)))
		m.Body.SetString(tagSecondaryExecID, "7")
		m.Body.SetString(tagTransactTime, time.Unix(0, 1_796_000_000_123_456_789).UTC().Format("20060102-15:04:05.000"))
		_ = withHeader(m).String()
	}
}
