package server

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/gateway/fixstore"
)

// Answers lost at a crash (docs/ARCHITECTURE.md, "Answers lost at a
// crash"): at start, each session's FIX store says which of the matcher's
// ExecutionReports (a drop-copy session's: copies of them) it holds; the
// replay keeps the events of those some store lacks, and Start hands them
// to the sessions lacking them before accepting any connection (not after a
// replay without the terms record: keepLostReports).

// lostReportsMax bounds the events kept: the answers a crash can lose are
// those in the rings and the senders' queues. Beyond it the rest are
// logged as not rebuilt.
const lostReportsMax = 1 << 18

// missingStoresShown bounds the sessions the start names in its warning
// of the missing FIX stores of sessions that ran before.
const missingStoresShown = 32

// redeliverWithin bounds the wait for the redelivered reports to be stored.
const redeliverWithin = 30 * time.Second

// lostReportsCollector reads every session's store and returns what keeps
// the events of the reports (or copies) they lack, and the store holding
// the highest ExecID with that ExecID (storeAhead).
func (s *Server) lostReportsCollector() (*gateway.LostReports, storeMark, error) {
	marks, highest, err := readStoreMarks(s.cfg)
	if err != nil {
		return nil, highest, err
	}
	return gateway.NewLostReports(marks, lostReportsMax, s.matcher), highest, nil
}

// readStoreMarks reads the last report each configured session's FIX store
// holds, and which store holds the highest ExecID.
func readStoreMarks(cfg *config.Config) ([]gateway.ReportMark, storeMark, error) {
	dir := filepath.Join(cfg.Venue.DataDir, "fixstore")
	marks := make([]gateway.ReportMark, len(cfg.Sessions))
	var highest storeMark
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		r, err := fixstore.ReadLastReport(dir, sessionID(cfg, sc))
		if err != nil {
			return nil, highest, err
		}
		marks[i] = gateway.ReportMark{Rebuild: r.Exists, ExecID: r.ExecID, ResetNs: r.ResetNs, DropCopy: sc.IsDropCopy()}
		if r.ExecID > highest.execID {
			highest = storeMark{session: sc.CompID, execID: r.ExecID}
		}
	}
	return marks, highest, nil
}

// storeMark is the highest matcher ExecID a session's FIX store holds.
type storeMark struct {
	session string
	execID  uint64
}

// storeAhead refuses a start whose replayed journal ends before a report
// some session's FIX store holds: the journal lost its tail (a segment
// deleted or a partial restore after the last snapshot and start), and
// the venue would start without orders its clients were told of and issue
// their ExecIDs again (docs/ARCHITECTURE.md, "Answers lost at a crash").
//
// A start without the terms record whose replay refused recorded orders
// (refused) names that as the cause instead: an order the configured terms
// refuse that had later executions when it was recorded (a fill, a cancel,
// a replace) leaves fewer reports on replay than its clients were given,
// and its owner's store is then ahead of a journal that lost nothing
// (README, "Changing configured terms").
func (s *Server) storeAhead(highest storeMark, refused *refusedOnReplay, record string) error {
	if highest.execID > s.matcher.LastExecID() && refused != nil && refused.total > 0 {
		return refusedAhead(s.cfg, highest, s.matcher.LastExecID(), refused, record)
	}
	return storeAheadOf(s.cfg, highest, s.matcher.LastExecID())
}

// refusedAheadListed is how many refused orders the refusal names.
const refusedAheadListed = 3

// refusedAhead is storeAhead's refusal of a start whose configured terms
// refused recorded orders on a replay that ends below the ExecID a store
// holds: the replay cannot give what the clients were told, and the venue
// would issue again the ExecIDs (and OrderIDs) they hold. The journal is
// right; the terms are not the ones it was written under.
func refusedAhead(cfg *config.Config, highest storeMark, last uint64, refused *refusedOnReplay, record string) error {
	first := make([]string, 0, refusedAheadListed)
	for _, o := range refused.listed[:min(len(refused.listed), refusedAheadListed)] {
		first = append(first, o.String())
	}
	return fmt.Errorf("replay: the configured terms refused recorded orders on this replay without %s (%d; first: %s), and the "+
		"replay ends at ExecID %d while session %s's FIX store holds ExecID %d: an order these terms refuse that had later "+
		"executions when it was recorded (a fill, a cancel, a replace) has none on replay, so the replay cannot give what its "+
		"clients were told, and starting would issue ExecIDs and OrderIDs its clients hold for other executions. "+
		"To keep the journal, restore the configuration the journal was written under and put %s back; to trade under "+
		"the configured terms, start afresh: move the journal and %s aside (resting orders are gone, clients log on with 141=Y). "+
		"A journal that lost its tail gives the same figures: `fixvenue journal verify` under the recorded terms checks it",
		record, refused.total, strings.Join(first, "; "), last, highest.session, highest.execID, record,
		filepath.Join(cfg.Venue.DataDir, "fixstore"))
}

func storeAheadOf(cfg *config.Config, highest storeMark, last uint64) error {
	if highest.execID <= last {
		return nil
	}
	return fmt.Errorf("replay: the journal in %s ends at ExecID %d, but session %s's FIX store holds ExecID %d: "+
		"commands its clients were answered are missing from the journal (a segment lost, a partial restore). "+
		"Restore the journal; starting without them would lose acknowledged orders and issue their ExecIDs again "+
		"(a venue started afresh on an empty journal needs empty FIX stores too: move %s aside)",
		filepath.Join(cfg.Venue.DataDir, "journal"), last, highest.session, highest.execID, filepath.Join(cfg.Venue.DataDir, "fixstore"))
}

