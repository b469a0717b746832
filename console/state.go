package console

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// The tape's state, saved beside each snapshot of the journal (in the
// journal's snapshot file format, which adds the CRC) so that a restart
// from that snapshot has the day's trades from before it. Little-endian:
//
//	magic u32 "FVCT" | version u32 (8) | dayNs i64 | instruments u32
//	per instrument, by id:
//	  id u32 | tradesN i64 | chartN i64 | first i64 | high i64 | low i64 |
//	  volume i64 | ref i64 | close i64 | refIsClose u8
//	  kept u32, then kept × (timeNs i64 | priceTicks i64 | qty i64 | side u8), oldest first
//	  points u32, then points × (timeNs i64 | priceTicks i64), oldest first
//	opsN i64 | kept u32, then kept × (seq u64 | timeNs i64 | action u8 |
//	  reason u8 | session u16 | instrument u32 | count u32 | nameLen u8 | name
//	  [action ActionRisk: riskAction u8 | scope u8 | limit u8 | result u8 |
//	  value i64 | accountLen u8 | account | unnoted u8]
//	  [action MassCancel: accountLen u8 | account (its filter) | unnoted u8]
//	  [action CancelOrder: orderID u64 (0: none found)]
//	  [action SetTradingStatus: status u8 | unnoted u8]
//	  [action SetPriceBand: ref i64 | bandPercent i64 | unnoted u8]),
//	  oldest first
//
// An operator command's action is its venue.OperatorActionType, or
// ActionAddInstrument (255) for an AddInstrument, ActionRisk (254) for a
// kill switch or a limit changed.
//
// kept and points never exceed TradesKept, ChartPointsMax and
// OperatorResultsKept, nameLen venue.OperatorNameLength, accountLen
// venue.AccountLength; a state that says otherwise is refused. Version 1,
// without close and refIsClose, is read as a state that saw no close;
// versions 1 and 2 hold no ActionRisk record, version 3 no risk command's
// operator, and versions 1 to 3 no MassCancel's account: those are read as
// unknown (OperatorRecord.Unnoted), which the journal list says, rather
// than as no operator and any account. Versions 1 to 4 hold no unnoted:
// version 4's risk command is unnoted when it names no operator, and its
// MassCancel's account is taken as it is. An instrument of the state that
// is not configured any more is skipped; a configured one the state lacks
// starts empty. Versions 1 to 5 hold no CancelOrder (it did not exist),
// versions 1 to 6 no SetTradingStatus's status, versions 1 to 7 no
// SetPriceBand's reference price and band: read as unknown.

const (
	stateMagic   = 0x54435646 // "FVCT"
	stateVersion = 8
	// stateInstrumentsMax bounds the instruments a state may list (the
	// instrument IDs are uint32; a venue configures far fewer).
	stateInstrumentsMax = 1 << 20
)

// WriteState writes the tape's state, as saved beside a snapshot (a
// cluster's Raft snapshot carries it too).
func (t *Tape) WriteState(w io.Writer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.writeState(w)
}

