package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core"
	"github.com/fixvenue/fixvenue/core/decimal"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/internal/httpbound"
	"github.com/fixvenue/fixvenue/internal/httpdrain"
	"github.com/fixvenue/fixvenue/internal/tlsserver"
	"github.com/fixvenue/fixvenue/sbe/venue"
	"github.com/fixvenue/fixvenue/schedule"
)

// The admin API: JSON over HTTP, documented in README "Operating the
// venue". Every /v1 call needs a bearer token whose SHA-256 is in
// [admin]; the token's operator is journaled with each action.

// AllInstruments in an instrument path means every instrument.
const AllInstruments = "all"

// apiError is the body of every refusal.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Seq   uint64 `json:"seq,omitempty"` // the journaled command, when the matcher refused it
	// Current and Value: a limit change the figures already pass names
	// the subject's figure and the limit asked (README "Risk limits").
	Current int64 `json:"current,omitempty"`
	Value   int64 `json:"value,omitempty"`
	// LeaderAdminAddr: a follower's not_leader names the leader's admin
	// address when the configuration gives it.
	LeaderAdminAddr string `json:"leader_admin_addr,omitempty"`
}

// ActionResponse answers a call that journaled a command.
type ActionResponse struct {
	Seq      uint64          `json:"seq"`
	Action   string          `json:"action"`
	Operator string          `json:"operator"`
	Result   string          `json:"result"`
	Count    uint32          `json:"count"`
	EndOfDay *EndOfDayReport `json:"end_of_day,omitempty"`
	// StayHalted lists, for a phase change, the group's instruments an
	// operator halted: they stay halted, and a resume takes them to the
	// group's phase.
	StayHalted []string `json:"stay_halted,omitempty"`
	// Order: the order an operator's cancel of one order cancelled.
	Order *CancelledOrder `json:"order,omitempty"`
}

// InstrumentInfo is one row of GET /v1/instruments.
type InstrumentInfo struct {
	ID     uint32 `json:"id"`
	Symbol string `json:"symbol"`
	Status string `json:"status"`
	// Auction and AuctionEnd, in a volatility auction: "interruption" (of
	// continuous trading), "opening call extension" or "closing call
	// extension", and when it uncrosses (RFC 3339, UTC), as announced.
	Auction    string `json:"auction,omitempty"`
	AuctionEnd string `json:"auction_end,omitempty"`
	RefPrice   string `json:"ref_price,omitempty"`
	// BandPercent is left out when several percents give the band in
	// force (a reference of few ticks, set before a restart: movedBand).
	BandPercent int64  `json:"band_percent,omitempty"`
	BandLow     string `json:"band_low"`
	BandHigh    string `json:"band_high"`
	// LastPrice, LastQty, Volume and Trades are the day's (DayFigures),
	// PrevClose the last trade of the last day that traded.
	LastPrice string `json:"last_price,omitempty"`
	LastQty   int64  `json:"last_qty"`
	Volume    int64  `json:"volume"`
	Trades    int64  `json:"trades"`
	PrevClose string `json:"prev_close,omitempty"`
	Bid       string `json:"bid,omitempty"`
	// BidQty and AskQty are the whole of the orders at the best prices,
	// icebergs' reserves included (the operator's view of the book; the
	// feed and FIX market data show an iceberg's slice).
	BidQty        int64  `json:"bid_qty"`
	Ask           string `json:"ask,omitempty"`
	AskQty        int64  `json:"ask_qty"`
	RestingOrders int    `json:"resting_orders"`
	BidQtyTotal   int64  `json:"bid_qty_total"` // all resting buy quantity
	AskQtyTotal   int64  `json:"ask_qty_total"`
}

// SessionInfo is one row of GET /v1/sessions.
type SessionInfo struct {
	CompID        string `json:"comp_id"`
	LoggedOn      bool   `json:"logged_on"`
	Disabled      bool   `json:"disabled"`
	Address       string `json:"address,omitempty"`
	NextSenderSeq int    `json:"next_sender_seq"`
	NextTargetSeq int    `json:"next_target_seq"`
	OpenOrders    int    `json:"open_orders"`
	// OpenOrdersMax is the session's bound on them (open_orders_max;
	// absent: none).
	OpenOrdersMax int `json:"open_orders_max,omitempty"`
	// Counts over the last second (the throttles' windows).
	MessagesPerSecond int `json:"messages_per_second"`
	OrdersPerSecond   int `json:"orders_per_second"`
	CancelsPerSecond  int `json:"cancels_per_second"`
	// DropCopy marks a drop-copy session: no orders, no risk limits.
	DropCopy bool `json:"drop_copy,omitempty"`
}

// StatusInfo answers GET /v1/status.
type StatusInfo struct {
	// Ready is what /readyz says: started (journal replayed, FIX listening,
	// schedule caught up) and not halted.
	Ready            bool   `json:"ready"`
	DurableSeq       int64  `json:"durable_seq"`
	EventsSinceStart int64  `json:"events_since_start"`
	EventsHash       string `json:"events_hash"`
	ScheduleEnabled  bool   `json:"schedule_enabled"`
	// NextTransition is the first transition the schedule will run after
	// the last one recorded (Ops.schedulePosition), a transition due and
	// not yet run included.
	NextTransition string          `json:"next_transition,omitempty"`
	LastEndOfDay   *EndOfDayReport `json:"last_end_of_day,omitempty"`
	// Halted is the fail-stop's cause (a journal or matcher failure): the
	// venue refuses every order until it is restarted. Empty while trading.
	Halted string `json:"halted,omitempty"`
	// Stalled says that commands have waited for seconds with none made
	// durable: the journal's disk does not complete its writes, and their
	// orders wait unanswered. Empty while the journal keeps up.
	Stalled string `json:"stalled,omitempty"`
	// Capacity is what the matcher holds of each bound: at a bound new
	// orders are refused (CapacityExceeded).
	Capacity []CapacityInfo `json:"capacity,omitempty"`
	// RefusedAtStart is what the start's replay refused under the
	// configured terms when it started without the record of the terms
	// the journal was written under (README, "Changing configured
	// terms"); absent after any other start.
	RefusedAtStart *RefusedAtStartInfo `json:"refused_at_start,omitempty"`
}

// RefusedAtStartInfo counts the journaled new orders a start without the
// terms record refused for a reason the configured terms decide: each that
// was accepted when it was entered is gone, and its owner was not told.
type RefusedAtStartInfo struct {
	Orders       int            `json:"orders"`
	ByInstrument map[string]int `json:"by_instrument"`
	// First names the first few: seq, session, ClOrdID, instrument, reason.
	First []string `json:"first"`
}

// CapacityInfo is one bound of the matcher, named by its configuration key.
type CapacityInfo struct {
	Bound string `json:"bound"`
	Used  int    `json:"used"`
	Limit int    `json:"limit"`
}

// capacityOf lists the bounds of a usage.
func capacityOf(u core.Usage) []CapacityInfo {
	return []CapacityInfo{{"orders_max", u.Orders, u.OrdersMax}, {"stops_max", u.Stops, u.StopsMax},
		{"clordids_max", u.ClOrdIDs, u.ClOrdIDsMax}}
}

