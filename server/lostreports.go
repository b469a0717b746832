package server

import (
	"path/filepath"
	"time"

	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/fixstore"
)

// Answers lost at a crash (docs/ARCHITECTURE.md, "Answers lost at a
// crash"): at start, each session's FIX store says which of the matcher's
// ExecutionReports (a drop-copy session's: copies of them) it holds; the
// replay keeps the events of those some store lacks, and Start hands them
// to the sessions lacking them before accepting any connection.

// lostReportsMax bounds the events kept: the answers a crash can lose are
// those in the rings and the senders' queues. Beyond it the rest are
// logged as not rebuilt.
const lostReportsMax = 1 << 18

// redeliverWithin bounds the wait for the redelivered reports to be stored.
const redeliverWithin = 30 * time.Second

// lostReportsCollector reads every session's store and returns what keeps
// the events of the reports (or copies) they lack.
func (s *Server) lostReportsCollector() (*gateway.LostReports, error) {
	dir := filepath.Join(s.cfg.Venue.DataDir, "fixstore")
	marks := make([]gateway.ReportMark, len(s.cfg.Sessions))
	for i := range s.cfg.Sessions {
		sc := &s.cfg.Sessions[i]
		r, err := fixstore.ReadLastReport(dir, sessionID(s.cfg, sc))
		if err != nil {
			return nil, err
		}
		marks[i] = gateway.ReportMark{Rebuild: r.Exists, ExecID: r.ExecID, ResetNs: r.ResetNs, DropCopy: sc.IsDropCopy()}
	}
	return gateway.NewLostReports(marks, lostReportsMax), nil
}

// keepLostReports keeps what the replay found for Start.
func (s *Server) keepLostReports(lost *gateway.LostReports) {
	events, dropped := lost.Events()
	if dropped > 0 {
		s.log.Error("answers lost at the last stop: more than can be rebuilt; the rest are not sent again",
			"rebuilt", len(events), "not_rebuilt", dropped)
	}
	if len(events) > 0 {
		s.lostReports = lost
	}
}

// redeliverLostReports hands the lost reports to their sessions (the
// gateway's senders run, no session is logged on yet) and waits until they
// are stored.
func (s *Server) redeliverLostReports() {
	if s.lostReports == nil {
		return
	}
	reports, copies := s.gw.Redeliver(s.lostReports, redeliverWithin)
	s.log.Warn("answers lost at the last stop rebuilt from the journal and stored; clients get them by resend",
		"reports", reports, "drop_copies", copies)
	s.lostReports.Free()
	s.lostReports = nil
}