// FIXStoresMark is the highest matcher ExecID the sessions' FIX stores of
// a single venue hold, for `fixvenue journal verify`'s version of the
// start's check (storeAhead).
type FIXStoresMark struct {
	cfg     *config.Config
	highest storeMark
	err     error // a store that could not be read, reported by Check
}

// ReadFIXStoresMark reads the sessions' FIX stores (a store it cannot read
// is Check's answer: only a single venue's journal is checked). The tools
// call it before they read the journal: a running venue stores a report
// only once its command is durable, so every report read here is of a
// command the replay that follows finds, while stores read after the
// replay would hold the answers of commands journaled since, and a venue
// answering orders beside the tool would be taken for a journal behind its
// stores (docs/ARCHITECTURE.md, "Start-up and shutdown").
func ReadFIXStoresMark(cfg *config.Config) FIXStoresMark {
	_, highest, err := readStoreMarks(cfg)
	return FIXStoresMark{cfg: cfg, highest: highest, err: err}
}

// Check is the start's check of a single venue's journal against its
// sessions' FIX stores: lastExecID is the ExecID the whole journal's replay
// ends at, and a store that held a higher one is refused as a start
// refuses it.
func (m FIXStoresMark) Check(lastExecID uint64) error {
	if m.err != nil {
		return m.err
	}
	return storeAheadOf(m.cfg, m.highest, lastExecID)
}

// keepLostReports keeps what the replay found for Start, and warns of a
// session whose store is gone though the replay met reports for it, or
// though it is among the first ran sessions, which ran on this journal at
// an earlier start (each start creates every configured session's store):
// a snapshot that holds every report of the session left the first
// silent, and the session started again at sequence number 1 without a
// word.
//
// A replay without the terms record (unrecorded: the record's path) keeps
// nothing: it ran under the configured terms, not those the stores'
// reports were given under, and its events past a store's mark can be of
// another history (an order refused when it was entered taken by a wider
// band, and filled), whose reports would tell a client of executions it
// never had. The start warns, counting them by session (README, "Changing
// configured terms").
func (s *Server) keepLostReports(lost *gateway.LostReports, ran int, unrecorded string) {
	noStore := lost.NoStore()
	var others []string // ran, storeless, and no report replayed: one line for them all
	for i := range s.cfg.Sessions {
		n := 0
		if i < len(noStore) {
			n = noStore[i]
		}
		if gone := n > 0 || (i < ran && lost.Storeless(i)); gone {
			if s.storesLost == nil {
				s.storesLost = map[string]bool{}
			}
			s.storesLost[s.cfg.Sessions[i].CompID] = true
		}
		switch {
		case n > 0:
			s.log.Warn("a session's FIX store is missing though the journal holds reports for it: its sequence numbers start "+
				"again at 1 and those reports cannot be resent; restore the store, or have its client log on with 141=Y",
				"session", s.cfg.Sessions[i].CompID, "reports_since_the_snapshot", n,
				"store_dir", filepath.Join(s.cfg.Venue.DataDir, "fixstore"))
		case i < ran && lost.Storeless(i):
			others = append(others, s.cfg.Sessions[i].CompID)
		}
	}
	if len(others) > 0 {
		shown := others[:min(len(others), missingStoresShown)]
		if len(others) > len(shown) {
			shown = append(shown[:len(shown):len(shown)], fmt.Sprintf("and %d more", len(others)-len(shown)))
		}
		s.log.Warn("a session's FIX store is missing though the session ran on this journal before (the store, or its "+
			"directory, removed or not mounted): its sequence numbers start again at 1 and its messages cannot be resent; "+
			"restore the store, or have its client log on with 141=Y",
			"sessions", strings.Join(shown, ","), "count", len(others), "store_dir", filepath.Join(s.cfg.Venue.DataDir, "fixstore"))
	}
	events, dropped := lost.Events()
	if unrecorded != "" {
		s.notRebuilt(lost, unrecorded)
		return
	}
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
	// The replay keeps every report some store might lack (a drop copy's
	// grants are not known there); only one that a store did lack was lost.
	if reports+copies > 0 {
		s.log.Warn("answers lost at the last stop rebuilt from the journal and stored; clients get them by resend",
			"reports", reports, "drop_copies", copies)
	}
	s.lostReports.Free()
	s.lostReports = nil
}

// notRebuilt is keepLostReports' warning of the reports a replay without
// the terms record holds past the sessions' stores, none of them sent: they
// may be answers lost at the last stop, or of executions that happen only
// under the configured terms, and the replay cannot tell which.
func (s *Server) notRebuilt(lost *gateway.LostReports, record string) {
	events, dropped := lost.Events()
	defer lost.Free()
	var by []string
	total := 0
	for i, n := range lost.Lacking() {
		if n > 0 && i < len(s.cfg.Sessions) {
			by = append(by, fmt.Sprintf("%s=%d", s.cfg.Sessions[i].CompID, n))
			total += n
		}
	}
	if total == 0 && dropped == 0 {
		return
	}
	if len(by) > missingStoresShown {
		by = append(by[:missingStoresShown:missingStoresShown], fmt.Sprintf("and %d more", len(by)-missingStoresShown))
	}
	s.log.Warn("answers not rebuilt: the start replayed the journal without "+record+", under the configured terms, and its "+
		"reports past what the sessions' FIX stores hold are not sent: they may be of executions only these terms give "+
		"(an order refused when it was entered taken and filled), not answers the clients lacked. Answers lost at the last "+
		"stop are not sent either: clients learn their orders' state with an OrderStatusRequest or OrderMassStatusRequest",
		"reports_by_session", strings.Join(by, ","), "reports", total, "events_past_the_stores", len(events)+dropped)
}
