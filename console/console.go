package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/latency"
	"github.com/fixvenue/fixvenue/marketdata"
	"github.com/fixvenue/fixvenue/ops"
)

//go:embed web
var webFS embed.FS

// Config wires a Console into a venue.
type Config struct {
	Settings config.Console
	// Ops is the control plane: its Monitor (statuses, last trade, best
	// bid and offer, resting orders), the sessions, and Authorize.
	Ops *ops.Ops
	// Depth is the market data depth cache (the ladder); nil when market
	// data is off.
	Depth *marketdata.DepthCache
	// Events hands out committed events (durable and applied) for the
	// tape: trades, chart, operator commands.
	Events marketdata.EventSource
	// Tape is the tape the venue rebuilt at start-up from the journal
	// (NewTape, Restore, Replay); nil: a new one, empty until events come.
	Tape *Tape
	// OrderToER and OrderToFeed are the venue's latency recorders (nil: not measured).
	OrderToER, OrderToFeed *latency.Recorder
	// SecureCookies marks the sign-in cookie Secure (the listener has TLS).
	SecureCookies bool
	Logger        *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Console serves the operators' web pages (see doc.go).
type Console struct {
	cfg   Config
	log   *slog.Logger
	tape  *Tape
	mux   *http.ServeMux
	pages map[string]*template.Template

	bySymbol map[string]config.Instrument
	byCompID map[string]ops.Session

	// payloads caches each stream topic's last update, shared by every
	// browser watching it (bounded: one entry per topic, and topics are
	// the pages and the configured instruments).
	payloadMu sync.Mutex
	payloads  map[string]*payload

	rates rateSampler

	streams atomic.Int64 // event streams open now
	dropped atomic.Int64 // streams ended because a browser stopped reading
	refused atomic.Int64 // streams refused at streams_max (only the browser was told)
	stop    chan struct{}
	once    sync.Once
}

// Pages of the console, in the order of its navigation bar.
var pageNames = []string{"market", "book", "sessions", "session", "latency", "operations", "notfound", "signin"}

// New builds the console. Run must be started for the tape.
func New(cfg Config) (*Console, error) {
	if cfg.Ops == nil {
		return nil, errors.New("console: Ops is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := cfg.Settings
	if s.UpdatesPerSecond < 1 || s.StreamsMax < 1 || s.WriteTimeout.Duration <= 0 {
		return nil, fmt.Errorf("console: updates_per_second, streams_max and write_timeout must be positive")
	}
	c := &Console{cfg: cfg, log: cfg.Logger, bySymbol: map[string]config.Instrument{}, byCompID: map[string]ops.Session{},
		payloads: map[string]*payload{}, pages: map[string]*template.Template{}, stop: make(chan struct{})}
	var ids []uint32
	for _, in := range cfg.Ops.Instruments() {
		c.bySymbol[in.Symbol] = in
		ids = append(ids, in.ID)
	}
	for _, s := range cfg.Ops.Sessions() {
		c.byCompID[s.CompID] = s
	}
	c.tape = cfg.Tape
	if c.tape == nil {
		c.tape = NewTape(ids, nil)
	}
	c.rates.last = map[uint16]rateSample{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(template.FuncMap{}).ParseFS(webFS, "web/layout.html", "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: page %s: %w", name, err)
		}
		c.pages[name] = t
	}
	static, err := fs.Sub(webFS, "web/static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.Handle("GET /static/", http.StripPrefix("/static/", c.staticHandler(static)))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/market", http.StatusFound) })
	m.HandleFunc("GET /signin", c.handleSignInPage)
	m.HandleFunc("POST /signin", c.handleSignIn)
	m.HandleFunc("POST /signout", c.handleSignOut)
	m.HandleFunc("GET /market", c.read(c.handleMarket))
	m.HandleFunc("GET /market/{symbol}", c.read(c.handleBook))
	m.HandleFunc("GET /sessions", c.read(c.handleSessions))
	m.HandleFunc("GET /sessions/{comp_id}", c.read(c.handleSession))
	m.HandleFunc("GET /latency", c.read(c.handleLatency))
	m.HandleFunc("GET /operations", c.read(c.handleOperations))
	m.HandleFunc("GET /stream/{topics}", c.read(c.handleStream))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A page called with another method is 405 with Allow, as the
		// admin API's endpoints are (README "Operating the venue"), not a
		// "no such page" for a page that exists.
		if allow := c.allowedMethods(r); allow != "" {
			w.Header().Set("Allow", allow)
			c.render(w, r, http.StatusMethodNotAllowed, "notfound", pageData{Title: "Method not allowed",
				Message: r.Method + " " + r.URL.Path + " is not allowed: " + allow})
			return
		}
		c.notFound(w, r, "no such page: "+r.URL.Path)
	})
	c.mux = m
	return c, nil
}

