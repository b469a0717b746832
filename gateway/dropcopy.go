package gateway

import (
	"bytes"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// Drop copy (README.md, "Drop copy"). A drop-copy session enters nothing:
// every application message it sends is refused with a
// BusinessMessageReject (380=6, not authorized). It receives a copy of each
// ExecutionReport sent to the sessions it is granted (by session, by the
// report's Account, or all), in the order the venue hands them to those
// sessions, because the copy is made where the original enters its
// session's queue (just before it; building the copies costs the original
// a few microseconds per drop-copy session granted): ExecutionReports built from events are handed over in event order,
// gateway rejects as they are decided.
//
// The copy is the original's body plus CopyMsgIndicator (797=Y), and names
// the session the original went to in DeliverToCompID (128), the header
// field FIX 4.4 defines for "the firm targeted to receive the message"
// when a third party delivers it: both fields are in FIX44.xml (128 in the
// standard header, 797 in ExecutionReport), so a client that validates
// against the data dictionary accepts the copies. The copies go through
// the drop-copy session's own sender and FIX store like any message: an
// offline drop-copy session gets what it missed by the ordinary
// ResendRequest after its next Logon, back to the store's bound (the last
// fixstore.DefaultMessagesMax messages).

// DropCopyGrant is what a drop-copy session receives.
type DropCopyGrant struct {
	All      bool
	Sessions []string // client CompIDs (TargetCompID of the original session)
	Accounts []string
}

// copyRoute is an order session's drop-copy routing.
type copyRoute struct {
	g *Gateway
	// bySession are the drop-copy sessions granted this session (or all).
	bySession []*session
	// client is the original session's client CompID, named in the copies.
	client string
	// s is the original session.
	s *session
}

// wireDropCopy installs the copy hook on every order session that some
// drop-copy session is granted, by session or by account.
func (g *Gateway) wireDropCopy() {
	var dropCopies []*session
	for _, s := range g.sessions {
		if s.cfg.DropCopy != nil {
			dropCopies = append(dropCopies, s)
			for _, a := range s.cfg.DropCopy.Accounts {
				if g.copyAccounts == nil {
					g.copyAccounts = map[string][]*session{}
				}
				g.copyAccounts[a] = append(g.copyAccounts[a], s)
			}
		}
	}
	if len(dropCopies) == 0 {
		return
	}
	for _, s := range g.sessions {
		if s.cfg.DropCopy != nil {
			continue
		}
		r := &copyRoute{g: g, client: s.cfg.ID.TargetCompID, s: s}
		for _, dc := range dropCopies {
			if dc.cfg.DropCopy.All || contains(dc.cfg.DropCopy.Sessions, r.client) {
				r.bySession = append(r.bySession, dc)
			}
		}
		if len(r.bySession) > 0 || g.copyAccounts != nil {
			s.out.copy = r.copy
			s.route = r
		}
	}
}

// copiedByAccount reports whether grant copies a report of session orig
// naming account by its account: only one orig may name (accounts.go).
func (g *Gateway) copiedByAccount(orig *session, grant *DropCopyGrant, account []byte) bool {
	return contains(grant.Accounts, string(account)) && g.accountRefused(orig, account) == nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// copy runs just before an order session's message enters its queue (once
// queued, QuickFIX/Go may be writing its header): an ExecutionReport is copied to each drop-copy session granted its session
// or its Account, once per drop-copy session.
func (r *copyRoute) copy(m *quickfix.Message) { r.copyTo(m, nil) }

// copyTo is copy to the drop-copy sessions want accepts (nil: all).
func (r *copyRoute) copyTo(m *quickfix.Message, want func(dc *session) bool) {
	if t, err := m.Header.GetBytes(tag.MsgType); err != nil || string(t) != "8" {
		return
	}
	var byAccount []*session
	if r.g.copyAccounts != nil {
		// Only by an account the session may name: a report of an order
		// refused for naming another session's account carries it too.
		if a := accountOf(m); r.g.accountRefused(r.s, a) == nil {
			byAccount = r.g.copyAccounts[string(a)]
		}
	}
	if len(r.bySession) == 0 && len(byAccount) == 0 {
		return
	}
	for _, dc := range r.bySession {
		if want == nil || want(dc) {
			dc.out.enqueue(dropCopyOf(m, r.client))
			r.g.metrics.dropCopies.Inc()
		}
	}
	for _, dc := range byAccount {
		if !containsSession(r.bySession, dc) && (want == nil || want(dc)) {
			dc.out.enqueue(dropCopyOf(m, r.client))
			r.g.metrics.dropCopies.Inc()
		}
	}
}

// accountOf returns a report's Account (1). Account is the lowest tag of a
// report, so the body the erBuilder hands QuickFIX/Go as one field (see
// erBuilder.message) is that field when an account is set, its value
// running on to the other fields after the first SOH.
func accountOf(m *quickfix.Message) []byte {
	v, err := m.Body.GetBytes(tag.Account)
	if err != nil {
		return nil
	}
	if i := bytes.IndexByte(v, 1); i >= 0 {
		v = v[:i]
	}
	return v
}

func containsSession(list []*session, s *session) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dropCopyOf returns a copy of report m for one drop-copy session (each
// gets its own: QuickFIX/Go writes the session's fields into the header as
// it sends).
func dropCopyOf(m *quickfix.Message, client string) *quickfix.Message {
	c := quickfix.NewMessage()
	c.Header.SetString(tag.MsgType, "8")
	c.Header.SetString(tag.DeliverToCompID, client)
	for _, tag := range m.Body.Tags() {
		if v, err := m.Body.GetBytes(tag); err == nil {
			c.Body.SetBytes(tag, append([]byte(nil), v...))
		}
	}
	c.Body.SetString(tag.CopyMsgIndicator, string(fixYes))
	return c
}

// dropCopyRequest answers an application message from a drop-copy session
// other than a TradeCaptureReportRequest (dropcopyreplay.go): a drop-copy
// session may not enter orders nor ask for anything else, so every such
// message is refused with a BusinessMessageReject (380=6).
func (g *Gateway) dropCopyRequest(_ *session, m *quickfix.Message) quickfix.MessageRejectError {
	g.metrics.dropCopyRefused.Inc()
	return businessReject(businessRejNotAuthorized, businessRejectRefID(m), "drop-copy session: not authorized to send application messages")
}

// dropCopyMetrics count the copies and the refused requests.
type dropCopyMetrics struct {
	dropCopies, dropCopyRefused prometheus.Counter
}

func newDropCopyMetrics(reg prometheus.Registerer) dropCopyMetrics {
	m := dropCopyMetrics{
		dropCopies: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_drop_copies_total",
			Help: "ExecutionReport copies queued for drop-copy sessions."}),
		dropCopyRefused: prometheus.NewCounter(prometheus.CounterOpts{Name: "fixvenue_drop_copy_refused_total",
			Help: "Application messages from drop-copy sessions refused (BusinessMessageReject 380=6)."}),
	}
	if reg != nil {
		reg.MustRegister(m.dropCopies, m.dropCopyRefused)
	}
	return m
}

// ClientLoggedOn reports whether the session of the client CompID comp is logged on.
func (g *Gateway) ClientLoggedOn(comp string) bool {
	for _, s := range g.sessions {
		if s.cfg.ID.TargetCompID == comp {
			return s.loggedOn.Load()
		}
	}
	return false
}
