package gateway

import (
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// reportsReusedMax bounds the sent ExecutionReport messages one session keeps
// for reuse: as many as outbound builds in one chunk (buildAheadMax), so a
// session's free list covers a chunk of its own reports. Beyond it a sent
// report is left to the collector, and an empty free list means a new
// message: the bound changes allocations, never what is sent.
const reportsReusedMax = buildAheadMax

// msgTypeER is MsgType (35) of an ExecutionReport, shared by every report:
// QuickFIX/Go keeps the value slice and never writes to it.
var msgTypeER = []byte("8")

// A quickfix.Message costs about twenty allocations before its first field
// (three field maps, their locks, and a field per header tag as QuickFIX/Go
// fills the header on send). Once QuickFIX/Go's send has returned it holds
// only the bytes it built, so a session's sender gives its reports back to
// that session's free list and outbound builds the next report in one of
// them (docs/benchmarks.md, "The FIX path against its floor"). A message is
// reused only on the session it was sent on: QuickFIX/Go writes a session's
// header fields on every send, and its FieldMap.Remove cannot take a field
// out cleanly, so header fields never differ between the uses of a message.
// The body is cleared; the drop copy copies the body's bytes (dropCopyOf).

// takeReport returns an ExecutionReport message with MsgType set and an empty
// body, from the session's free list when it has one; a new one is counted
// (fixvenue_execution_reports_new_total: about 25 allocations more than a
// reused one, TestReusedReportAllocations).
func (s *sender) takeReport() *quickfix.Message {
	select {
	case m := <-s.free:
		m.Body.Clear()
		return m
	default:
		s.g.metrics.reportsNew.Inc()
		return newReport()
	}
}

// newReport is a fresh ExecutionReport message with MsgType set.
func newReport() *quickfix.Message {
	m := quickfix.NewMessage()
	m.Header.SetBytes(tag.MsgType, msgTypeER)
	return m
}

// giveBack puts a sent report on the free list, or drops it when full.
func (s *sender) giveBack(m *quickfix.Message) {
	select {
	case s.free <- m:
	default:
	}
}