// writeState writes the state (t.mu held).
func (t *Tape) writeState(w io.Writer) error {
	b := make([]byte, 0, 4096)
	b = binary.LittleEndian.AppendUint32(b, stateMagic)
	b = binary.LittleEndian.AppendUint32(b, stateVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.dayNs))
	ids := make([]uint32, 0, len(t.byID))
	for id := range t.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		in := t.byID[id]
		b = binary.LittleEndian.AppendUint32(b, id)
		for _, v := range []int64{in.tradesN, in.chartN, in.firstTicks, in.highTicks, in.lowTicks, in.volume, in.refTicks, in.closeTicks} {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		b = append(b, boolByte(in.refIsClose))
		b = appendKept(b, in.trades[:], in.tradesN, func(b []byte, tr Trade) []byte {
			b = binary.LittleEndian.AppendUint64(b, uint64(tr.TimeNs))
			b = binary.LittleEndian.AppendUint64(b, uint64(tr.PriceTicks))
			b = binary.LittleEndian.AppendUint64(b, uint64(tr.Qty))
			return append(b, byte(tr.Aggressor))
		})
		b = appendKept(b, in.chart, in.chartN, func(b []byte, p chartPoint) []byte {
			b = binary.LittleEndian.AppendUint64(b, uint64(p.timeNs))
			return binary.LittleEndian.AppendUint64(b, uint64(p.priceTicks))
		})
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(t.opsN))
	b = appendKept(b, t.ops[:], t.opsN, func(b []byte, r OperatorRecord) []byte {
		b = binary.LittleEndian.AppendUint64(b, r.Seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(r.TimeNs))
		b = append(b, byte(r.Action), byte(r.Reason))
		b = binary.LittleEndian.AppendUint16(b, r.Session)
		b = binary.LittleEndian.AppendUint32(b, r.Instrument)
		b = binary.LittleEndian.AppendUint32(b, r.Count)
		name := r.Operator[:min(len(r.Operator), venue.OperatorNameLength)]
		b = append(b, byte(len(name)))
		b = append(b, name...)
		if r.Action == ActionRisk {
			b = append(b, byte(r.Risk.Action), byte(r.Risk.Scope), byte(r.Risk.Limit), byte(r.Risk.Result))
			b = binary.LittleEndian.AppendUint64(b, uint64(r.Risk.Value))
			account := r.Risk.Account[:min(len(r.Risk.Account), venue.AccountLength)]
			b = append(b, byte(len(account)))
			b = append(b, account...)
			b = append(b, boolByte(r.Unnoted))
		}
		if r.Action == venue.OperatorActionTypeMassCancel {
			account := r.Account[:min(len(r.Account), venue.AccountLength)]
			b = append(b, byte(len(account)))
			b = append(b, account...)
			b = append(b, boolByte(r.Unnoted))
		}
		if r.Action == venue.OperatorActionTypeCancelOrder {
			b = binary.LittleEndian.AppendUint64(b, r.OrderID)
		}
		if r.Action == venue.OperatorActionTypeSetTradingStatus {
			b = append(b, byte(r.Status), boolByte(r.Unnoted))
		}
		if r.Action == venue.OperatorActionTypeSetPriceBand {
			b = binary.LittleEndian.AppendUint64(b, uint64(r.RefTicks))
			b = binary.LittleEndian.AppendUint64(b, uint64(r.BandPercent))
			b = append(b, boolByte(r.Unnoted))
		}
		return b
	})
	_, err := w.Write(b)
	return err
}

// appendKept appends what a ring that has taken n entries still holds: the
// count (uint32) of its last min(n, len(ring)) entries, then each of them,
// oldest first, as appendOne writes it.
func appendKept[T any](b []byte, ring []T, n int64, appendOne func([]byte, T) []byte) []byte {
	size := int64(len(ring))
	kept := min(n, size)
	b = binary.LittleEndian.AppendUint32(b, uint32(kept))
	for i := n - kept; i < n; i++ {
		b = appendOne(b, ring[i%size])
	}
	return b
}

