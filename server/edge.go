package server

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway/edge"
)

// EdgeConfig translates the venue configuration for the FIX edge.
func EdgeConfig(cfg *config.Config) (edge.Config, error) {
	creds := edge.Credentials{}
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		cred := edge.Credential{Password: sc.Password, VenueCompID: cfg.VenueCompID(sc),
			RequireCertificate: cfg.SessionDefaults.RequireClientCertificates}
		sources := sc.AllowedSourceAddresses
		if len(sources) == 0 {
			sources = cfg.SessionDefaults.AllowedSourceAddresses
		}
		for _, a := range sources {
			p, err := config.SourcePrefix(a)
			if err != nil {
				return edge.Config{}, fmt.Errorf("session[%d].allowed_source_addresses: %w", i, err)
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// The edge compares IPv4 clients unmapped: ::ffff:10.0.0.1
				// names 10.0.0.1 (it never matched).
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			cred.Sources = append(cred.Sources, p)
		}
		creds[sc.CompID] = cred
	}
	// With ValidateFieldsHaveValues=N QuickFIX/Go would read empty integers
	// and panic; the edge then drops every message with an empty value instead.
	dropEmpty := false
	for i := range cfg.Sessions {
		if v := cfg.QuickFIXSettings(&cfg.Sessions[i])["ValidateFieldsHaveValues"]; v == "N" || v == "n" {
			dropEmpty = true
		}
	}
	// What QuickFIX/Go's sessions may hold between reading and handling
	// a message: the edge's bound on messages ahead of a sequence gap
	// allows for it.
	inboundQueue := 1
	for i := range cfg.Sessions {
		if v, err := strconv.Atoi(cfg.QuickFIXSettings(&cfg.Sessions[i])["InChanCapacity"]); err == nil {
			inboundQueue = max(inboundQueue, v)
		}
	}
	// The sessions whose QuickFIX/Go layer resets both sides' numbers at
	// every Logon, by the key the edge knows them by.
	resets := map[edge.SessionKey]bool{}
	for i := range cfg.Sessions {
		sc := &cfg.Sessions[i]
		if v := cfg.QuickFIXSettings(sc)["ResetOnLogon"]; v == "Y" || v == "y" {
			resets[edge.SessionKey{BeginString: quickfix.BeginStringFIX44, ClientCompID: sc.CompID, VenueCompID: cfg.VenueCompID(sc)}] = true
		}
	}
	return edge.Config{
		ResetsOnLogon:           func(key edge.SessionKey) bool { return resets[key] },
		DropEmptyValues:         dropEmpty,
		SessionInboundQueue:     inboundQueue,
		Address:                 cfg.FIX.Addr,
		MessageBytesMax:         cfg.FIX.MessageBytesMax,
		LogonTimeout:            cfg.FIX.LogonTimeout.Duration,
		Authenticator:           creds,
		ConnectionsMax:          cfg.FIX.ConnectionsMax,
		ConnectionsPerSourceMax: cfg.FIX.ConnectionsPerIPMax,
		OutboundQueueMax:        cfg.FIX.OutboundQueueMax,
		WriteTimeout:            cfg.FIX.WriteTimeout.Duration,
		LogonsPerCompID:         edge.Rate{PerSecond: cfg.FIX.LogonsPerCompIDPerSecond, Burst: cfg.FIX.LogonsPerCompIDBurst},
		LogonsPerSource:         edge.Rate{PerSecond: cfg.FIX.LogonsPerSourcePerSecond, Burst: cfg.FIX.LogonsPerSourceBurst},
		Accepts:                 edge.Rate{PerSecond: cfg.FIX.AcceptsPerSecond, Burst: cfg.FIX.AcceptsBurst},
		AcceptsPerSource:        edge.Rate{PerSecond: cfg.FIX.AcceptsPerSourcePerSecond, Burst: cfg.FIX.AcceptsPerSourceBurst},
		TLSCertFile:             cfg.FIX.TLSCertFile,
		TLSKeyFile:              cfg.FIX.TLSKeyFile,
		TLSClientCAFile:         cfg.FIX.TLSClientCAFile,
		// A client without a certificate passes the handshake and the
		// credentials decide (RequireCertificate), as fix.tls_client_ca_file
		// and session_defaults.require_client_certificates are documented
		// (config/default.toml): the handshake refused it, a TLS alert
		// instead of a Logout, whatever require_client_certificates said.
		TLSClientCertificateOptional: !cfg.SessionDefaults.RequireClientCertificates,
	}, nil
}