// allowedMethods lists the methods the console serves at r's path ("":
// none, no such page).
func (c *Console) allowedMethods(r *http.Request) string {
	allow := ""
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := c.mux.Handler(probe); pattern != "/" && pattern != "" {
			if allow != "" {
				allow += ", "
			}
			allow += m
		}
	}
	return allow
}

// staticHandler serves the embedded JavaScript and CSS, files only: a
// directory or a missing file is the 404 page, not a listing.
func (c *Console) staticHandler(static fs.FS) http.Handler {
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, err := fs.Stat(static, strings.TrimSuffix(r.URL.Path, "/")); err != nil || st.IsDir() {
			c.notFound(w, r, "no such page: /static/"+r.URL.Path)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the console's pages and streams.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// The pages load only their own script and style, and are never framed.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	// A page's URL goes to no other site; a form posted to the console
	// itself (the sign-in, the sign-out) keeps its Origin, which
	// ops.CrossOrigin checks where the browser sends no Sec-Fetch-Site
	// (plain HTTP by a name that is not loopback's): under no-referrer its
	// Origin is "null", and the console's own sign-in was refused.
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// Run consumes committed events for the tape until the venue stops.
func (c *Console) Run() error {
	if c.cfg.Events == nil {
		return nil
	}
	return c.tape.Run(c.cfg.Events)
}

// Close ends the event streams.
func (c *Console) Close() { c.once.Do(func() { close(c.stop) }) }

// Streams returns the event streams open now and those dropped since start
// because their browser stopped reading.
func (c *Console) Streams() (open, dropped int64) { return c.streams.Load(), c.dropped.Load() }

// StreamsRefused returns how many streams were refused at streams_max.
func (c *Console) StreamsRefused() int64 { return c.refused.Load() }

// read admits a read: anonymous on a loopback listener, else a read or
// operator token (header or the sign-in cookie).
func (c *Console) read(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, status, _, reason := c.cfg.Ops.Authorize(r, false); status != 0 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fixvenue"`)
			// Back to the path as the browser sent it: decoded, the book of
			// EUR/USD (/market/EUR%2FUSD) would be /market/EUR/USD, no page,
			// and of A%2FB the book of A/B.
			c.render(w, r, status, "signin", pageData{Title: "Sign in", Message: reason, Next: r.URL.EscapedPath()})
			return
		}
		next(w, r)
	}
}

// pageData is what every page template gets.
type pageData struct {
	Title   string
	Page    string // the navigation entry to mark
	Topic   string // the stream the page follows ("" for none)
	Message string
	Next    string
	Symbol  string
	CompID  string
	Init    any // the page's first update, as its stream sends it
	Halted  string
	// SignedIn: the request carries the sign-in's cookie, so the page
	// offers to sign out (the cookie is HttpOnly: nothing else clears it
	// but the browser's end).
	SignedIn bool
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, d pageData) {
	if _, err := r.Cookie(ops.TokenCookie); err == nil {
		d.SignedIn = true
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.cfg.Ops.Halted(); err != nil {
		d.Halted = err.Error()
	}
	if err := c.pages[name].Execute(w, d); err != nil {
		c.log.Warn("console: page not rendered", "page", name, "err", err)
	}
}

func (c *Console) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	c.render(w, r, http.StatusNotFound, "notfound", pageData{Title: "Not found", Message: msg})
}

func (c *Console) handleMarket(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "market", pageData{Title: "Market", Page: "market", Topic: "market", Init: c.marketView()})
}

func (c *Console) handleBook(w http.ResponseWriter, r *http.Request) {
	in, ok := c.instrument(r.PathValue("symbol"))
	if !ok {
		c.notFound(w, r, fmt.Sprintf("no instrument %q", r.PathValue("symbol")))
		return
	}
	c.render(w, r, http.StatusOK, "book", pageData{Title: in.Symbol, Page: "market", Topic: "book-" + in.Symbol, Symbol: in.Symbol,
		Init: c.bookView(in)})
}

func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "sessions", pageData{Title: "Sessions", Page: "sessions", Topic: "sessions", Init: c.sessionsView()})
}

