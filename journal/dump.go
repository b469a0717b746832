package journal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/fixvenue/fixvenue/sbe/venue"
)

// DumpOptions configures Dump.
type DumpOptions struct {
	FromSeq  uint64         // first record printed
	Progress func(Progress) // progress bar hook; nil for none
	Logger   *slog.Logger   // tail warnings; nil means slog.Default()
}

// Dump prints the records of the journal in dir to out, one line each,
// decoded with the venue codecs:
//
//	journal-00000000000000000000.seg@64 seq=0 NewOrder ts=2026-11-30T10:00:00.000000001Z session=1 ...
//
// A payload that does not decode is printed in hex with the decoding
// error, so that a damaged or foreign record can still be examined. A last
// line starting with "#" sums up. Dump never writes to the journal;
// corruption ends it with the same error Open would give.
func Dump(dir string, out io.Writer, opts DumpOptions) error {
	r, err := NewReader(dir, ReaderOptions{FromSeq: opts.FromSeq, Progress: opts.Progress, Logger: opts.Logger})
	if err != nil {
		return err
	}
	defer r.Close()
	bw := bufio.NewWriterSize(out, 64<<10)
	var records int64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = bw.Flush()
			return err
		}
		fmt.Fprintf(bw, "%s@%d seq=%d ", rec.Segment, rec.Offset, rec.Seq)
		writeCommand(bw, rec.Payload)
		bw.WriteByte('\n')
		records++
	}
	fmt.Fprintf(bw, "# records=%d last_seq=%d segments=%d", records, r.LastSeq(), r.Segments())
	if t := r.Tail(); t != nil {
		fmt.Fprintf(bw, " torn_tail=%s@%d bytes=%d (%s)", t.Segment, t.Offset, t.Bytes, t.Reason)
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeCommand prints one command's fields, or its bytes when it does not
// decode.
func writeCommand(w io.Writer, p []byte) {
	if err := formatCommand(w, p); err != nil {
		fmt.Fprintf(w, "undecodable (%v) len=%d hex=%x", err, len(p), p)
	}
}

func formatCommand(w io.Writer, p []byte) error {
	id, err := venue.TemplateIDOf(p, 0)
	if err != nil {
		return err
	}
	switch id {
	case venue.NewOrderTemplateID:
		var m venue.NewOrder
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "NewOrder ts=%s session=%d side=%s type=%s instrument=%d tif=%s flags=%s stp=%s px=%d qty=%d expire=%d clordid=%q account=%q",
			ts(m.TimestampNs()), m.SessionIdx(), m.Side(), m.OrdType(), m.InstrumentID(), m.TimeInForce(), m.Flags(), m.StpMode(),
			m.PriceTicks(), m.Qty(), m.ExpireTimeNs(), m.ClOrdID(), m.Account())
	case venue.CancelOrderTemplateID:
		var m venue.CancelOrder
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "CancelOrder ts=%s session=%d side=%s instrument=%d order=%d clordid=%q orig=%q",
			ts(m.TimestampNs()), m.SessionIdx(), m.Side(), m.InstrumentID(), m.OrderID(), m.ClOrdID(), m.OrigClOrdID())
	case venue.ReplaceOrderTemplateID:
		var m venue.ReplaceOrder
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "ReplaceOrder ts=%s session=%d side=%s type=%s instrument=%d tif=%s order=%d px=%d qty=%d expire=%d clordid=%q orig=%q account=%q",
			ts(m.TimestampNs()), m.SessionIdx(), m.Side(), m.OrdType(), m.InstrumentID(), m.TimeInForce(), m.OrderID(),
			m.PriceTicks(), m.Qty(), m.ExpireTimeNs(), m.ClOrdID(), m.OrigClOrdID(), m.Account())
	case venue.MassCancelTemplateID:
		var m venue.MassCancel
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "MassCancel ts=%s session=%d filter_session=%d instrument=%d side=%d type=%d clordid=%q account=%q",
			ts(m.TimestampNs()), m.SessionIdx(), m.FilterSessionIdx(), m.InstrumentID(), m.Side(), m.MassCancelRequestType(),
			m.ClOrdID(), m.Account())
	case venue.OrderStatusRequestTemplateID:
		var m venue.OrderStatusRequest
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "OrderStatusRequest ts=%s session=%d side=%s instrument=%d order=%d clordid=%q",
			ts(m.TimestampNs()), m.SessionIdx(), m.Side(), m.InstrumentID(), m.OrderID(), m.ClOrdID())
	case venue.SessionDisconnectedTemplateID:
		var m venue.SessionDisconnected
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "SessionDisconnected ts=%s session=%d cancel_on_disconnect=%s",
			ts(m.TimestampNs()), m.SessionIdx(), m.CancelOnDisconnect())
	case venue.SetTradingStatusTemplateID:
		var m venue.SetTradingStatus
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "SetTradingStatus ts=%s instrument=%d status=%s", ts(m.TimestampNs()), m.InstrumentID(), m.Status())
	case venue.EndOfDayTemplateID:
		var m venue.EndOfDay
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "EndOfDay ts=%s", ts(m.TimestampNs()))
	case venue.SnapshotTemplateID:
		var m venue.Snapshot
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "Snapshot ts=%s snapshot_id=%d", ts(m.TimestampNs()), m.SnapshotID())
	case venue.TickTemplateID:
		var m venue.Tick
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		fmt.Fprintf(w, "Tick ts=%s", ts(m.TimestampNs()))
	case venue.OperatorCommandTemplateID:
		var m venue.OperatorCommand
		if err := m.WrapDecode(p, 0); err != nil {
			return err
		}
		status := "-" // only SetTradingStatus carries one
		if m.Status() != 0 {
			status = m.Status().String()
		}
		fmt.Fprintf(w, "OperatorCommand ts=%s action=%s status=%s session=%d instrument=%d account=%q operator=%q reason=%q",
			ts(m.TimestampNs()), m.Action(), status, m.FilterSessionIdx(), m.InstrumentID(), m.Account(), m.Operator(), m.Reason())
		if m.Action() == venue.OperatorActionTypeSetPriceBand {
			fmt.Fprintf(w, " ref_ticks=%d band_percent=%d", m.RefPriceTicks(), m.BandPercent())
		}
	default:
		return fmt.Errorf("template %d %s is not a command", id, venue.MessageName(id))
	}
	return nil
}

// ts prints Unix nanoseconds as UTC RFC 3339 with nanoseconds.
func ts(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