// actionRequest is the body of every POST: why, and the filters of a cancel.
type actionRequest struct {
	Reason      string `json:"reason"`
	Group       string `json:"group,omitempty"`
	Phase       string `json:"phase,omitempty"`
	Session     string `json:"session,omitempty"`
	Account     string `json:"account,omitempty"`
	Instrument  string `json:"instrument,omitempty"`
	RefPrice    string `json:"ref_price,omitempty"`
	BandPercent int64  `json:"band_percent,omitempty"`
}

// onlyReason reports whether the request carries nothing but its reason.
func (r *actionRequest) onlyReason() bool {
	return r.Session == "" && r.Account == "" && r.Instrument == "" && r.RefPrice == "" && r.BandPercent == 0 &&
		r.Group == "" && r.Phase == ""
}

// readReason reads the body of an action that carries only its reason;
// otherwise it answers 400 with refusal and ok is false.
func (o *Ops) readReason(w http.ResponseWriter, r *http.Request, refusal string) (reason string, ok bool) {
	req, ok := o.readAction(w, r)
	if !ok {
		return "", false
	}
	if !req.onlyReason() {
		refuse(w, http.StatusBadRequest, "bad_body", "%s", refusal)
		return "", false
	}
	return req.Reason, true
}

type operatorKey struct{}

// Listen opens the admin API's listener as configured (TLS when a
// certificate is given): the venue's, and a cluster follower's (Follower).
func Listen(a config.Admin) (net.Listener, error) {
	l, err := net.Listen("tcp", a.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin.addr: %w", err)
	}
	return WithTLS(l, a)
}

// WithTLS serves TLS on l when admin configures it (l is closed on error).
func WithTLS(l net.Listener, a config.Admin) (net.Listener, error) {
	if a.TLSCertFile != "" {
		tc, err := adminTLS(a)
		if err != nil {
			l.Close()
			return nil, err
		}
		l = tls.NewListener(l, tc)
	}
	return l, nil
}

// Follower is the admin API of a cluster node that follows: alive
// (/healthz 200), never ready (/readyz 503 not_leader), and every other
// call refused with 503 not_leader and where the leader is (leader(): the
// words, and the leader's admin address when its [[cluster.peer]] gives
// one, else ""), so that an operator tells a follower from a node that is
// down and knows where to call, and a load balancer checking /readyz sends
// calls to the leader alone. The node serves the venue's API once it
// leads.
func Follower(leader func() (text, adminAddr string)) http.Handler {
	refusal := func() apiError {
		text, addr := leader()
		return apiError{Error: "this cluster node follows; " + text, Code: "not_leader", LeaderAdminAddr: addr}
	}
	mux := http.NewServeMux()
	probes(mux, refusal)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { answerNotLeader(w, r, refusal()) })
	return mux
}

// Deposed is the admin API of a cluster node that lost the leadership,
// until it restarts as a follower: alive, not ready, and every other call
// refused with 503 not_leader (NotLeaderDeposed) and, as a follower's,
// where the leader is when the node knows it (leader, as for Follower;
// nil: not said).
func Deposed(leader func() (text, adminAddr string)) http.Handler {
	mux := http.NewServeMux()
	probes(mux, func() apiError { return deposedError(leader) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { answerNotLeader(w, r, deposedError(leader)) })
	return mux
}

// probes are /healthz and /readyz of a cluster node that does not lead:
// alive, and not ready with notReady, as JSON whoever asks (a probe is no
// browser's page); another method is 405 with Allow, as on the venue
// (listen). /healthz says the process answers, /readyz that it takes the
// calls (README, "Cluster: three replicas").
func probes(mux *http.ServeMux, notReady func() apiError) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusServiceUnavailable, notReady())
	})
	probeMethods(mux)
}

// probeMethods answers a method other than GET on /healthz and /readyz
// 405 with Allow (README, "Operating the venue").
func probeMethods(mux *http.ServeMux) {
	for _, p := range []string{"/healthz", "/readyz"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", http.MethodGet)
			writeJSON(w, http.StatusMethodNotAllowed, apiError{Error: r.Method + " " + r.URL.Path + " is not allowed: GET", Code: "method_not_allowed"})
		})
	}
}

// deposedError is the 503 not_leader of a deposed node (DeposedText).
func deposedError(leader func() (text, adminAddr string)) apiError {
	text, addr := DeposedText(leader)
	return apiError{Error: text, Code: "not_leader", LeaderAdminAddr: addr}
}

// DeposedText is what a deposed node says of a call it refuses:
// NotLeaderDeposed, then which node leads and its admin address when
// leader knows them (nil: not said).
func DeposedText(leader func() (text, adminAddr string)) (text, adminAddr string) {
	if leader == nil {
		return NotLeaderDeposed, ""
	}
	text, adminAddr = leader()
	return NotLeaderDeposed + "; " + text, adminAddr
}

// NotLeaderDeposed is the 503 not_leader of a cluster node that lost the
// leadership and restarts as a follower: the call took no effect.
const NotLeaderDeposed = "this cluster node lost the leadership and restarts as a follower (nothing changed): " +
	"the node that leads takes the call (fixvenue cluster status)"

// AdminConnsBeyondStreams is how many connections the admin listener
// holds beside the console's event streams (admin.console.streams_max):
// at the bound, a new connection closes the one that has waited longest
// for a request, or is closed at once when every one is serving one
// (internal/httpbound; README, "Operating the venue").
const AdminConnsBeyondStreams = 64

// apiMethods are the methods the API's endpoints take.
var apiMethods = [...]string{http.MethodGet, http.MethodPost}

// allowedMethods lists the methods for which mux has an endpoint at r's path
// ("" when none has): a call with another method is answered 405 with them,
// not 404. The catch-alls ("/v1/" and the console's "/") are no endpoints.
func allowedMethods(mux *http.ServeMux, r *http.Request) string {
	allow := ""
	for _, m := range apiMethods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/v1/" && pattern != "/" && pattern != "" {
			if allow != "" {
				allow += ", "
			}
			allow += m
		}
	}
	return allow
}

