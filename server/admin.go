package server

import (
	"github.com/fixvenue/fixvenue/cluster"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/ops"
)

// This file wires the control plane (package ops: admin API, trading day)
// into the venue, and gives it the sessions: state from the gateway, the
// edge and the FIX stores; logout and disable through the edge.

// buildOps creates the control plane; the pipeline must exist and not yet run.
func (s *Server) buildOps(resting []core.OrderView) error {
	var sessions []ops.Session
	for i := range s.cfg.Sessions {
		sc := &s.cfg.Sessions[i]
		bound := s.cfg.OpenOrdersMax(sc)
		if sc.IsDropCopy() {
			bound = 0 // it enters no orders
		}
		sessions = append(sessions, ops.Session{Idx: uint16(i), CompID: sc.CompID, DropCopy: sc.IsDropCopy(), OpenOrdersMax: bound})
	}
	oc := ops.Config{Admin: s.cfg.Admin, Schedule: s.cfg.Schedule, Instruments: s.instruments, Sessions: sessions, ExportOn: s.cfg.Export.Enabled,
		DataDir: s.cfg.Venue.DataDir, Pipeline: s.pipe, Matcher: s.matcher, Resting: resting, Sync: s.opts.JournalSync,
		KeepJournal: s.cfg.Cluster.Enabled(),
		Replica:     s.cfg.Cluster.Enabled(),
		Logger:      s.log, Registry: s.registry, Now: s.opts.Now, EndOfDayNs: s.replayedEndOfDayNs,
		EndOfDayStamped: s.endOfDayStamped}
	if r := s.opts.Replica; r != nil && r.Open != nil && r.Resting != nil {
		oc.Standby = r.Resting
	}
	if p := s.replayedSchedule; p != nil {
		// A change the journal holds whose record was not written (a full
		// disk) holds after the restart.
		oc.Phases, oc.Groups = p.Phases(), p.replayedGroups()
	}
	if r := s.opts.Replica; r != nil {
		oc.Listener, oc.LostLeadership, oc.Leader, oc.Phases = r.Admin, cluster.ErrLostLeadership, r.Leader, r.Phases
		oc.ReplicatedEndOfDay = r.EndOfDay
	}
	if s.snaps != nil {
		oc.Snapshots = s.snaps.Stats()
	}
	oc.Listed = s.instrumentListed
	oc.UsableSnapshot = s.usableSnapshot
	oc.Usage = s.usage.load
	oc.Stalled = s.stalled
	oc.RefusedAtStart = s.refusedOnReplay.info()
	if s.sessCtl != nil {
		oc.Recorded = s.sessCtl.disabled.recorded
	}
	oc.TimersDue = s.usage.nextDueNs.Load
	oc.CommandTimeNs = s.usage.commandTimeNs.Load
	o, err := ops.New(oc)
	if err != nil {
		return err
	}
	s.ops = o
	return nil
}

// sessionControl implements ops.SessionControl over the running venue.
type sessionControl struct {
	s        *Server
	disabled *disabledSessions
}

func (s *Server) newSessionControl() (*sessionControl, error) {
	if s.disabled != nil {
		return &sessionControl{s: s, disabled: s.disabled}, nil
	}
	d, err := newDisabledSessions(s.cfg, false)
	if err != nil {
		return nil, err
	}
	return &sessionControl{s: s, disabled: d}, nil
}

// authenticator asks next, then refuses the logons of disabled sessions:
// after the credentials, so that the Logout may say the session is
// disabled to its own client only (an edge.Told), never to anyone naming
// its CompID (gateway/edge/doc.go, "What a connection goes through").
func (sc *sessionControl) authenticator(next edge.Authenticator) edge.Authenticator {
	return edge.AuthenticatorFunc(func(req *edge.LogonRequest) error {
		if err := next.Authenticate(req); err != nil {
			return err
		}
		if sc.disabled.has(req.Key.ClientCompID) {
			return &edge.Told{Text: "Session disabled by the venue's operator"}
		}
		return nil
	})
}

func (sc *sessionControl) SessionState(idx uint16) ops.SessionState {
	s := sc.s
	var st ops.SessionState
	if int(idx) >= len(s.cfg.Sessions) {
		return st
	}
	st.Disabled = sc.disabled.has(s.cfg.Sessions[idx].CompID)
	id, ok := s.gw.SessionID(idx)
	if !ok {
		return st
	}
	st.LoggedOn = s.gw.LoggedOn(idx)
	st.LoggingOut = s.gw.LoggingOut(idx)
	r := s.gw.Rates(idx)
	st.MessagesPerSecond, st.OrdersPerSecond, st.CancelsPerSecond = r.MessagesPerSecond, r.OrdersPerSecond, r.CancelsPerSecond
	st.Rejects, st.ThrottleHits = r.Rejects, r.ThrottleHits
	if s.edge != nil && st.LoggedOn {
		if c, ok := s.edge.Session(edgeKey(id)); ok {
			st.Address = c.RemoteAddr().String()
		}
	}
	if store, ok := s.stores.Lookup(id); ok {
		st.NextSenderSeq, st.NextTargetSeq = store.NextSenderMsgSeqNum(), store.NextTargetMsgSeqNum()
	}
	return st
}

// Logout sends the session a Logout naming the operator and closes its
// connection: QuickFIX/Go ends the session and cancel-on-disconnect applies
// as for any disconnect.
func (sc *sessionControl) Logout(idx uint16) {
	sc.s.gw.LogOut(idx, "logged out by the venue's operator")
}

func (sc *sessionControl) ClOrdIDs(idx uint16, orderIDs []uint64) []string {
	return sc.s.gw.ClOrdIDs(idx, orderIDs)
}

func (sc *sessionControl) SetDisabled(idx uint16, disabled bool) {
	if int(idx) >= len(sc.s.cfg.Sessions) {
		return
	}
	if err := sc.disabled.set(sc.s.cfg.Sessions[idx].CompID, disabled); err != nil {
		sc.s.log.Error("session control", "err", err)
	}
	if disabled {
		sc.s.gw.LogOut(idx, "session disabled by the venue's operator")
	}
}

// AdminAddr is the admin API's address, or "" when it is off.
func (s *Server) AdminAddr() string {
	if s.ops == nil {
		return ""
	}
	return s.ops.Addr()
}

// Ops exposes the control plane (tests).
func (s *Server) Ops() *ops.Ops { return s.ops }

// endOfDayStamped moves the FIX gateway's trading day on as an end of
// day's command is written into the ring (ops.Config.EndOfDayStamped).
func (s *Server) endOfDayStamped(ns int64) {
	if s.gw != nil {
		s.gw.SetDayStart(ns)
	}
}