// edgePacer lets the gateway's senders see the edge's connections.
type edgePacer struct{ l *edge.Listener }

func edgeKey(id quickfix.SessionID) edge.SessionKey {
	return edge.SessionKey{BeginString: id.BeginString, ClientCompID: id.TargetCompID, VenueCompID: id.SenderCompID}
}

// sessionIDOf is the QuickFIX/Go session of an edge key (edgeKey's inverse).
func sessionIDOf(key edge.SessionKey) quickfix.SessionID {
	return quickfix.SessionID{BeginString: key.BeginString, SenderCompID: key.VenueCompID, TargetCompID: key.ClientCompID}
}

func (p edgePacer) WriteDone(id quickfix.SessionID) (written, closed <-chan struct{}) {
	if c, ok := p.l.Session(edgeKey(id)); ok {
		return c.Written(), c.Done()
	}
	return nil, nil
}

// Backlogged reports whether the session's connection has more than half
// its outbound bounds waiting for the client (gateway.Backlogger).
func (p edgePacer) Backlogged(id quickfix.SessionID) bool {
	if c, ok := p.l.Session(edgeKey(id)); ok {
		return c.Backlogged()
	}
	return false
}

// Closed reports whether the session's connection has been closed, or it
// has none (gateway.Closer).
func (p edgePacer) Closed(id quickfix.SessionID) bool {
	c, ok := p.l.Session(edgeKey(id))
	if !ok {
		return true
	}
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// StopTaking has the FIX edge drop what the session's client sends on its
// connection from now on (gateway.InboundStopper).
func (p edgePacer) StopTaking(id quickfix.SessionID) {
	if c, ok := p.l.Session(edgeKey(id)); ok {
		c.StopTaking()
	}
}

func (p edgePacer) Disconnect(id quickfix.SessionID, written <-chan struct{}) {
	if c, ok := p.l.Session(edgeKey(id)); ok && c.Written() == written {
		c.Disconnect() // QuickFIX/Go releases the session once it has seen the end (Close)
	}
}

// RefuseLogons has the FIX edge answer every Logon from now on with a
// Logout whose Text is text(), read at each refusal: a cluster's deposed
// leader (ClusterNode.logOutFIX) names the node that leads as soon as it
// knows it, where the logon it took would be dropped without a word as
// the process restarts.
func (s *Server) RefuseLogons(text func() string) { s.fixRefusal.Store(&text) }

// releaseFIXSocket stops the FIX edge accepting and returns its listening
// socket, left open (edge.Listener.Release); nil without one.
func (s *Server) releaseFIXSocket() *net.TCPListener {
	if s.edge == nil {
		return nil
	}
	return s.edge.Release()
}

// listenEdge binds the FIX edge and registers its counters as metrics.
func (s *Server) listenEdge() (net.Listener, error) {
	ec, err := EdgeConfig(s.cfg)
	if err != nil {
		return nil, err
	}
	ec.Logger = s.log
	ec.Serving = s.fixServing.Load
	ec.Refusing = func() string {
		if text := s.fixRefusal.Load(); text != nil {
			return (*text)()
		}
		return ""
	}
	ec.CheckLogon = func(key edge.SessionKey, logon []byte) (string, bool) {
		if gw := s.logonGateway.Load(); gw != nil {
			return gw.CheckLogon(sessionIDOf(key), logon)
		}
		return "", false
	}
	ec.LogOut = func(key edge.SessionKey, text string) bool {
		gw := s.logonGateway.Load()
		return gw != nil && gw.LogOutSession(sessionIDOf(key), text)
	}
	// The stores are made after the edge listens, before QuickFIX/Go
	// starts, whose reader goroutines alone ask.
	ec.NextTargetSeqNum = func(key edge.SessionKey) func() int {
		if s.stores == nil {
			return nil
		}
		st, ok := s.stores.Lookup(sessionIDOf(key))
		if !ok {
			return nil
		}
		return st.TargetSeqNumNow
	}
	if s.sessCtl != nil {
		ec.Authenticator = s.sessCtl.authenticator(ec.Authenticator)
	}
	if r := s.opts.Replica; r != nil {
		ec.Socket = r.FIXSocket
	}
	if s.opts.Replica != nil || len(s.storesLost) > 0 {
		ec.CheckSeqNums = s.checkSeqNums
	}
	l, err := edge.Listen(ec)
	if err != nil {
		return nil, err
	}
	s.edge = l
	st := l.Stats()
	s.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fixvenue_edge_connections",
			Help: "Open FIX connections (before and after logon)."}, func() float64 { return float64(st.ConnectionsOpen.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_edge_messages_in_total",
			Help: "Messages the edge handed to the session layer."}, func() float64 { return float64(st.MessagesIn.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_edge_messages_out_total",
			Help: "Messages the session layer wrote to clients."}, func() float64 { return float64(st.MessagesOut.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_edge_garbage_bytes_total",
			Help: "Bytes skipped while looking for the start of a message."}, func() float64 { return float64(st.GarbageBytes.Load()) }),
	)
	for _, r := range edge.Reasons() {
		r := r
		s.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fixvenue_edge_refusals_total",
			Help: "Messages dropped, logons refused and connections closed by the FIX edge, by reason; " +
				"peer_closed and closed_by_session count the sessions' connections the client or the session layer ended.",
			ConstLabels: prometheus.Labels{"reason": r.String()}}, func() float64 { return float64(st.Count(r)) }))
	}
	return l, nil
}

