package ops

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fixvenue/fixvenue/config"
)

// TestAuthorize: reads are anonymous only on a loopback listener called by
// a loopback name; a read
// token reads, never changes; the sign-in cookie admits reads only; with
// no operator token configured every change is refused.
func TestAuthorize(t *testing.T) {
	tokens := []config.AdminToken{{Operator: "alice", SHA256: HashToken("op-token")},
		{Operator: "carol", SHA256: HashToken("read-token"), Role: config.RoleRead}}
	req := func(header, cookie string) *http.Request {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9465/market", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: TokenCookie, Value: cookie})
		}
		return r
	}
	for _, c := range []struct {
		name           string
		loopback       bool
		tokens         []config.AdminToken
		header, cookie string
		operate        bool
		status         int
		operator       string
	}{
		{"loopback anonymous read", true, tokens, "", "", false, 0, ""},
		{"remote anonymous read", false, tokens, "", "", false, 401, ""},
		{"remote read token", false, tokens, "Bearer read-token", "", false, 0, "carol"},
		{"remote read cookie", false, tokens, "", "read-token", false, 0, "carol"},
		{"remote forged cookie", false, tokens, "", "forged", false, 401, ""},
		{"loopback forged header", true, tokens, "Bearer forged", "", false, 401, ""},
		{"change without token", true, tokens, "", "", true, 401, ""},
		{"change with cookie only", true, tokens, "", "op-token", true, 401, ""},
		{"change with read token", true, tokens, "Bearer read-token", "", true, 403, ""},
		{"change with operator token", false, tokens, "Bearer op-token", "", true, 0, "alice"},
		{"scheme in lower case", false, tokens, "bearer op-token", "", true, 0, "alice"},
		{"scheme in capitals", false, tokens, "BEARER op-token", "", true, 0, "alice"},
		{"another scheme", false, tokens, "Basic op-token", "", true, 401, ""},
		{"no space after the scheme", false, tokens, "Bearerop-token", "", true, 401, ""},
		{"change with no operator configured", true, tokens[1:], "Bearer read-token", "", true, 403, ""},
	} {
		o := &Ops{cfg: Config{Admin: config.Admin{Tokens: c.tokens}}, loopback: c.loopback}
		op, status, code, reason := o.Authorize(req(c.header, c.cookie), c.operate)
		if status != c.status || op != c.operator || (status != 0 && (code == "" || reason == "")) {
			t.Errorf("%s: operator %q status %d (%s: %s), want %q %d", c.name, op, status, code, reason, c.operator, c.status)
		}
	}
	// An anonymous read on loopback is by a loopback name only: a page
	// elsewhere whose name resolves to loopback (DNS rebinding) is not.
	o := &Ops{cfg: Config{Admin: config.Admin{Tokens: tokens}}, loopback: true}
	for host, want := range map[string]int{"127.0.0.1:9465": 0, "localhost:9465": 0, "LOCALHOST": 0, "[::1]:9465": 0,
		"": 0, "attacker.example:9465": 401, "attacker.example": 401, "127.0.0.1.attacker.example": 401} {
		r := req("", "")
		r.Host = host
		if _, status, _, reason := o.Authorize(r, false); status != want {
			t.Errorf("anonymous read by %s: status %d (%s), want %d", host, status, reason, want)
		}
	}
	r := req("Bearer read-token", "")
	r.Host = "attacker.example:9465"
	if op, status, _, _ := o.Authorize(r, false); status != 0 || op != "carol" {
		t.Errorf("a read token by another name: %q %d", op, status)
	}
}

// TestAuthorizeChange: a change asked for outside the admin API (a cluster
// node's leadership transfer) is admitted as the API admits one: an
// operator token in the Authorization header, never a read token or the
// sign-in cookie, and nothing with no operator token configured.
func TestAuthorizeChange(t *testing.T) {
	tokens := []config.AdminToken{{Operator: "alice", SHA256: HashToken("op-token")},
		{Operator: "carol", SHA256: HashToken("read-token"), Role: config.RoleRead}}
	for _, c := range []struct {
		name     string
		tokens   []config.AdminToken
		header   string
		cookie   string
		status   int
		code     string
		operator string
	}{
		{"operator token", tokens, "Bearer op-token", "", 0, "", "alice"},
		{"no token", tokens, "", "", 401, "unauthorized", ""},
		{"unknown token", tokens, "Bearer forged", "", 401, "unauthorized", ""},
		{"cookie only", tokens, "", "op-token", 401, "unauthorized", ""},
		{"read token", tokens, "Bearer read-token", "", 403, "read_only_token", ""},
		{"no operator configured", tokens[1:], "Bearer read-token", "", 403, "no_operator_token", ""},
		{"nothing configured", nil, "Bearer op-token", "", 403, "no_operator_token", ""},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:9711/cluster/transfer?to=2", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: TokenCookie, Value: c.cookie})
		}
		a := config.Admin{Tokens: c.tokens}
		op, status, code, reason := AuthorizeChange(&a, r)
		if status != c.status || code != c.code || op != c.operator || (status != 0 && reason == "") {
			t.Errorf("%s: operator %q status %d (%s: %s), want %q %d %s", c.name, op, status, code, reason, c.operator, c.status, c.code)
		}
	}
}