func (o *Ops) listen(fixReady func() bool) error {
	a := o.cfg.Admin
	var l net.Listener
	var err error
	if o.cfg.Listener != nil {
		l, err = WithTLS(o.cfg.Listener, a)
	} else {
		l, err = Listen(a)
	}
	if err != nil {
		return err
	}
	o.listener = l
	if tcp, ok := l.Addr().(*net.TCPAddr); ok {
		o.loopback = tcp.IP.IsLoopback()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := o.Halted(); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "halted: " + err.Error(), Code: "halted"})
			return
		}
		if o.ready.Load() && fixReady() {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "not ready: journal replay, FIX listener or schedule catch-up pending", Code: "not_ready"})
	})
	// /healthz and /readyz are endpoints as the /v1/ calls are: another
	// method is 405 with Allow, not the console's HTML 404 page, which the
	// catch-all "/" answered.
	probeMethods(mux)
	mux.HandleFunc("GET /v1/status", o.authRead(o.handleStatus))
	mux.HandleFunc("GET /v1/instruments", o.authRead(o.handleInstruments))
	mux.HandleFunc("POST /v1/instruments", o.auth(o.handleAddInstrument))
	mux.HandleFunc("POST /v1/instruments/{symbol}/{action}", o.auth(o.handleInstrumentAction))
	mux.HandleFunc("POST /v1/instruments/{symbol}/band", o.auth(o.handleBand))
	mux.HandleFunc("POST /v1/cancel", o.auth(o.handleCancel))
	mux.HandleFunc("POST /v1/orders/cancel", o.auth(o.handleOrderCancel))
	mux.HandleFunc("POST /v1/eod", o.auth(o.handleEndOfDay))
	mux.HandleFunc("POST /v1/phase", o.auth(o.handlePhase))
	mux.HandleFunc("GET /v1/sessions", o.authRead(o.handleSessions))
	mux.HandleFunc("GET /v1/sessions/{comp_id}/orders", o.authRead(o.handleSessionOrders))
	mux.HandleFunc("POST /v1/sessions/{comp_id}/{action}", o.auth(o.handleSessionAction))
	mux.HandleFunc("GET /v1/risk", o.authRead(o.handleRiskView))
	mux.HandleFunc("POST /v1/risk/{action}", o.auth(o.handleRiskAction))
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such endpoint: " + r.Method + " " + r.URL.Path, Code: "not_found"})
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(mux, r); allow != "" {
			w.Header().Set("Allow", allow)
			writeJSON(w, http.StatusMethodNotAllowed, apiError{Error: r.Method + " " + r.URL.Path + " is not allowed: " + allow, Code: "method_not_allowed"})
			return
		}
		notFound(w, r)
	})
	if o.console != nil {
		mux.Handle("/", o.console) // the web console's pages (package console)
	} else {
		mux.HandleFunc("/", notFound)
	}
	srv := &http.Server{Handler: CrossOrigin(mux), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: a.CallTimeout.Duration + snapshotWaitMax + 10*time.Second, MaxHeaderBytes: 16 << 10}
	o.conns.Store(httpbound.Bound(srv, a.Console.StreamsMax+AdminConnsBeyondStreams))
	if o.cfg.Listener != nil {
		srv.SetKeepAlivesEnabled(false) // Config.Listener
		o.track = httpdrain.Track(srv)
	}
	// Close may run meanwhile (a stop during the server's start): either it
	// sees the server and closes it, or the server is not started.
	o.serverMu.Lock()
	if o.stopping() {
		o.serverMu.Unlock()
		l.Close()
		return ErrStopping
	}
	o.server = srv
	o.serverMu.Unlock()
	go func() { _ = srv.Serve(l) }()
	o.log.Info("admin API listening", "addr", l.Addr().String(), "tls", a.TLSCertFile != "", "tokens", len(a.Tokens),
		"operator_tokens", a.OperatorTokens(), "console", o.console != nil)
	if a.OperatorTokens() == 0 {
		o.log.Warn("admin API: no operator token configured; every change is refused (add an [[admin.token]])")
	}
	return nil
}

func adminTLS(a config.Admin) (*tls.Config, error) {
	tc, err := tlsserver.Config(a.TLSCertFile, a.TLSKeyFile, a.TLSClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("admin TLS (admin.tls_cert_file, tls_key_file, tls_client_ca_file): %w", err)
	}
	return tc, nil
}

// CrossOrigin refuses (403 cross_origin) a request other than GET, HEAD
// or OPTIONS that a browser sends from a page of another origin, a form's
// post among them (net/http.CrossOriginProtection: the browser's
// Sec-Fetch-Site, else its Origin against the Host); the CLI, scripts and
// the console's own pages pass. Every change needs the operator token in
// the Authorization header, which no such form sends, but the console's
// sign-in needed nothing more than a form's token: a page elsewhere could
// sign a browser in with a token of its choosing, whose pages it then
// showed. A cluster node's status listener and the metrics listener's test
// hook are refused alike.
func CrossOrigin(h http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, apiError{Code: "cross_origin",
			Error: r.Method + " " + r.URL.Path + " from a page of another origin is refused (nothing changed): call the venue from its own pages, the CLI or a script"})
	}))
	return p.Handler(h)
}