// readKept reads what appendKept wrote back into a ring that has taken n
// entries, each as readOne reads it; what names the entries in errors.
func readKept[T any](s *stateReader, what string, ring []T, n int64, readOne func() T) {
	size := int64(len(ring))
	kept := s.count(what, size)
	if s.err == nil && (n < kept || n < 0) {
		s.err = fmt.Errorf("console state: %d %s kept of %d", kept, what, n)
	}
	for i := n - kept; i < n && s.err == nil; i++ {
		ring[i%size] = readOne()
	}
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// stateReader reads the state's fields; the first error sticks.
type stateReader struct {
	version uint32
	r       *bufio.Reader
	buf     [8]byte
	err     error
}

func (s *stateReader) read(n int) []byte {
	if s.err != nil {
		return s.buf[:n]
	}
	if _, err := io.ReadFull(s.r, s.buf[:n]); err != nil {
		s.err = fmt.Errorf("console state: truncated: %w", err)
	}
	return s.buf[:n]
}

// name reads a name of what of the given length, refused beyond limit
// bytes (an operator's, venue.OperatorNameLength; an account,
// venue.AccountLength).
func (s *stateReader) name(what string, limit int) string {
	var b [max(venue.OperatorNameLength, venue.AccountLength)]byte
	n := int(s.u8())
	if s.err == nil && n > limit {
		s.err = fmt.Errorf("console state: %s of %d bytes", what, n)
	}
	if s.err != nil {
		return ""
	}
	if _, err := io.ReadFull(s.r, b[:n]); err != nil {
		s.err = fmt.Errorf("console state: truncated: %w", err)
	}
	return string(b[:n])
}

// flag reads a bool of what, refused unless 0 or 1.
func (s *stateReader) flag(what string) bool {
	b := s.u8()
	if b > 1 && s.err == nil {
		s.err = fmt.Errorf("console state: %s %d", what, b)
	}
	return b == 1
}

func (s *stateReader) u8() uint8   { return s.read(1)[0] }
func (s *stateReader) u16() uint16 { return binary.LittleEndian.Uint16(s.read(2)) }
func (s *stateReader) u32() uint32 { return binary.LittleEndian.Uint32(s.read(4)) }
func (s *stateReader) u64() uint64 { return binary.LittleEndian.Uint64(s.read(8)) }
func (s *stateReader) i64() int64  { return int64(s.u64()) }

// count reads a list's length and refuses one beyond limit.
func (s *stateReader) count(what string, limit int64) int64 {
	n := int64(s.u32())
	if s.err == nil && n > limit {
		s.err = fmt.Errorf("console state: %d %s, more than the %d kept", n, what, limit)
	}
	return n
}

// Restore loads a state written by the tape into a tape that has recorded
// nothing yet, before Replay and Run.
func (t *Tape) Restore(r io.Reader) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.events != 0 {
		return errors.New("console: Restore into a tape that has recorded events")
	}
	s := &stateReader{r: bufio.NewReader(r)}
	magic, version := s.u32(), s.u32()
	if s.err == nil && (magic != stateMagic || version < 1 || version > stateVersion) {
		return fmt.Errorf("console state: magic %#x version %d, want %#x version 1 to %d", magic, version, stateMagic, stateVersion)
	}
	s.version = version
	t.dayNs = s.i64()
	n := s.count("instruments", stateInstrumentsMax)
	for i := int64(0); i < n && s.err == nil; i++ {
		id := s.u32()
		in := t.byID[id]
		if in == nil {
			// An instrument the tape was not made with: one the admin API
			// added (README "Adding an instrument"), whose InstrumentAdded
			// is before the snapshot and so never replayed. Kept, or its
			// day, and every trade after the start, would be lost to the
			// pages and GET /v1/instruments.
			in = &instrumentTape{chart: make([]chartPoint, ChartPointsMax)}
			t.byID[id] = in
		}
		s.instrument(in)
	}
	t.opsN = s.i64()
	readKept(s, "operator commands", t.ops[:], t.opsN, func() OperatorRecord {
		rec := OperatorRecord{Seq: s.u64(), TimeNs: s.i64(), Action: venue.OperatorActionType(s.u8()), Reason: venue.RejectReason(s.u8()),
			Session: s.u16(), Instrument: s.u32(), Count: s.u32()}
		rec.Operator = s.name("operator name", venue.OperatorNameLength)
		if rec.Action == ActionRisk && s.version >= 3 {
			rec.Risk = RiskRecord{Action: venue.RiskAction(s.u8()), Scope: venue.RiskScope(s.u8()), Limit: venue.RiskLimit(s.u8()),
				Result: venue.RiskResult(s.u8()), Value: s.i64()}
			rec.Risk.Account = s.name("account", venue.AccountLength)
			rec.Unnoted = rec.Operator == "" // version 3 kept none; version 4 none it had no note of
			if s.version >= 5 {
				rec.Unnoted = s.flag("unnoted")
			}
		}
		if rec.Action == venue.OperatorActionTypeMassCancel {
			rec.Unnoted = s.version < 4 // their account was not kept
			if s.version >= 4 {
				rec.Account = s.name("account", venue.AccountLength)
			}
			if s.version >= 5 {
				rec.Unnoted = s.flag("unnoted")
			}
		}
		if rec.Action == venue.OperatorActionTypeCancelOrder && s.version >= 6 {
			rec.OrderID = s.u64()
		}
		if rec.Action == venue.OperatorActionTypeSetTradingStatus {
			rec.Unnoted = s.version < 7 // its status was not kept
			if s.version >= 7 {
				rec.Status = venue.TradingStatus(s.u8())
				rec.Unnoted = s.flag("unnoted")
			}
		}
		if rec.Action == venue.OperatorActionTypeSetPriceBand {
			rec.Unnoted = s.version < 8 // its band was not kept
			if s.version >= 8 {
				rec.RefTicks, rec.BandPercent = s.i64(), s.i64()
				rec.Unnoted = s.flag("unnoted")
			}
		}
		return rec
	})
	if _, err := s.r.ReadByte(); s.err == nil && err != io.EOF {
		s.err = errors.New("console state: bytes after the end")
	}
	return s.err
}

// instrument reads one instrument's part of the state into in.
func (s *stateReader) instrument(in *instrumentTape) {
	in.tradesN, in.chartN = s.i64(), s.i64()
	in.firstTicks, in.highTicks, in.lowTicks, in.volume, in.refTicks = s.i64(), s.i64(), s.i64(), s.i64(), s.i64()
	if s.version >= 2 {
		in.closeTicks = s.i64()
		in.refIsClose = s.flag("refIsClose")
	}
	readKept(s, "trades", in.trades[:], in.tradesN, func() Trade {
		return Trade{TimeNs: s.i64(), PriceTicks: s.i64(), Qty: s.i64(), Aggressor: venue.Side(s.u8())}
	})
	readKept(s, "chart points", in.chart, in.chartN, func() chartPoint {
		return chartPoint{timeNs: s.i64(), priceTicks: s.i64()}
	})
}
