package ops

import (
	"html/template"
	"net"
	"net/http"
	"strings"

	"github.com/fixvenue/fixvenue/config"
)

// notLeaderPage is what a browser opening the console on a cluster node
// that does not lead is shown, instead of the API's JSON: what the node
// is, which node leads and a link to its console when the configuration
// names its admin address, and a reload every few seconds, so that the
// console appears once this node leads (README, "Cluster: three
// replicas").
var notLeaderPage = template.Must(template.New("notleader").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>fixvenue: this node does not lead</title></head>
<body><h1>This cluster node does not lead</h1>
<p>{{.Text}}</p>
{{if .Link}}<p><a href="{{.Link}}">Open the console on the leader ({{.Addr}})</a></p>{{end}}
<p>Only the leader serves the console and the admin API. This page reloads every 5 seconds.</p>
</body></html>
`))

// answerNotLeader writes e, a 503 not_leader: as JSON to the API's callers,
// as notLeaderPage to a browser asking a console page (a GET outside /v1/
// that accepts HTML).
func answerNotLeader(w http.ResponseWriter, r *http.Request, e apiError) {
	if r.Method != http.MethodGet || strings.HasPrefix(r.URL.Path, "/v1/") || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeJSON(w, http.StatusServiceUnavailable, e)
		return
	}
	page := struct{ Text, Addr, Link string }{Text: e.Error, Addr: browserAddr(r, e.LeaderAdminAddr)}
	if page.Addr != "" {
		scheme := "http://"
		if r.TLS != nil { // as this node's: the nodes are configured alike
			scheme = "https://"
		}
		page.Link = scheme + page.Addr + r.URL.EscapedPath()
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// As the console's pages (console.Console.ServeHTTP): no script, no
	// style, never framed, nothing of the page's path sent elsewhere.
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = notLeaderPage.Execute(w, page)
}

// browserAddr is the leader's admin address for a link on the page: addr,
// or, when its host is still 0.0.0.0, :: or none (the configuration names
// no host the leader is reached at: config.ClusterPeer.AdminReachedAt),
// the host the browser reached this node at with the leader's port, which
// is where the leader is when the nodes share a host. A link to 0.0.0.0
// leads nowhere.
func browserAddr(r *http.Request, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !config.UnspecifiedHost(host) {
		return addr
	}
	reached := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		reached = h
	}
	if reached == "" || config.UnspecifiedHost(strings.Trim(reached, "[]")) {
		return ""
	}
	return net.JoinHostPort(strings.Trim(reached, "[]"), port)
}