// LoopbackNames refuses (403) a request to a loopback listener l whose
// Host is not a loopback name: a page on another site that has its own name
// resolve to 127.0.0.1 (DNS rebinding) could otherwise read what the
// listener serves from a browser on the venue's machine, its per-session
// metrics and a cluster node's status among them (the admin API's reads
// are checked alike: Authorize). A listener beyond loopback is left as it
// is: whoever reaches it is reached by the network, not a browser's page.
func LoopbackNames(l net.Listener, h http.Handler) http.Handler {
	if tcp, ok := l.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoopbackHost(r.Host) {
			http.Error(w, "this loopback listener answers a loopback name (127.0.0.1, [::1], localhost), not "+strconv.Quote(r.Host)+
				": a web page elsewhere reaches loopback by such a name, rebinding it in DNS", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// HashToken returns the hex SHA-256 of a token, as [[admin.token]] stores it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenCookie is the cookie a browser may carry a read token in (the
// console's sign-in page sets it); changes need the Authorization header,
// so that a page elsewhere cannot make a browser change anything.
const TokenCookie = "fixvenue_token"

// bearerToken is the token of an Authorization header "Bearer <token>"; the
// scheme's name is case-insensitive (RFC 9110, "Authentication Scheme").
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}

// Authorize checks a request's token for reading or, with operate, for a
// change. It returns the token's operator ("" for an anonymous read on a
// loopback listener), or the HTTP status and the reason of a refusal:
// 401 without a known token, 403 when the token (or the configuration)
// does not allow the change. Every configured hash is compared, in
// constant time.
func (o *Ops) Authorize(r *http.Request, operate bool) (operator string, status int, code, reason string) {
	return authorize(&o.cfg.Admin, o.loopback, r, operate)
}

// AuthorizeChange checks a change asked for outside the admin API (a
// cluster node's leadership transfer, on its status listener) as the API
// checks its own: the Authorization header's bearer token must be an
// operator token of a, and with none configured every change is refused.
// It returns what Authorize returns.
func AuthorizeChange(a *config.Admin, r *http.Request) (operator string, status int, code, reason string) {
	return authorize(a, false, r, true)
}

func authorize(a *config.Admin, loopback bool, r *http.Request, operate bool) (operator string, status int, code, reason string) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok && !operate {
		if c, err := r.Cookie(TokenCookie); err == nil {
			token, ok = c.Value, true
		}
	}
	if operate && a.OperatorTokens() == 0 {
		return "", http.StatusForbidden, "no_operator_token",
			"changes are refused: no operator token is configured (add an [[admin.token]]; `fixvenue admin hash-token` hashes it)"
	}
	if !ok || token == "" {
		if !operate && loopback {
			if LoopbackHost(r.Host) {
				return "", 0, "", ""
			}
			return "", http.StatusUnauthorized, "unauthorized", fmt.Sprintf("missing bearer token: without one, only a call to a "+
				"loopback name (127.0.0.1, [::1], localhost) reads, not one to %q (a web page elsewhere reaches loopback by such a name, "+
				"rebinding it in DNS)", r.Host)
		}
		return "", http.StatusUnauthorized, "unauthorized", "missing bearer token (Authorization: Bearer <token>)"
	}
	sum := sha256.Sum256([]byte(token))
	role := ""
	for _, t := range a.Tokens {
		want, err := hex.DecodeString(t.SHA256)
		if err == nil && subtle.ConstantTimeCompare(sum[:], want) == 1 {
			operator, role = t.Operator, t.Role
		}
	}
	if operator == "" {
		return "", http.StatusUnauthorized, "unauthorized", "unknown token"
	}
	if operate && role == config.RoleRead {
		return "", http.StatusForbidden, "read_only_token", "the token of " + operator + " may only read"
	}
	return operator, 0, "", ""
}

// LoopbackHost reports whether a request's Host names loopback: an
// anonymous read on a loopback listener is admitted only then, since a
// web page on another site can have its own name resolve to 127.0.0.1
// (DNS rebinding) and read the venue from a browser on the same machine;
// its requests carry that name (README "Operating the venue").
func LoopbackHost(host string) bool {
	if host == "" {
		// An HTTP/1.0 request may carry no Host (a health check, a script
		// of nc): no browser sends one without it, so no web page's name is
		// there to refuse, and it read before the check.
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auth admits a change with an operator token and passes its operator on.
func (o *Ops) auth(next http.HandlerFunc) http.HandlerFunc { return o.authFor(true, next) }

// authRead admits a read: anonymous on a loopback listener, else a token.
func (o *Ops) authRead(next http.HandlerFunc) http.HandlerFunc { return o.authFor(false, next) }

func (o *Ops) authFor(operate bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		operator, status, code, reason := o.Authorize(r, operate)
		if status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="fixvenue"`)
			}
			writeJSON(w, status, apiError{Error: reason, Code: code})
			return
		}
		if operate {
			if !o.changeMu.TryRLock() {
				o.refuseCatchingUp(w) // a catch-up runs, or is about to
				return
			}
			defer o.changeMu.RUnlock()
			if o.CatchingUp() {
				o.refuseCatchingUp(w)
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), operatorKey{}, operator)))
	}
}

// catchingUpRetrySeconds is the Retry-After of a change refused during the
// schedule's catch-up: a catch-up of phase changes takes well under a
// second; one with ends of day (snapshot, archive) a few.
const catchingUpRetrySeconds = 2

// refuseCatchingUp answers a change that came during the schedule's
// catch-up (docs/ARCHITECTURE.md, "Operations: the control plane and the
// trading day"): the catch-up's commands carry the times their
// transitions were due, so a change journaled among them would be
// recorded as made hours before it was, and act on the state of a day
// the catch-up is still ending (a phase set now, closed again by a
// missed close after it). Nothing is journaled; the operator repeats it
// once the venue is ready.
func (o *Ops) refuseCatchingUp(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(catchingUpRetrySeconds))
	writeJSON(w, http.StatusServiceUnavailable, apiError{Code: "catching_up",
		Error: "the venue is running the schedule's transitions it missed (while it was down, or a clock stepped past them); nothing changed: " +
			"repeat the call once it is ready (GET /readyz)"})
}

func operatorOf(r *http.Request) string { s, _ := r.Context().Value(operatorKey{}).(string); return s }

func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// An answer echoes what a caller gave (a path, a symbol, a Host): no
	// browser may read it as anything but JSON. And none is kept: each
	// says the venue's state at its time, some to a token's holder only.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func refuse(w http.ResponseWriter, code int, errCode, format string, a ...any) {
	writeJSON(w, code, apiError{Error: fmt.Sprintf(format, a...), Code: errCode})
}

// readAction decodes a POST body strictly: one JSON object, known fields,
// within admin.body_bytes_max, with a reason the journal can hold.
func (o *Ops) readAction(w http.ResponseWriter, r *http.Request) (actionRequest, bool) {
	var req actionRequest
	if !o.decodeBody(w, r, &req) || !checkReason(w, req.Reason) {
		return req, false
	}
	if len(req.Account) > venue.AccountLength || strings.IndexFunc(req.Account, nonPrintable) >= 0 {
		refuse(w, http.StatusBadRequest, "bad_account", "account must be at most %d printable ASCII characters", venue.AccountLength)
		return req, false
	}
	return req, true
}

// checkReason checks an action's reason, which the journal holds with it;
// otherwise it answers 400 and reports false.
func checkReason(w http.ResponseWriter, reason string) bool {
	switch {
	case strings.TrimSpace(reason) == "":
		refuse(w, http.StatusBadRequest, "no_reason", "give a reason: it is journaled with the action")
	case len(reason) > venue.OperatorReasonLength || strings.IndexFunc(reason, nonPrintable) >= 0:
		refuse(w, http.StatusBadRequest, "bad_reason", "reason must be at most %d printable ASCII characters", venue.OperatorReasonLength)
	default:
		return true
	}
	return false
}

// decodeBody decodes a POST body strictly into v: one JSON object, known
// fields, nothing after it, within admin.body_bytes_max.
func (o *Ops) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(o.cfg.Admin.BodyBytesMax)))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		refuse(w, http.StatusRequestEntityTooLarge, "body_too_large", "request body over %d bytes (admin.body_bytes_max)", o.cfg.Admin.BodyBytesMax)
		return false
	}
	if err != nil {
		refuse(w, http.StatusBadRequest, "bad_body", "reading the body: %v", err)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		refuse(w, http.StatusBadRequest, "bad_json", "body is not the JSON object expected: %v", err)
		return false
	}
	// Anything but white space after the value (dec.More stops at a '}' or ']').
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		refuse(w, http.StatusBadRequest, "bad_json", "body holds more than one JSON value")
		return false
	}
	if err := exactKeys(body, v); err != nil {
		refuse(w, http.StatusBadRequest, "bad_json", "%v", err)
		return false
	}
	return true
}

// exactKeys checks the keys of the JSON object body against the json names
// of the struct v points to, exactly: encoding/json matches names without
// regard to case and keeps the last of a repeated key, so {"reason": "a",
// "REASON": "b"} would journal "b" for a body that names no field.
func exactKeys(body []byte, v any) error {
	names := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" {
			names[name] = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // the '{' the strict decode saw
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case !names[key]:
			return fmt.Errorf("unknown field %q (names are exact: %s)", key, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
		case seen[key]:
			return fmt.Errorf("field %q given twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

func nonPrintable(r rune) bool { return r < ' ' || r > '~' }

// answer writes the outcome of a journaled command.
func (o *Ops) answer(w http.ResponseWriter, operator string, r Result, err error, eod *EndOfDayReport) {
	switch {
	case errors.Is(err, ErrBusy):
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error(), Code: "busy"})
	case errors.Is(err, ErrUnconfirmed):
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error(), Code: "unconfirmed", Seq: r.Seq})
	case errors.Is(err, pipeline.ErrHalted) && o.cfg.LostLeadership != nil && errors.Is(err, o.cfg.LostLeadership):
		// A cluster leader deposed: the node restarts as a follower, whose
		// answer is the same (Follower).
		writeJSON(w, http.StatusServiceUnavailable, deposedError(o.cfg.Leader))
	case errors.Is(err, pipeline.ErrHalted):
		note := " (nothing changed; restart the venue)"
		if errors.As(err, new(partlyDone)) {
			note = " (restart the venue)" // the error says what changed
		}
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error() + note, Code: "halted"})
	case errors.Is(err, errDayEnded):
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error() + " (nothing changed: the next end of day is the next trading day's)",
			Code: "day_ended"})
	case err != nil:
		writeJSON(w, http.StatusGatewayTimeout, apiError{Error: err.Error(), Code: "timeout", Seq: r.Seq})
	case r.Reason == venue.RejectReasonNone:
		writeJSON(w, http.StatusOK, ActionResponse{Seq: r.Seq, Action: r.Action.String(), Operator: operator,
			Result: "done", Count: r.Count, EndOfDay: eod})
	case r.Reason == venue.RejectReasonInvalidTransition:
		writeJSON(w, http.StatusConflict, apiError{Error: "nothing to do: the transition makes no sense in the current state (nothing changed)",
			Code: "invalid_transition", Seq: r.Seq})
	case r.Reason == venue.RejectReasonInvalidPriceBand:
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: "the band would span more ticks than the configured band allocates, or put max_qty at its top above the largest order notional (nothing changed)",
			Code: "band_too_wide", Seq: r.Seq})
	case r.Reason == venue.RejectReasonOrdersOutsideBand:
		writeJSON(w, http.StatusConflict, apiError{Error: "resting orders, or stop orders' stop or limit prices, lie outside the new band; cancel them first (nothing changed)",
			Code: "orders_outside_band", Seq: r.Seq})
	case r.Reason == venue.RejectReasonUnknownInstrument || r.Reason == venue.RejectReasonUnknownSession:
		writeJSON(w, http.StatusNotFound, apiError{Error: "refused by the matcher: " + r.Reason.String(), Code: "not_found", Seq: r.Seq})
	default:
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: "refused by the matcher: " + r.Reason.String(), Code: "refused", Seq: r.Seq})
	}
}

func (o *Ops) handleStatus(w http.ResponseWriter, r *http.Request) {
	n, h := o.monitor.EventsHash()
	st := StatusInfo{Ready: o.ready.Load(), DurableSeq: o.cfg.Pipeline.Durable().Load(), EventsSinceStart: n,
		EventsHash: fmt.Sprintf("%016x", h), ScheduleEnabled: o.plan != nil, LastEndOfDay: o.lastEOD.Load()}
	if err := o.Halted(); err != nil {
		st.Ready, st.Halted = false, err.Error() // as /readyz says
	} else if o.cfg.Stalled != nil {
		st.Stalled = o.cfg.Stalled()
	}
	if o.cfg.Usage != nil {
		st.Capacity = capacityOf(o.cfg.Usage())
	}
	st.RefusedAtStart = o.cfg.RefusedAtStart
	if o.plan != nil {
		if tr, ok := o.nextToRun(o.schedulePosition()); ok {
			st.NextTransition = tr.String()
			if tr.Kind != schedule.EndOfDay && tr.Group >= 0 && tr.Group < len(o.cfg.Schedule.Groups) {
				// The group as /v1/phase names it.
				st.NextTransition = fmt.Sprintf("%s %s group %q at %s", tr.Day, tr.Kind, o.cfg.Schedule.Groups[tr.Group].Name,
					tr.At.Format(time.RFC3339Nano))
			}
		}
	}
	writeJSON(w, http.StatusOK, st)
}

func (o *Ops) handleInstruments(w http.ResponseWriter, r *http.Request) {
	listed := o.Instruments()
	out := make([]InstrumentInfo, 0, len(listed))
	for _, in := range listed {
		out = append(out, o.instrumentInfo(in))
	}
	writeJSON(w, http.StatusOK, out)
}

func (o *Ops) instrumentInfo(in config.Instrument) InstrumentInfo {
	st, _ := o.monitor.Instrument(in.ID)
	var day DayFigures
	if o.day != nil {
		day = o.day.DayFigures(in.ID)
	}
	price := func(ticks, qty int64) string {
		if qty == 0 {
			return ""
		}
		return string(decimal.FormatTicks(nil, ticks, in.Tick))
	}
	info := InstrumentInfo{ID: in.ID, Symbol: in.Symbol, Status: st.Status.String(), RefPrice: price(st.RefPriceTicks, st.RefPriceTicks),
		BandPercent: st.BandPercent, BandLow: price(st.BandLowTicks, 1), BandHigh: price(st.BandHighTicks, 1),
		LastPrice: price(day.LastPriceTicks, day.LastQty), LastQty: day.LastQty, Volume: day.Volume, Trades: day.Trades,
		PrevClose: price(day.PrevCloseTicks, day.PrevCloseTicks), Bid: price(st.BidTicks, st.BidQty), BidQty: st.BidQty,
		Ask: price(st.AskTicks, st.AskQty), AskQty: st.AskQty, RestingOrders: st.RestingOrders,
		BidQtyTotal: st.BidQtyTotal, AskQtyTotal: st.AskQtyTotal}
	if st.AuctionEndNs != 0 {
		info.Auction = AuctionKind(st.AuctionOf)
		info.AuctionEnd = time.Unix(0, st.AuctionEndNs).UTC().Format(time.RFC3339Nano)
	}
	return info
}

// AuctionKind names a volatility auction by the call it extends
// (InstrumentState.AuctionOf): "interruption" (of continuous trading),
// "opening call extension" or "closing call extension".
func AuctionKind(of venue.TradingStatus) string {
	switch of {
	case venue.TradingStatusOpeningCall:
		return "opening call extension"
	case venue.TradingStatusClosingCall:
		return "closing call extension"
	}
	return "interruption"
}

var instrumentActions = map[string]venue.TradingStatus{
	"halt": venue.TradingStatusHalted, "resume": venue.TradingStatusOpen, "close": venue.TradingStatusClosed}

func (o *Ops) handleInstrumentAction(w http.ResponseWriter, r *http.Request) {
	status, ok := instrumentActions[r.PathValue("action")]
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_action", "unknown instrument action %q: halt, resume or close", r.PathValue("action"))
		return
	}
	var id uint32
	if sym := r.PathValue("symbol"); sym != AllInstruments {
		in, ok := o.instrument(sym)
		if !ok {
			refuse(w, http.StatusNotFound, "unknown_instrument", "unknown instrument %q", sym)
			return
		}
		id = in.ID
	}
	reason, ok := o.readReason(w, r, "an instrument action takes only a reason; the instrument is in the path")
	if !ok {
		return
	}
	operator := operatorOf(r)
	if r.PathValue("action") == "resume" {
		o.resume(w, id, operator, reason)
		return
	}
	res, err := o.Do(Action{Kind: venue.OperatorActionTypeSetTradingStatus, Status: status, Instrument: id,
		Operator: operator, Reason: reason})
	if err == nil && res.Reason == venue.RejectReasonInvalidTransition {
		if id != 0 {
			refuseUnchanged(w, res.Seq, "%s is %s already", r.PathValue("symbol"), status)
		} else {
			refuseUnchanged(w, res.Seq, "every instrument is %s already", status)
		}
		return
	}
	o.answer(w, operator, res, err, nil)
}

// refuseUnchanged answers a status change the matcher refused as
// InvalidTransition (the instruments are there already), naming where they
// are: the generic answer, "the transition makes no sense in the current
// state", left the operator to look it up (README, "Operating the venue").
func refuseUnchanged(w http.ResponseWriter, seq uint64, format string, a ...any) {
	writeJSON(w, http.StatusConflict, apiError{Error: fmt.Sprintf(format, a...) + " (nothing changed)", Code: "invalid_transition", Seq: seq})
}

// add counts one of the commands of a call made of one per instrument into
// its answer: the last seq, and done if any was.
func (total *Result) add(res Result) {
	total.Seq = res.Seq
	if res.Reason == venue.RejectReasonNone {
		total.Reason = venue.RejectReasonNone
		total.Count += res.Count
	}
}

// resume lifts a halt: each instrument named (id 0: every one) returns to
// where it would be without the halt (resumeStatus): Closed when an
// operator had closed it, else the status of its schedule group's phase,
// the call in a call phase, so that a halt in a call ends in that call and
// its uncross comes at the scheduled time. An instrument that is not
// halted opens.
// One command per instrument, as a phase change is; for every instrument,
// those already where resuming would take them are left out.
func (o *Ops) resume(w http.ResponseWriter, id uint32, operator, reason string) {
	o.phaseMu.Lock()
	defer o.phaseMu.Unlock()
	if res, err := o.awaitPhaseChanges(o.cfg.Admin.CallTimeout.Duration); err != nil {
		// A phase change whose call timed out is not known applied yet:
		// where a halted instrument resumes to is not known either.
		o.answer(w, operator, res, err, nil)
		return
	}
	total := Result{Action: venue.OperatorActionTypeSetTradingStatus, Reason: venue.RejectReasonInvalidTransition}
	if id != 0 {
		total.Reason = venue.RejectReasonUnknownInstrument
	}
	for _, in := range o.Instruments() {
		if id != 0 && in.ID != id {
			continue
		}
		to := o.resumeStatus(in)
		if st, ok := o.monitor.Instrument(in.ID); id == 0 && ok && (st.Status == to || st.Status != venue.TradingStatusHalted) {
			// All lifts the halts: an instrument closed after its close or
			// in a call is left (it was opened), as is one already there;
			// neither is journaled as a refusal.
			continue
		}
		res, err := o.Do(Action{Kind: venue.OperatorActionTypeSetTradingStatus, Status: to, Instrument: in.ID,
			Operator: operator, Reason: reason})
		if err == nil && id != 0 && res.Reason == venue.RejectReasonInvalidTransition {
			refuseUnchanged(w, res.Seq, "%s is not halted and is %s already: nothing to resume", in.Symbol, to)
			return
		}
		if err != nil || id != 0 {
			o.answer(w, operator, res, err, nil)
			return
		}
		total.add(res)
	}
	if total.Reason == venue.RejectReasonInvalidTransition {
		refuseUnchanged(w, total.Seq, "no instrument is halted")
		return
	}
	o.answer(w, operator, total, nil, nil)
}

// handleBand moves an instrument's reference price and band.
func (o *Ops) handleBand(w http.ResponseWriter, r *http.Request) {
	in, ok := o.instrument(r.PathValue("symbol"))
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_instrument", "unknown instrument %q (a band is set one instrument at a time)", r.PathValue("symbol"))
		return
	}
	req, ok := o.readAction(w, r)
	if !ok {
		return
	}
	if req.Session != "" || req.Account != "" || req.Instrument != "" || req.Group != "" || req.Phase != "" {
		refuse(w, http.StatusBadRequest, "bad_body", "a band change takes a reason, ref_price and band_percent")
		return
	}
	ref, err := config.RefPriceTicks(req.RefPrice, in.TickSize, in.Tick)
	if err != nil {
		refuse(w, http.StatusBadRequest, "bad_price", "ref_price %v", err)
		return
	}
	if req.BandPercent <= 0 || req.BandPercent >= 100 {
		refuse(w, http.StatusBadRequest, "bad_band", "band_percent %d is outside (0, 100)", req.BandPercent)
		return
	}
	// The matcher refuses it too (InvalidPriceBand); said here with the figures.
	if _, high := core.BandTicks(ref, req.BandPercent); in.MaxQty > core.MaxQtyAt(high) {
		refuse(w, http.StatusBadRequest, "bad_band", "band_percent %d around ref_price %s reaches %d ticks, where max_qty %d is above the largest order notional, %d (price ticks x quantity); max_qty there is at most %d",
			req.BandPercent, req.RefPrice, high, in.MaxQty, int64(core.OrderNotionalMax), core.MaxQtyAt(high))
		return
	}
	operator := operatorOf(r)
	res, err := o.Do(Action{Kind: venue.OperatorActionTypeSetPriceBand, Instrument: in.ID, RefPriceTicks: ref,
		BandPercent: req.BandPercent, Operator: operator, Reason: req.Reason})
	o.answer(w, operator, res, err, nil)
}

func (o *Ops) handleCancel(w http.ResponseWriter, r *http.Request) {
	req, ok := o.readAction(w, r)
	if !ok {
		return
	}
	a := Action{Kind: venue.OperatorActionTypeMassCancel, Session: AnySession, Account: req.Account,
		Operator: operatorOf(r), Reason: req.Reason}
	if req.RefPrice != "" || req.BandPercent != 0 || req.Group != "" || req.Phase != "" {
		refuse(w, http.StatusBadRequest, "bad_body", "a cancel takes a reason and filters: session, account, instrument")
		return
	}
	if req.Session == "" && req.Account == "" && req.Instrument == "" {
		refuse(w, http.StatusBadRequest, "no_filter", "name a session, an account or an instrument (or several); instrument \"all\" cancels every order")
		return
	}
	if req.Session != "" {
		s, ok := o.orderSession(w, req.Session)
		if !ok {
			return
		}
		a.Session = s.Idx
	}
	if req.Instrument != "" && req.Instrument != AllInstruments {
		in, ok := o.instrument(req.Instrument)
		if !ok {
			refuse(w, http.StatusNotFound, "unknown_instrument", "unknown instrument %q", req.Instrument)
			return
		}
		a.Instrument = in.ID
	}
	res, err := o.Do(a)
	o.answer(w, a.Operator, res, err, nil)
}

func (o *Ops) handleEndOfDay(w http.ResponseWriter, r *http.Request) {
	reason, ok := o.readReason(w, r, "end of day takes only a reason")
	if !ok {
		return
	}
	operator := operatorOf(r)
	res, rep, err := o.EndOfDay(operator, reason)
	o.answer(w, operator, res, err, &rep)
}

var phases = map[string]schedule.Kind{"pre_open": schedule.PreOpen, "open": schedule.Open, "closing_call": schedule.ClosingCall,
	"close": schedule.Close}

// handlePhase moves a schedule group to a phase now, as its scheduled
// transition would: one command per instrument of the group. Instruments
// already in that phase's status are left alone; when all are, the call is
// a conflict. Done, it supersedes the group's scheduled transitions of the
// day up to that phase (operatorSetPhase).
//
// The group's phase (phases.json: where a resume takes a halted
// instrument) and its progress in the day (schedule.state) are recorded
// once every command of the change is answered and durable, not before: a
// change whose command failed (the venue halted, the ring busy, a timeout,
// a cluster leader deposed) recorded a phase nothing had journaled, which a
// resume and a restart's catch-up then followed (docs/ARCHITECTURE.md,
// "Operations: the control plane and the trading day"); one that failed
// partway, after commands answered and durable, is recorded as the journal
// has it, as a cluster's follower records it (phaseRecordedPartly). A change whose call
// timed out is published whole and recorded once applied, as the call
// answered then would have recorded it (phaseTimedOut); one awaited so is
// recorded before this one is checked.
func (o *Ops) handlePhase(w http.ResponseWriter, r *http.Request) {
	req, ok := o.readAction(w, r)
	if !ok {
		return
	}
	kind, ok := phases[req.Phase]
	if !ok || req.Session != "" || req.Account != "" || req.Instrument != "" || req.RefPrice != "" || req.BandPercent != 0 {
		refuse(w, http.StatusBadRequest, "bad_body", "a phase change takes a reason, a group and a phase: pre_open, open, closing_call or close (end of day: POST /v1/eod)")
		return
	}
	group := -1
	for g, grp := range o.cfg.Schedule.Groups {
		if grp.Name == req.Group {
			group = g
		}
	}
	if !o.cfg.Schedule.Enabled || group < 0 {
		refuse(w, http.StatusNotFound, "unknown_group", "no schedule group %q ([schedule] enabled with [[schedule.group]])", req.Group)
		return
	}
	operator := operatorOf(r)
	total := Result{Action: venue.OperatorActionTypeSetPhaseStatus, Reason: venue.RejectReasonInvalidTransition}
	o.phaseMu.Lock()
	defer o.phaseMu.Unlock()
	if res, err := o.awaitPhaseChanges(o.cfg.Admin.CallTimeout.Duration); err != nil {
		// One sent before is not known applied yet: where the groups
		// stand, which this call is checked against, is not known either.
		o.answer(w, operator, res, err, nil)
		return
	}
	was := o.groupPhase(group)
	at := o.cfg.Now()
	var members []config.Instrument
	for _, in := range o.Instruments() {
		if gi, err := o.groupOf(&in); err == nil && gi == group {
			members = append(members, in)
		}
	}
	var halted, moved []string
	for i, in := range members {
		res, late, err := o.doLate(Action{Kind: venue.OperatorActionTypeSetPhaseStatus, Status: statusOf(kind), Instrument: in.ID,
			Operator: operator, Reason: req.Reason})
		if errors.Is(err, ErrTimeout) {
			// Answered now, the call would be "nothing changed" unless this
			// command or a later one moves its instrument.
			a := awaitedPhase{seq: res.Seq, group: group, kind: kind, at: at, results: []<-chan Result{late},
				noOpUnless: len(moved) == 0 && was == statusOf(kind)}
			o.phaseTimedOut(w, operator, req, a, members[i+1:], append(moved, in.Symbol))
			return
		}
		if err != nil {
			if i > 0 && (was != statusOf(kind) || len(moved) > 0) {
				// Failed partway: the commands answered before are in the
				// journal, from which a cluster's follower records the
				// change (server/scheduleprogress.go), as a call answered
				// done would have: recorded here too, so that this venue
				// and a new leader agree on the group's phase.
				o.setPhase(group, statusOf(kind))
				o.operatorSetPhase(group, kind, at)
				o.answer(w, operator, res, phaseRecordedPartly(err, req.Group, req.Phase, moved), nil)
				return
			}
			o.answer(w, operator, res, phaseNotRecorded(err, req.Group, req.Phase), nil)
			return
		}
		if res.Reason == venue.RejectReasonNone {
			moved = append(moved, in.Symbol)
		}
		if res.Reason == venue.RejectReasonInstrumentHalted {
			halted = append(halted, in.Symbol)
		}
		total.add(res)
	}
	if total.Reason == venue.RejectReasonInvalidTransition && was == statusOf(kind) {
		// Nothing changed: say where the group is, and which of its
		// instruments an operator halted, rather than that the transition
		// "makes no sense".
		msg := fmt.Sprintf("group %q is in its %s phase already (nothing changed)", req.Group, req.Phase)
		if len(halted) > 0 {
			msg = fmt.Sprintf("group %q is in its %s phase already, %s halted (nothing changed)", req.Group, req.Phase, strings.Join(halted, ", "))
		}
		writeJSON(w, http.StatusConflict, apiError{Error: msg, Code: "invalid_transition", Seq: total.Seq})
		return
	}
	if total.Reason == venue.RejectReasonInvalidTransition {
		// The group's phase moved (where a resume takes its halted
		// instruments: README, "Operating the venue"), though none of its
		// instruments did: done, not a conflict that says nothing changed.
		total.Reason = venue.RejectReasonNone
	}
	// Every command is durable: the group stands at this phase in its day
	// (where a resume takes its halted instruments), and the schedule's
	// transitions up to it are passed over (an early close stays closed).
	o.setPhase(group, statusOf(kind))
	o.operatorSetPhase(group, kind, at)
	writeJSON(w, http.StatusOK, ActionResponse{Seq: total.Seq, Action: total.Action.String(), Operator: operator,
		Result: "done", Count: total.Count, StayHalted: halted})
}

// phaseTimedOut answers a phase change whose command a.seq, of instrument
// moving, timed out (published, not yet applied and durable, or applied
// and not yet durable): the matcher applies it once the journal has it,
// whatever the call is answered. The commands of the group's instruments
// after it (rest) are published too, without waiting, so that the whole
// group moves once the journal has them, and the group's phase and its
// place in the day are recorded then, as for a call answered done
// (awaitPhase), unless the change turns out to be one a call answered would
// have found changed nothing (a.noOpUnless: their results say); a phase
// change or a resume meanwhile sends nothing until then. One of the rest
// that cannot be published (the ring full, the venue halted) leaves the
// others unpublished, and those published are awaited and recorded alike,
// as a change that failed partway is (phaseRecordedPartly).
// docs/ARCHITECTURE.md, "Operations: the control plane and the trading
// day".
func (o *Ops) phaseTimedOut(w http.ResponseWriter, operator string, req actionRequest, a awaitedPhase, rest []config.Instrument,
	moving []string) {
	for _, in := range rest {
		s, result, err := o.publish(Action{Kind: venue.OperatorActionTypeSetPhaseStatus, Status: statusOf(a.kind), Instrument: in.ID,
			Operator: operator, Reason: req.Reason}, true)
		if err != nil {
			// Those published are applied once the journal has them, and a
			// cluster's follower records the change from them: recorded
			// then here too, as a change that failed partway
			// (phaseRecordedPartly).
			o.awaitPhase(a)
			o.answer(w, operator, Result{Seq: a.seq, Action: venue.OperatorActionTypeSetPhaseStatus},
				partlyDone{fmt.Errorf("%w; the phase change of group %q to %s is published through seq %d (%s), the group's other "+
					"instruments not: its phase is recorded as %s once the journal has them, as a cluster's follower records it, "+
					"unless they change nothing (a phase change or a resume meanwhile sends nothing): repeat the change then",
					err, req.Group, req.Phase, a.seq, strings.Join(moving, ", "), req.Phase)}, nil)
			return
		}
		a.results = append(a.results, result)
		a.seq = s
		moving = append(moving, in.Symbol)
	}
	o.awaitPhase(a)
	o.answer(w, operator, Result{Seq: a.seq, Action: venue.OperatorActionTypeSetPhaseStatus},
		fmt.Errorf("%w: the phase change of group %q to %s is published through seq %d; the group's instruments move and its "+
			"phase is recorded once the journal has them (a phase change or a resume meanwhile sends nothing)",
			ErrTimeout, req.Group, req.Phase, a.seq), nil)
}

// phaseNotRecorded is the error of a phase change whose command failed
// (err) before any other was answered and durable, or after those that
// were changed nothing (the group in that phase already): the group's
// phase is not recorded as changed, and a resume and the schedule go by
// the phase recorded before until the change is repeated and done.
func phaseNotRecorded(err error, group, phase string) error {
	return fmt.Errorf("%w; group %q's phase is not recorded as %s (a resume and the schedule keep the phase recorded before): "+
		"repeat the change once the venue answers", err, group, phase)
}

// phaseRecordedPartly is the error of a phase change whose command failed
// (err) after others were answered and durable (their instruments: moved,
// maybe none, the group not in that phase before): the journal has the
// change, and the group's phase is recorded as the call's, as a cluster's
// follower records it from the journal; the group's other instruments did
// not move.
func phaseRecordedPartly(err error, group, phase string, moved []string) error {
	what := "none of its instruments moved before it (each was there already)"
	if len(moved) > 0 {
		what = strings.Join(moved, ", ") + " moved to " + phase + " before it"
	}
	return partlyDone{fmt.Errorf("%w; %s, the group's other instruments did not; group %q's phase is recorded as %s, as the "+
		"journal has it (a resume takes a halted instrument there, and the schedule passes over the day's transitions up to it): "+
		"repeat the change once the venue answers", err, what, group, phase)}
}

// partlyDone is the error of a call made of several commands, some of
// which were done before one failed: it names them.
type partlyDone struct{ error }

func (p partlyDone) Unwrap() error { return p.error }

func (o *Ops) handleSessions(w http.ResponseWriter, r *http.Request) {
	out := make([]SessionInfo, 0, len(o.cfg.Sessions))
	for _, s := range o.cfg.Sessions {
		info := SessionInfo{CompID: s.CompID, OpenOrders: o.monitor.SessionOrders(s.Idx), OpenOrdersMax: s.OpenOrdersMax, DropCopy: s.DropCopy}
		if sc := o.cfg.SessionControl; sc != nil {
			st := sc.SessionState(s.Idx)
			info.LoggedOn, info.Disabled, info.Address = st.LoggedOn, st.Disabled, st.Address
			info.NextSenderSeq, info.NextTargetSeq = st.NextSenderSeq, st.NextTargetSeq
			info.MessagesPerSecond, info.OrdersPerSecond, info.CancelsPerSecond = st.MessagesPerSecond, st.OrdersPerSecond, st.CancelsPerSecond
		}
		out = append(out, info)
	}
	writeJSON(w, http.StatusOK, out)
}

var sessionActions = map[string]venue.OperatorActionType{"logout": venue.OperatorActionTypeSessionLogout,
	"disable": venue.OperatorActionTypeSessionDisable, "enable": venue.OperatorActionTypeSessionEnable}

func (o *Ops) handleSessionAction(w http.ResponseWriter, r *http.Request) {
	kind, ok := sessionActions[r.PathValue("action")]
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_action", "unknown session action %q: logout, disable or enable", r.PathValue("action"))
		return
	}
	s, ok := o.byCompID[r.PathValue("comp_id")]
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_session", "unknown session %q", r.PathValue("comp_id"))
		return
	}
	sc := o.cfg.SessionControl
	if sc == nil {
		refuse(w, http.StatusServiceUnavailable, "no_sessions", "session control is not available")
		return
	}
	reason, ok := o.readReason(w, r, "a session action takes only a reason; the session is in the path")
	if !ok {
		return
	}
	operator := operatorOf(r)
	mu := o.sessionMu[s.Idx]
	mu.Lock()
	defer mu.Unlock()
	if res, err := o.awaitSessionActions(s.Idx, o.cfg.Admin.CallTimeout.Duration); err != nil {
		// One sent before is not known applied yet: the session's state,
		// which this call is checked against, is not known either.
		o.answer(w, operator, res, err, nil)
		return
	}
	st := sc.SessionState(s.Idx)
	switch {
	case kind == venue.OperatorActionTypeSessionLogout && !st.LoggedOn:
		refuse(w, http.StatusConflict, "invalid_transition", "session %s is not logged on (nothing changed)", s.CompID)
		return
	case kind == venue.OperatorActionTypeSessionLogout && st.LoggingOut:
		// Sent a Logout already, its connection closing: a second logout
		// was journaled and answered done, and sent the client another.
		refuse(w, http.StatusConflict, "invalid_transition", "session %s is being logged out already (nothing changed)", s.CompID)
		return
	case kind == venue.OperatorActionTypeSessionDisable && st.Disabled:
		refuse(w, http.StatusConflict, "invalid_transition", "session %s is already disabled (nothing changed)", s.CompID)
		return
	case kind == venue.OperatorActionTypeSessionEnable && !st.Disabled:
		refuse(w, http.StatusConflict, "invalid_transition", "session %s is not disabled (nothing changed)", s.CompID)
		return
	}
	if kind != venue.OperatorActionTypeSessionLogout {
		// A disable or enable changes a record kept beside the snapshots
		// (recordGate), once its command is durable.
		o.recordGate.RLock()
		defer o.recordGate.RUnlock()
	}
	res, late, err := o.doLate(Action{Kind: kind, Session: s.Idx, Operator: operator, Reason: reason})
	if err == nil && res.Reason == venue.RejectReasonNone {
		// Journaled and durable: now act on the connection.
		o.carryOut(s.Idx, kind)
	}
	if errors.Is(err, ErrTimeout) {
		// Published: the matcher applies it once the journal has it, and
		// the venue carries it out then, however this call ended.
		o.awaitAction(awaitedAction{seq: res.Seq, session: s.Idx, compID: s.CompID, kind: kind, result: late})
	}
	o.answer(w, operator, res, err, nil)
}

// carryOut acts on session idx's connection for a session action done
// (journaled, durable and applied).
func (o *Ops) carryOut(idx uint16, kind venue.OperatorActionType) {
	sc := o.cfg.SessionControl
	if sc == nil {
		return
	}
	switch kind {
	case venue.OperatorActionTypeSessionLogout:
		sc.Logout(idx)
	case venue.OperatorActionTypeSessionDisable:
		sc.SetDisabled(idx, true)
	case venue.OperatorActionTypeSessionEnable:
		sc.SetDisabled(idx, false)
	}
}