// NewLeaderResetText is the Logout's Text to a Logon that a cluster's new
// leader refuses for its sequence numbers (checkSeqNums).
const NewLeaderResetText = "sequence numbers do not carry over to a new cluster leader: " +
	"log on with ResetSeqNumFlag (141=Y) and MsgSeqNum (34) 1"

// StoreLostResetText is the Logout's Text to a Logon that a venue refuses
// because the session's FIX store was lost (checkSeqNums).
const StoreLostResetText = "the venue lost this session's sequence numbers (its FIX store is missing): " +
	"log on with ResetSeqNumFlag (141=Y) and MsgSeqNum (34) 1"

// checkSeqNums is the edge's Config.CheckSeqNums for sessions whose numbers
// the venue does not have: on a cluster's leader every session (the FIX
// stores are not replicated: a node's store holds what its own leaderships
// sent, and the numbers of the leader before are lost with it;
// docs/ARCHITECTURE.md, "Cluster", "FIX sessions on a new leader"), on a
// single venue those whose store the start found missing ("Answers lost at
// a crash"). Until such a session logs on to this server, a Logon that
// would go on from the store is refused, with a Text saying to reset,
// unless the store and the Logon both start at 1 (a session's first day):
// QuickFIX/Go would otherwise take it, answering from numbers the client
// does not have (the client logs out, and cancel-on-disconnect cancels its
// orders at once, before fix.cancel_grace), or, on a node that led before,
// resend the messages of its earlier leadership under numbers the client
// has had others for.
func (s *Server) checkSeqNums(key edge.SessionKey, reset bool, seqNum uint64) string {
	if reset {
		return "" // QuickFIX/Go resets the store: both sides start at 1
	}
	text := NewLeaderResetText
	if s.opts.Replica == nil {
		if !s.storesLost[key.ClientCompID] {
			return ""
		}
		text = StoreLostResetText
	}
	id := sessionIDOf(key)
	gw := s.logonGateway.Load()
	if gw == nil || gw.LoggedOnSinceStart(id) {
		return ""
	}
	st, ok := s.stores.Lookup(id)
	if !ok {
		return "" // not a configured session: the authenticator refused it
	}
	if seqNum == 1 && st.NextSenderMsgSeqNum() == 1 && st.NextTargetMsgSeqNum() == 1 {
		return ""
	}
	return text
}