func (c *Console) handleSession(w http.ResponseWriter, r *http.Request) {
	s, ok := c.byCompID[r.PathValue("comp_id")]
	if !ok {
		c.notFound(w, r, fmt.Sprintf("no session %q", r.PathValue("comp_id")))
		return
	}
	c.render(w, r, http.StatusOK, "session", pageData{Title: s.CompID, Page: "sessions", Topic: "sessions", CompID: s.CompID,
		Init: c.sessionsView()})
}

func (c *Console) handleLatency(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "latency", pageData{Title: "Latency", Page: "latency", Topic: "latency", Init: c.latencyView()})
}

func (c *Console) handleOperations(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "operations", pageData{Title: "Operations", Page: "operations", Topic: "operations",
		Init: c.operationsView()})
}

// signInMax bounds the sign-in form's body.
const signInMax = 4 << 10

func (c *Console) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "signin", pageData{Title: "Sign in", Next: safeNext(r.URL.Query().Get("next"))})
}

// handleSignIn checks a token and keeps it in an HttpOnly cookie, which
// admits reads only (changes need the token in the Authorization header).
func (c *Console) handleSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, signInMax)
	if err := r.ParseForm(); err != nil {
		// A form over the bound is named as such (413), as the admin API
		// names admin.body_bytes_max (README "Operating the venue").
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			c.render(w, r, http.StatusRequestEntityTooLarge, "signin", pageData{Title: "Sign in",
				Message: fmt.Sprintf("the form is over %d bytes: a token is far shorter", signInMax)})
			return
		}
		c.render(w, r, http.StatusBadRequest, "signin", pageData{Title: "Sign in", Message: "the form could not be read: " + err.Error()})
		return
	}
	// A token pasted from a file or a terminal may bring a space or a line
	// end at either end, which no token holds (hash-token refuses one: an
	// HTTP header loses them), so the form's are not the token's.
	token, next := strings.TrimSpace(r.PostForm.Get("token")), safeNext(r.PostForm.Get("next"))
	probe := r.Clone(r.Context())
	probe.Header = http.Header{"Authorization": {"Bearer " + token}}
	if _, status, _, reason := c.cfg.Ops.Authorize(probe, false); status != 0 || token == "" {
		if reason == "" {
			reason = "give a token"
		}
		c.render(w, r, http.StatusUnauthorized, "signin", pageData{Title: "Sign in", Message: reason, Next: next})
		return
	}
	cookie := &http.Cookie{Name: ops.TokenCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: c.cfg.SecureCookies, SameSite: http.SameSiteStrictMode}
	if cookie.Valid() != nil {
		// http.SetCookie drops the bytes a cookie cannot carry: the cookie
		// would hold another token, and every page after the sign-in would
		// refuse it.
		c.render(w, r, http.StatusBadRequest, "signin", pageData{Title: "Sign in", Next: next,
			Message: `this token holds a character a cookie cannot carry (a double quote, ';', '\', a control character or one ` +
				`outside ASCII): the console cannot keep it; send it in an Authorization header, or use another token`})
		return
	}
	http.SetCookie(w, cookie)
	// The answer carries the token (its cookie): no cache keeps it.
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleSignOut drops the sign-in's cookie: an operator leaving a shared
// workstation, who could not clear an HttpOnly cookie, left the console
// readable to the next user until the browser ended. The browser is sent
// to the sign-in page (where a loopback listener's pages need no token,
// the console still reads without one).
func (c *Console) handleSignOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: ops.TokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: c.cfg.SecureCookies, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/signin?next=/market", http.StatusSeeOther)
}

// safeNext keeps a redirect on this site: a path of this host, never
// "//host" or "/\\host", which a browser takes for another site. A control
// character or a space refuses the path too: http.Redirect passes it on,
// and a browser drops tabs and line breaks from a URL before it reads it,
// so "/\t/host" is "//host" to it.
func safeNext(p string) string {
	if len(p) < 1 || p[0] != '/' || (len(p) > 1 && (p[1] == '/' || p[1] == '\\')) ||
		strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "/market"
	}
	return p
}

// instrument finds a listed instrument by symbol: a configured one, or
// one added while the venue runs (the control plane learns it from its
// InstrumentAdded event).
func (c *Console) instrument(symbol string) (config.Instrument, bool) {
	if in, ok := c.bySymbol[symbol]; ok {
		return in, true
	}
	return c.cfg.Ops.Instrument(symbol)
}
