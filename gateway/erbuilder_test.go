package gateway

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"

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
	g := &Gateway{metrics: NewMetrics(nil)}
	g.instruments.Store(newInstrumentTable([]Instrument{{ID: id, Symbol: "ACME", Tick: tick}}))
	return g
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
			b.uint(tag.OrderID, 12).bytes(tag.ClOrdID, []byte("c-1")).uint(tag.ExecID, 3).str(tag.ExecType, "0").
				str(tag.OrdStatus, "0").symbol().str(tag.Side, "1").int(tag.OrderQty, 10).price(tag.Price, 10010).
				bytes(tag.Account, nil).int(tag.LeavesQty, 10).str(tag.CumQty, "0").avgPx(0, 0).time(tag.TransactTime, ts)
		}, map[quickfix.Tag]string{tag.OrderID: "12", tag.ClOrdID: "c-1", tag.ExecID: "3", tag.ExecType: "0", tag.OrdStatus: "0",
			tag.Symbol: "ACME", tag.Side: "1", tag.OrderQty: "10", tag.Price: "100.10", tag.LeavesQty: "10", tag.CumQty: "0",
			tag.AvgPx: "0", tag.TransactTime: "20261130-15:04:05.678"}},
		{"fill with a repeated tag", func(b *erBuilder) {
			b.str(tag.Text, "first").int(tag.CumQty, 4).avgPx(40040, 4).price(tag.LastPx, -5).str(tag.Text, "last").
				bytes(tag.Account, []byte("ACC-A"))
		}, map[quickfix.Tag]string{tag.Text: "last", tag.CumQty: "4", tag.AvgPx: "100.100000", tag.LastPx: "-0.05", tag.Account: "ACC-A"}},
		{"one field", func(b *erBuilder) { b.str(tag.ExecType, "I") }, map[quickfix.Tag]string{tag.ExecType: "I"}},
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
		b.uint(tag.OrderID, 123456).bytes(tag.ClOrdID, id).uint(tag.ExecID, 99).str(tag.ExecType, "F").
			symbol().int(tag.OrderQty, 100).price(tag.Price, 10010).price(tag.LastPx, 10010).int(tag.LastQty, 5).
			avgPx(50050, 5).time(tag.TransactTime, 1_796_000_000_123_456_789)
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
		bd.uint(tag.OrderID, uint64(i)).bytes(tag.ClOrdID, id).uint(tag.ExecID, uint64(i)).str(tag.ExecType, "F").
			str(tag.OrdStatus, "1").symbol().str(tag.Side, "1").int(tag.OrderQty, 100).str(tag.OrdType, "2").
			price(tag.Price, 10010).str(tag.TimeInForce, "0").price(tag.LastPx, 10010).int(tag.LastQty, 5).
			int(tag.LeavesQty, 95).int(tag.CumQty, 5).avgPx(50050, 5).uint(tag.SecondaryExecID, 7).
			time(tag.TransactTime, 1_796_000_000_123_456_789)
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
		m.Body.SetString(tag.OrderID, strconv.FormatUint(uint64(i), 10))
		m.Body.SetBytes(tag.ClOrdID, append([]byte(nil), id...))
		m.Body.SetString(tag.ExecID, strconv.FormatUint(uint64(i), 10))
		m.Body.SetString(tag.ExecType, "F")
		m.Body.SetString(tag.OrdStatus, "1")
		m.Body.SetString(tag.Symbol, "ACME")
		m.Body.SetString(tag.Side, "1")
		m.Body.SetString(tag.OrderQty, strconv.FormatInt(100, 10))
		m.Body.SetString(tag.OrdType, "2")
		m.Body.SetString(tag.Price, string(decimal.FormatTicks(buf[:0], 10010, tick)))
		m.Body.SetString(tag.TimeInForce, "0")
		m.Body.SetString(tag.LastPx, string(decimal.FormatTicks(buf[:0], 10010, tick)))
		m.Body.SetString(tag.LastQty, strconv.FormatInt(5, 10))
		m.Body.SetString(tag.LeavesQty, strconv.FormatInt(95, 10))
		m.Body.SetString(tag.CumQty, strconv.FormatInt(5, 10))
		m.Body.SetString(tag.AvgPx, string(decimal.FormatRatio(buf[:0], 50050, 5, tick, 4)))
		m.Body.SetString(tag.SecondaryExecID, "7")
		m.Body.SetString(tag.TransactTime, time.Unix(0, 1_796_000_000_123_456_789).UTC().Format("20060102-15:04:05.000"))
		_ = withHeader(m).String()
	}
}
