package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/gateway"
	"github.com/fixvenue/fixvenue/ops"
)

// Environment variables the admin CLI reads when the flags are not given.
const (
	adminAddrEnv  = "FIXVENUE_ADMIN_ADDR"
	adminTokenEnv = "FIXVENUE_ADMIN_TOKEN"
)

const adminUsage = `usage: fixvenue admin <command> [options]

commands (README "Operating the venue"):
  status                              venue status, next scheduled transition, last end of day since the start
  instruments                         instruments: status, last trade, best bid and offer, resting orders
  sessions                            sessions: logged on, address, sequence numbers, open orders against their bound (open_orders_max), kind (order or drop-copy)
  orders COMPID [--limit N]           a session's open orders by OrderID (the first N, at most 1000): instrument, side, price, leaves
  halt|resume|close SYMBOL|all --reason R
  cancel [--session C] [--account A] [--instrument S|all] --reason R
  cancel-order --order-id N [--session C] | --session C --cl-ord-id ID --reason R
                                      cancel one order for its owner (by its OrderID, or a ClOrdID it had)
  band SYMBOL --ref-price P --band-percent N --reason R
                                      move the reference price and price band
  instrument add SYMBOL --tick-size T --lot-size L --min-qty N --max-qty M --ref-price P --band-percent B
             [--id ID] [--status open|halted|closed] [--group G] --reason R
                                      list a new instrument now, without a restart
  phase GROUP pre_open|open|closing_call|close --reason R
                                      move a schedule group to a phase now
  eod --reason R                      end of day now (expire DAY orders, snapshot, archive)
  logout|disable|enable COMPID --reason R
  risk show [--session C|--account A] each session's and account's limits, kill switch and figures (or one's)
  risk kill|reset --session C|--account A --reason R
                                      turn a kill switch on (cancelling the orders) or off
  risk limits --session C|--account A --limit NAME --value N|none [--instrument S] --reason R
                                      change one limit (fixvenue risk … is the same command)
  hash-token [TOKEN]                  print the sha256 for [[admin.token]] (reads stdin without TOKEN)

Every command but hash-token takes --addr A (host:port, or an http:// or https:// URL of a host),
--token T, --json and --timeout D, and for https (--tls, or an https:// --addr) [--ca-file F]
[--cert-file F --key-file F].
Without --addr the address is $FIXVENUE_ADMIN_ADDR, else 127.0.0.1:9465; without --token the
token is $FIXVENUE_ADMIN_TOKEN.
A usage error (an option given twice, or one the command needs left out) exits 2 and sends
nothing; a refusal of the venue, or no answer, exits 1.
Run "fixvenue admin <command> -h" for a command's options.
`

// adminOptions are groups of options an admin command takes besides those
// of the connection.
type adminOptions uint8

const (
	optReason     adminOptions = 1 << iota // --reason
	optCancel                              // --session, --account, --instrument: the orders to cancel
	optBand                                // --ref-price, --band-percent
	optInstrument                          // instrument add's terms
	optRisk                                // --session, --account, --limit, --value, --instrument
	optOrder                               // --order-id, --session, --cl-ord-id: the order to cancel
	optLimit                               // --limit: how many to list
)

// adminCommands are the admin commands by name: each one's synopsis, for its
// usage, and the options it takes (its flag set has those alone, so that
// its -h lists what it reads and an option it would ignore is refused).
var adminCommands = map[string]struct {
	synopsis string
	opts     adminOptions
}{
	"status":       {"status", 0},
	"instruments":  {"instruments", 0},
	"sessions":     {"sessions", 0},
	"orders":       {"orders COMPID [--limit N]", optLimit},
	"halt":         {"halt SYMBOL|all --reason R", optReason},
	"resume":       {"resume SYMBOL|all --reason R", optReason},
	"close":        {"close SYMBOL|all --reason R", optReason},
	"cancel":       {"cancel [--session C] [--account A] [--instrument S|all] --reason R", optReason | optCancel},
	"cancel-order": {"cancel-order --order-id N [--session C] | --session C --cl-ord-id ID --reason R", optReason | optOrder},
	"band":         {"band SYMBOL --ref-price P --band-percent N --reason R", optReason | optBand},
	"instrument": {"instrument add SYMBOL --tick-size T --lot-size L --min-qty N --max-qty M --ref-price P --band-percent B\n" +
		"             [--id ID] [--status open|halted|closed] [--group G] --reason R", optReason | optBand | optInstrument},
	"phase":   {"phase GROUP pre_open|open|closing_call|close --reason R", optReason},
	"eod":     {"eod --reason R", optReason},
	"logout":  {"logout COMPID --reason R", optReason},
	"disable": {"disable COMPID --reason R", optReason},
	"enable":  {"enable COMPID --reason R", optReason},
	"risk": {`risk show|kill|reset|limits [options]

  show [--session C|--account A]      each session's and account's limits, kill switch and figures (or one's)
  kill|reset --session C|--account A --reason R
                                      turn a kill switch on (cancelling the orders) or off
  limits --session C|--account A --limit NAME --value N|none [--instrument S] --reason R
                                      change one limit`, optReason | optRisk},
}

// adminClient calls the admin API.
type adminClient struct {
	// prog is the command as the user typed it, which every error names:
	// "fixvenue admin", or "fixvenue" for `fixvenue risk`.
	prog    string
	base    string
	token   string
	http    *http.Client
	asJSON  bool
	out     io.Writer
	errOut  io.Writer
	reason  string
	session string
	account string
	instr   string
	orderID string
	clOrdID string
	listMax int
	refPx   string
	bandPct int64
	limit   string
	value   gateway.LimitValue
	add     addFlags
	// addr is the admin address called, and addrFrom where it came from
	// (--addr, the environment or the default), which an error that is
	// no answer of the admin API names.
	addr, addrFrom string
	// fs is the command's flag set: which options were given, and its
	// usage for a usage error found after parsing.
	fs *flag.FlagSet
}

// addFlags are the options of `admin instrument add`.
type addFlags struct {
	id                  uint
	tick, status, group string
	lot, minQty, maxQty int64
}

func cmdAdmin(args []string) int { return runAdmin("fixvenue admin", args, os.Stdout, os.Stderr) }

// runAdmin runs the admin command args[0] with the rest of args; prog is
// what the command's name follows in its usage ("fixvenue admin", or
// "fixvenue" for `fixvenue risk`).
func runAdmin(prog string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	if asksHelp(args[0]) {
		fmt.Fprint(stdout, adminUsage)
		return 0
	}
	sub := args[0]
	if sub == "hash-token" {
		return adminHashToken(args[1:], os.Stdin, stdout, stderr)
	}
	cmd, known := adminCommands[sub]
	if !known {
		fmt.Fprint(stderr, unknownCommand("fixvenue admin", args, append(slices.Collect(maps.Keys(adminCommands)), "hash-token")), adminUsage)
		return 2
	}
	fs := flag.NewFlagSet(strings.TrimPrefix(prog+" ", "fixvenue ")+sub, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s %s\n\noptions:\n", prog, cmd.synopsis)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", envOr(adminAddrEnv, "127.0.0.1:9465"), "admin API address: host:port, or an http:// or https:// URL of a host; $"+adminAddrEnv)
	token := tokenFlag(fs)
	asJSON := fs.Bool("json", false, "print the API's JSON instead of a table")
	timeout := fs.Duration("timeout", 90*time.Second, "give up on the call after this long")
	useTLS := fs.Bool("tls", false, "use https")
	caFile := fs.String("ca-file", "", "with https (--tls, or an https:// --addr): CA certificate that signed the API's certificate")
	certFile := fs.String("cert-file", "", "with https: client certificate (when the API requires one)")
	keyFile := fs.String("key-file", "", "with https: client key")
	c := &adminClient{prog: prog, out: stdout, errOut: stderr}
	if cmd.opts&optReason != 0 {
		why := "why: journaled with the action (required)"
		if cmd.opts&optRisk != 0 {
			why = "kill, reset, limits: " + why
		}
		fs.StringVar(&c.reason, "reason", "", why)
	}
	if cmd.opts&optCancel != 0 {
		fs.StringVar(&c.session, "session", "", "cancel the orders of this session (CompID)")
		fs.StringVar(&c.account, "account", "", "cancel the orders of this account")
		fs.StringVar(&c.instr, "instrument", "", "cancel the orders in this instrument (symbol, or all)")
	}
	if cmd.opts&optLimit != 0 {
		fs.IntVar(&c.listMax, "limit", ops.OpenOrdersMaxListed, "list at most this many, the lowest OrderIDs (1 to 1000)")
	}
	if cmd.opts&optOrder != 0 {
		fs.StringVar(&c.orderID, "order-id", "", "the order's OrderID (FIX 37)")
		fs.StringVar(&c.session, "session", "", "the session (CompID) whose ClOrdID --cl-ord-id is; with --order-id, the session that must own the order")
		fs.StringVar(&c.clOrdID, "cl-ord-id", "", "a ClOrdID (FIX 11) the order had in --session (a replaced one names the order it became)")
	}
	if cmd.opts&optRisk != 0 {
		fs.StringVar(&c.session, "session", "", "the session (CompID): show (only it), kill, reset, limits")
		fs.StringVar(&c.account, "account", "", "the account: show (only it), kill, reset, limits")
		fs.StringVar(&c.limit, "limit", "", "limits: max_order_qty, max_order_notional, max_open_orders, max_open_notional, credit_limit, max_position, kill_after_breaches, kill_at_loss")
		fs.Var(&limitFlag{&c.value}, "value", "limits: the new value (quantity, count or notional in price ticks), or none to remove the limit")
		fs.StringVar(&c.instr, "instrument", "", "limits: the instrument a max_order_qty, max_order_notional or max_position applies to")
	}
	if cmd.opts&optBand != 0 {
		fs.StringVar(&c.refPx, "ref-price", "", "the reference price")
		fs.Int64Var(&c.bandPct, "band-percent", 0, "the half-width of the price band, in percent")
	}
	if cmd.opts&optInstrument != 0 {
		fs.UintVar(&c.add.id, "id", 0, "the wire id (default: one more than the highest listed; after 4294967295, the lowest free one)")
		fs.StringVar(&c.add.tick, "tick-size", "", "the tick size, e.g. 0.01")
		fs.Int64Var(&c.add.lot, "lot-size", 0, "every quantity is a multiple of it")
		fs.Int64Var(&c.add.minQty, "min-qty", 0, "the smallest order quantity")
		fs.Int64Var(&c.add.maxQty, "max-qty", 0, "the largest order quantity")
		fs.StringVar(&c.add.status, "status", "", "open (default), halted or closed")
		fs.StringVar(&c.add.group, "group", "", "the schedule group (default: the group its symbol falls in)")
	}
	positional, exit, done := parseArgs(fs, args[1:], stdout, stderr)
	if done {
		return exit
	}
	if twice := repeatedFlag(fs, args[1:]); twice != "" {
		// Each option is one name of the API's JSON body, which refuses a
		// name given twice (README, "Operating the venue"): the flag
		// package kept the last value and dropped the first without a word
		// (two --session to kill were one, two --reason one reason).
		fmt.Fprintf(stderr, "%s %s: option --%s is given more than once: give it once\n", prog, sub, twice)
		fs.SetOutput(stderr)
		fs.Usage()
		return 2
	}
	if *timeout <= 0 {
		// http.Client takes 0 as no timeout at all and a negative one as
		// already past.
		fmt.Fprintf(stderr, "%s %s: --timeout must be positive, got %v\n", prog, sub, *timeout)
		return 2
	}
	if strings.TrimSpace(*addr) == "" {
		// Said here: the request would fail as "http: no Host in request URL".
		fmt.Fprintf(stderr, "%s %s: --addr is empty\n", prog, sub)
		return 2
	}
	c.asJSON = *asJSON
	c.fs = fs
	switch {
	case flagSet(fs, "addr"):
		c.addrFrom = "--addr"
	case os.Getenv(adminAddrEnv) != "":
		c.addrFrom = "$" + adminAddrEnv
	default:
		c.addrFrom = "the default; --addr or $" + adminAddrEnv + " to change it"
	}
	c.addr = *addr
	var tokenOK bool
	if c.token, tokenOK = adminToken(fs, *token, prog+" "+sub, stderr); !tokenOK {
		return 2
	}
	scheme := "http"
	if *useTLS {
		scheme = "https"
	}
	// An address given as a URL keeps its scheme (https also with --tls).
	host, url := *addr, false
	if rest, ok := strings.CutPrefix(host, "https://"); ok {
		host, scheme, url = rest, "https", true
	} else if rest, ok := strings.CutPrefix(host, "http://"); ok {
		host, url = rest, true
	}
	transport := &http.Transport{}
	if scheme == "https" {
		// An https:// --addr is https as --tls is: its CA and client
		// certificate were left unused without --tls, and the call failed
		// on a certificate the CA named had signed.
		tc, err := adminClientTLS(*caFile, *certFile, *keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.name(), err)
			return 2
		}
		transport.TLSClientConfig = tc
	} else if *caFile != "" || *certFile != "" || *keyFile != "" {
		// Over http they were ignored, and the operator took the call for
		// one made over TLS.
		fmt.Fprintf(stderr, "%s %s: --ca-file, --cert-file and --key-file are for https: give --tls, or an https:// --addr\n", prog, sub)
		return 2
	}
	host = strings.TrimSuffix(host, "/")
	if why := notHostPort(host); why != "" && !(url && why == "missing port in address" && !strings.ContainsAny(host, "/?#")) {
		// Refused here, by name: a path or a query was sent as part of
		// the endpoint (a 404 of /v1/v1/status), a host:port without its
		// port dialled port 80, another scheme was taken for a host name,
		// and a port out of range said only that no admin API answered.
		// A URL without a port is its scheme's port, as anywhere.
		fmt.Fprintf(stderr, "%s %s: %s %q is not a host:port, nor http:// or https:// and a host[:port]: %s\n", prog, sub, c.addrFrom, *addr, why)
		return 2
	}
	c.base = scheme + "://" + host
	if scheme == "http" && c.token != "" && !loopbackOnly(host) {
		// A venue serves its admin API beyond loopback only over https
		// (config: admin.addr), so such an address without --tls is a
		// mistake that would put the token on the network in clear.
		fmt.Fprintf(stderr, "%s %s: not sending the token in clear to %s, which is not loopback: the venue serves its admin API "+
			"beyond loopback only over https (--tls, or an https:// --addr)\n", prog, sub, host)
		return 2
	}
	c.http = &http.Client{Timeout: *timeout, Transport: transport}
	return c.run(sub, positional)
}

// loopbackOnly reports whether hostport's host names only loopback
// addresses: an IP, localhost, or a name every address of which is one.
func loopbackOnly(hostport string) bool {
	host, _, err := net.SplitHostPort(strings.TrimSuffix(hostport, "/"))
	if err != nil {
		host = hostport
	}
	if config.IsLoopback(host) {
		return true
	}
	if net.ParseIP(host) != nil {
		return false
	}
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !config.IsLoopback(a) {
			return false
		}
	}
	return true
}

// tokenFlag declares --token, the bearer token of the admin API (and of a
// cluster node's leadership transfer). It has no default: a default is
// printed in the usage.
func tokenFlag(fs *flag.FlagSet) *string {
	return fs.String("token", "", "bearer token (without --token: $"+adminTokenEnv+")")
}

// adminToken is the token a command presents: --token when given, else
// $FIXVENUE_ADMIN_TOKEN. One holding a control character is refused,
// saying so on stderr under name (ok false, exit 2): the HTTP client
// refuses such a header before anything is sent, in words that read as a
// venue that did not answer; the usual cause is the line end of the file
// the token was read from.
func adminToken(fs *flag.FlagSet, flagValue, name string, stderr io.Writer) (token string, ok bool) {
	token, from := flagValue, "--token"
	if !flagSet(fs, "token") {
		token, from = os.Getenv(adminTokenEnv), "$"+adminTokenEnv
	}
	if i := strings.IndexFunc(token, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }); i >= 0 {
		fmt.Fprintf(stderr, "%s: the token (%s) holds a control character (%q at byte %d), which no HTTP header carries: "+
			"nothing was sent (a line end from the file it was read from?)\n", name, from, token[i], i)
		return "", false
	}
	return token, true
}

// name is what the client's errors begin with: "fixvenue admin", or
// "fixvenue risk" when it runs as `fixvenue risk`, so that an error names
// the command the user typed.
func (c *adminClient) name() string {
	if c.prog == "fixvenue" {
		return "fixvenue risk"
	}
	return c.prog
}

// repeatedFlag is the name of an option of fs that args give more than once
// (before any "--"), "" when none is, read as the flag package reads them:
// "-x" or "--x", its value after "=" or, but for a bool, the next argument.
func repeatedFlag(fs *flag.FlagSet, args []string) string {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue // refused by the flag package already
		}
		if seen[f.Name] {
			return f.Name
		}
		seen[f.Name] = true
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // its value
		}
	}
	return ""
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func adminClientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, errors.New("--ca-file: no certificate in it")
		}
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert-file, --key-file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func (c *adminClient) run(sub string, args []string) int {
	want := func(n int, what string) bool {
		if len(args) == n {
			for _, a := range args {
				// An empty name, "." or ".." names nothing the API has: in
				// the URL's path it was called as another endpoint and
				// refused as "no such endpoint: POST /v1/instruments/halt".
				if a == "" || a == "." || a == ".." {
					fmt.Fprintf(c.errOut, "fixvenue admin %s: want %s, got %q, which names none\n", sub, what, a)
					return false
				}
			}
		}
		if len(args) != n {
			got := "none"
			if len(args) > 0 {
				got = fmt.Sprintf("%q", args)
			}
			fmt.Fprintf(c.errOut, "fixvenue admin %s: want %s, got %s\n", sub, what, got)
			return false
		}
		return true
	}
	switch sub {
	case "status":
		if !want(0, "no argument") {
			return 2
		}
		var st ops.StatusInfo
		return c.call("GET", "/v1/status", nil, &st, func() { c.printStatus(&st) })
	case "instruments":
		if !want(0, "no argument") {
			return 2
		}
		var list []ops.InstrumentInfo
		return c.call("GET", "/v1/instruments", nil, &list, func() { c.printInstruments(list) })
	case "sessions":
		if !want(0, "no argument") {
			return 2
		}
		var list []ops.SessionInfo
		return c.call("GET", "/v1/sessions", nil, &list, func() { c.printSessions(list) })
	case "orders":
		if !want(1, "one COMPID") {
			return 2
		}
		if c.listMax < 1 || c.listMax > ops.OpenOrdersMaxListed {
			fmt.Fprintf(c.errOut, "%s orders: --limit must be from 1 to %d, got %d\n", c.prog, ops.OpenOrdersMaxListed, c.listMax)
			return 2
		}
		var list ops.SessionOrders
		return c.call("GET", "/v1/sessions/"+url.PathEscape(args[0])+"/orders?limit="+strconv.Itoa(c.listMax), nil, &list,
			func() { c.printOrders(list) })
	case "halt", "resume", "close":
		if !want(1, "one SYMBOL (or all)") {
			return 2
		}
		if !c.require(sub, "reason") {
			return 2
		}
		return c.action("/v1/instruments/"+url.PathEscape(args[0])+"/"+sub, map[string]string{"reason": c.reason})
	case "cancel":
		if !want(0, "filters as --session, --account, --instrument") || !c.requireOne(sub, "session", "account", "instrument") ||
			!c.require(sub, "reason") {
			return 2
		}
		return c.action("/v1/cancel", c.withReason(map[string]string{"session": c.session, "account": c.account, "instrument": c.instr}))
	case "cancel-order":
		if !want(0, "the order as --order-id, or --session and --cl-ord-id") || !c.requireOne(sub, "order-id", "cl-ord-id") ||
			!c.require(sub, "reason") {
			return 2
		}
		if given := c.given(); given["order-id"] && given["cl-ord-id"] {
			fmt.Fprintf(c.errOut, "%s %s: give --order-id or --cl-ord-id, not both\n", c.prog, sub)
			return 2
		} else if given["cl-ord-id"] && !c.require(sub, "session") {
			return 2
		}
		return c.action("/v1/orders/cancel", c.withReason(map[string]string{"order_id": c.orderID, "session": c.session, "cl_ord_id": c.clOrdID}))
	case "band":
		if !want(1, "one SYMBOL") || !c.require(sub, "ref-price", "band-percent", "reason") {
			return 2
		}
		return c.actionBody("/v1/instruments/"+url.PathEscape(args[0])+"/band",
			map[string]any{"reason": c.reason, "ref_price": c.refPx, "band_percent": c.bandPct})
	case "instrument":
		if len(args) != 2 || args[0] != "add" {
			fmt.Fprintf(c.errOut, "fixvenue admin instrument: want add SYMBOL and options\n")
			return 2
		}
		if args[1] == "" {
			fmt.Fprintf(c.errOut, "fixvenue admin instrument add: the SYMBOL is empty\n")
			return 2
		}
		// --id, --status and --group have defaults; the venue takes no
		// default for the terms.
		if !c.require("instrument add", "tick-size", "lot-size", "min-qty", "max-qty", "ref-price", "band-percent", "reason") {
			return 2
		}
		return c.addInstrument(args[1])
	case "phase":
		if !want(2, "a schedule GROUP and a phase: pre_open, open, closing_call or close") || !c.require(sub, "reason") {
			return 2
		}
		return c.action("/v1/phase", map[string]string{"reason": c.reason, "group": args[0], "phase": args[1]})
	case "eod":
		if !want(0, "no argument") || !c.require(sub, "reason") {
			return 2
		}
		return c.action("/v1/eod", map[string]string{"reason": c.reason})
	case "logout", "disable", "enable":
		if !want(1, "one session CompID") || !c.require(sub, "reason") {
			return 2
		}
		return c.action("/v1/sessions/"+url.PathEscape(args[0])+"/"+sub, map[string]string{"reason": c.reason})
	case "risk":
		return c.risk(args)
	}
	fmt.Fprintf(c.errOut, "fixvenue admin: unknown command %q\n\n%s", sub, adminUsage)
	return 2
}

// require reports whether every option of names was given to the command
// cmd (a word or two after c.prog), a string option with a value that is
// not blank. It says which were not on one line of c.errOut, with the
// command's usage, when one was not: a usage error (exit 2), found before
// anything is sent, where the venue refused the call as a bad body (exit
// 1) or, for an option it would read as 0, as a value out of range. A
// number given, 0 included, is the venue's to judge, as any value is.
func (c *adminClient) require(cmd string, names ...string) bool {
	given := c.given()
	var missing []string
	for _, n := range names {
		if !given[n] {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) == 0 {
		return true
	}
	what := "option " + missing[0] + " is"
	if len(missing) > 1 {
		what = "options " + strings.Join(missing, ", ") + " are"
	}
	return c.missing(cmd, what)
}

// requireOne is require for options of which the command needs one at
// least (cancel's filters, a risk call's subject).
func (c *adminClient) requireOne(cmd string, names ...string) bool {
	given := c.given()
	if slices.ContainsFunc(names, func(n string) bool { return given[n] }) {
		return true
	}
	return c.missing(cmd, "one of the options --"+strings.Join(names, ", --")+" is")
}

// given is the set of options given to the command, a string option only
// with a value that is not blank: an empty string is what the API reads
// when the name is left out, so a blank --reason "$REASON" is no reason.
func (c *adminClient) given() map[string]bool {
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok {
			if s, isString := g.Get().(string); isString && strings.TrimSpace(s) == "" {
				return
			}
		}
		given[f.Name] = true
	})
	return given
}

// missing says that what ("option --x is") is required by the command, with
// its usage, and returns false: nothing is sent.
func (c *adminClient) missing(cmd, what string) bool {
	fmt.Fprintf(c.errOut, "%s %s: %s required: nothing was sent\n", c.prog, cmd, what)
	c.fs.SetOutput(c.errOut)
	c.fs.Usage()
	return false
}

// withReason is a body of the options given (those not empty: the API
// reads a name left out as empty) and the reason.
func (c *adminClient) withReason(opts map[string]string) map[string]string {
	body := map[string]string{"reason": c.reason}
	for k, v := range opts {
		if v != "" {
			body[k] = v
		}
	}
	return body
}

func (c *adminClient) action(path string, body map[string]string) int {
	b := make(map[string]any, len(body))
	for k, v := range body {
		b[k] = v
	}
	return c.actionBody(path, b)
}

func (c *adminClient) actionBody(path string, body map[string]any) int {
	var res ops.ActionResponse
	return c.call("POST", path, body, &res, func() {
		affected := fmt.Sprintf(", %d affected", res.Count)
		if strings.HasPrefix(path, "/v1/sessions/") {
			// A session action changes a connection, no instrument or order:
			// its count is always 0, which read as an action that did nothing.
			affected = ""
		}
		fmt.Fprintf(c.out, "%s: %s by %s (journal seq %d%s)\n", res.Action, res.Result, res.Operator, res.Seq, affected)
		if len(res.StayHalted) > 0 {
			fmt.Fprintf(c.out, "halted, left halted until resumed (into the group's phase): %s\n", strings.Join(res.StayHalted, ", "))
		}
		if o := res.Order; o != nil {
			fmt.Fprintf(c.out, "order %s of %s in %s cancelled\n", o.OrderID, o.Session, o.Instrument)
		}
		if e := res.EndOfDay; e != nil {
			fmt.Fprintf(c.out, "end of day: %s expired (DAY, at the opening, at the close), snapshot seq %d, %s\n", plural(int64(e.Expired), "order"), e.SnapshotSeq, archivedText(e))
			if e.SnapshotError != "" || e.ArchiveError != "" {
				fmt.Fprintf(c.out, "warning: %s%s\n", e.SnapshotError, e.ArchiveError)
			}
		}
	})
}

// connectionLost reports whether err says that a connection the server
// had accepted ended without an answer (closed or reset after the request
// was sent), not that none could be opened.
func connectionLost(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// call makes one request; on success it prints the JSON (--json) or calls
// table, on refusal it prints the API's reason and returns 1.
func (c *adminClient) call(method, path string, body any, out any, table func()) int {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		fmt.Fprintf(c.errOut, "%s: %v\n", c.name(), err)
		return 2
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		fmt.Fprintf(c.errOut, "%s: %v\n", c.name(), err)
		// The transport's words ("connection refused", "EOF") do not say
		// which address was called nor where it came from.
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			// Something listened but gave no answer in time: not "no admin
			// API answered", and a change may have been journaled since.
			fmt.Fprintf(c.errOut, "%s: no answer from %s (%s) within --timeout %v\n", c.name(), c.addr, c.addrFrom, c.http.Timeout)
			if method == http.MethodPost {
				fmt.Fprintf(c.errOut, "%s: the change may still be applied: look (fixvenue journal dump, or the state it changes) before calling again\n", c.name())
			}
			return 1
		}
		if method == http.MethodPost && connectionLost(err) {
			// The venue took the connection and closed it without an
			// answer: the request may have reached it, as when a venue or a
			// cluster's leader is killed while it handles the call. "No
			// admin API answered" would say nothing was changed.
			fmt.Fprintf(c.errOut, "%s: %s (%s) closed the connection without an answer (the venue stopped, or a cluster node lost the leadership, while it took the call?)\n",
				c.name(), c.addr, c.addrFrom)
			fmt.Fprintf(c.errOut, "%s: the change may still be applied: look (fixvenue journal dump, or the state it changes, on a cluster's new leader) before calling again\n", c.name())
			return 1
		}
		var untrusted *tls.CertificateVerificationError
		if errors.As(err, &untrusted) {
			// An https server answered: one the system's CAs do not vouch for.
			fmt.Fprintf(c.errOut, "%s: the certificate of %s (%s) is not trusted: --ca-file F names the CA that signed the venue's admin.tls_cert_file\n",
				c.name(), c.addr, c.addrFrom)
			return 1
		}
		over := "over http (--tls, or an https:// --addr, when it has tls_cert_file)"
		if req.URL.Scheme == "https" {
			over = "over https (without tls_cert_file it serves http: leave out --tls)"
		}
		fmt.Fprintf(c.errOut, "%s: no admin API answered at %s (%s): is the venue running, with its [admin] addr there, %s?\n",
			c.name(), c.addr, c.addrFrom, over)
		return 1
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		fmt.Fprintf(c.errOut, "%s: reading the answer: %v\n", c.name(), err)
		return 1
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error, Code     string
			LeaderAdminAddr string `json:"leader_admin_addr"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == "" || e.Code == "" {
			// Every refusal of the admin API is JSON with an error and a
			// code (README, "Operating the venue"): this answer is another
			// server's (the metrics listener's 404, a proxy's page, an
			// https server called over http).
			fmt.Fprintf(c.errOut, "%s: %s answered HTTP %d, not as the admin API (%q): is it the venue's [admin] addr (%s)?\n",
				c.name(), c.addr, resp.StatusCode, truncate(strings.TrimSpace(string(raw)), 200), c.addrFrom)
			if req.URL.Scheme == "http" && resp.StatusCode == http.StatusBadRequest && bytes.Contains(raw, []byte("HTTPS server")) {
				// Go's https server answers a plain http request so.
				fmt.Fprintf(c.errOut, "%s: it serves https (admin.tls_cert_file): give --tls (and --ca-file F), or an https:// --addr\n", c.name())
			}
			// Not copied to stdout with --json, as a refusal's JSON is:
			// what a script parses there is JSON or nothing.
			return 1
		}
		fmt.Fprintf(c.errOut, "%s: %s (HTTP %d %s)\n", c.name(), e.Error, resp.StatusCode, e.Code)
		if e.LeaderAdminAddr != "" {
			// A cluster follower names the leader's admin API: where to call.
			fmt.Fprintf(c.errOut, "%s: call the leader: --addr %s (or FIXVENUE_ADMIN_ADDR)\n", c.name(), e.LeaderAdminAddr)
		}
		if c.asJSON {
			c.out.Write(raw)
		}
		return 1
	}
	if c.asJSON {
		c.out.Write(raw)
		return 0
	}
	if err := json.Unmarshal(raw, out); err != nil {
		fmt.Fprintf(c.errOut, "%s: unexpected answer: %v\n", c.name(), err)
		return 1
	}
	table()
	return 0
}

func (c *adminClient) printStatus(st *ops.StatusInfo) {
	w := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "ready\t%v\n", st.Ready)
	if st.Halted != "" {
		fmt.Fprintf(w, "HALTED\t%s (orders are refused until the venue is restarted)\n", st.Halted)
	}
	if st.Stalled != "" {
		fmt.Fprintf(w, "STALLED\t%s\n", st.Stalled)
	}
	if r := st.RefusedAtStart; r != nil {
		// Journaled orders the start's replay refused under the configured
		// terms, its record moved aside (README, "Changing configured terms").
		by := make([]string, 0, len(r.ByInstrument))
		for _, in := range slices.Sorted(maps.Keys(r.ByInstrument)) {
			by = append(by, fmt.Sprintf("%s %d", in, r.ByInstrument[in]))
		}
		fmt.Fprintf(w, "REFUSED AT START\t%s under the configured terms (%s); first: %s\n", plural(int64(r.Orders), "recorded order"),
			strings.Join(by, ", "), strings.Join(r.First, "; "))
	}
	fmt.Fprintf(w, "durable seq\t%d\n", st.DurableSeq)
	fmt.Fprintf(w, "events since start\t%d (hash %s)\n", st.EventsSinceStart, st.EventsHash)
	fmt.Fprintf(w, "schedule\t%v\n", map[bool]string{true: "on", false: "off"}[st.ScheduleEnabled])
	if st.NextTransition != "" {
		fmt.Fprintf(w, "next transition\t%s\n", st.NextTransition)
	}
	for _, c := range st.Capacity {
		fmt.Fprintf(w, "capacity %s\t%d of %d (%.1f%%)\n", c.Bound, c.Used, c.Limit, 100*float64(c.Used)/float64(max(c.Limit, 1)))
	}
	if e := st.LastEndOfDay; e != nil {
		fmt.Fprintf(w, "last end of day\tseq %d, %d expired, snapshot %d, %s, at %s\n", e.Seq, e.Expired,
			e.SnapshotSeq, archivedText(e), time.Unix(0, e.CompletedUnixNs).UTC().Format(time.RFC3339))
	}
	w.Flush()
}

func (c *adminClient) printInstruments(list []ops.InstrumentInfo) {
	w := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "SYMBOL\tID\tSTATUS\tBID\tBID QTY\tASK\tASK QTY\tLAST\tLAST QTY\tVOLUME\tTRADES\tPREV CLOSE\tRESTING\tBAND\t")
	for _, in := range list {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%s..%s\t\n", in.Symbol, in.ID, in.Status, dash(in.Bid), in.BidQty,
			dash(in.Ask), in.AskQty, dash(in.LastPrice), in.LastQty, in.Volume, in.Trades, dash(in.PrevClose), in.RestingOrders, in.BandLow, in.BandHigh)
	}
	w.Flush()
}

func (c *adminClient) printSessions(list []ops.SessionInfo) {
	w := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	// KIND, last so that the columns before it stay where scripts read
	// them: a drop-copy session enters no orders (its order figures are
	// 0, not idle), and a cancel or risk call naming it is refused.
	fmt.Fprintln(w, "COMPID\tLOGGED ON\tDISABLED\tADDRESS\tNEXT OUT\tNEXT IN\tOPEN/BOUND\tMSG/S\tORDERS/S\tCANCELS/S\tKIND")
	for _, s := range list {
		kind := "order"
		if s.DropCopy {
			kind = "drop-copy"
		}
		fmt.Fprintf(w, "%s\t%v\t%v\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%s\n", s.CompID, s.LoggedOn, s.Disabled, dash(s.Address), s.NextSenderSeq,
			s.NextTargetSeq, openAgainstBound(s), s.MessagesPerSecond, s.OrdersPerSecond, s.CancelsPerSecond, kind)
	}
	w.Flush()
}

// printOrders prints a session's open orders, and how many it has when
// the list holds fewer.
func (c *adminClient) printOrders(list ops.SessionOrders) {
	w := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ORDER ID\tCLORDID\tINSTRUMENT\tSIDE\tPRICE\tLEAVES\tWAITING")
	for _, o := range list.Orders {
		waiting := ""
		if o.StopWaiting {
			waiting = "stop"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", o.OrderID, dash(o.ClOrdID), o.Instrument, o.Side, dash(o.Price), o.LeavesQty, dash(waiting))
	}
	w.Flush()
	fmt.Fprintf(c.out, "%s: %s open", list.Session, plural(int64(list.Total), "order"))
	if list.Total > len(list.Orders) {
		fmt.Fprintf(c.out, ", the first %d listed", len(list.Orders))
	}
	fmt.Fprintln(c.out)
}

// openAgainstBound is a session's open orders against its bound
// (open_orders_max), in one field where the open orders were alone, so
// that the columns after it stay where scripts read them: "12/262144",
// "12/off" for a session with no bound, "-" for a drop-copy session, which
// enters no orders. An operator sees how near a session is to having its
// orders refused (103=3).
func openAgainstBound(s ops.SessionInfo) string {
	switch {
	case s.DropCopy:
		return "-"
	case s.OpenOrdersMax <= 0:
		return strconv.Itoa(s.OpenOrders) + "/off"
	}
	return strconv.Itoa(s.OpenOrders) + "/" + strconv.Itoa(s.OpenOrdersMax)
}

// truncate is s cut to at most n bytes, "…" marking a cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const hashTokenUsage = `usage: fixvenue admin hash-token [TOKEN]

prints the [[admin.token]] block, with the token's sha256, for the venue's configuration;
without TOKEN it reads the token from the first line of standard input. A token is at least
16 characters of printable ASCII, without a space at either end.
`

func adminHashToken(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// A token is at least 16 characters: none is taken for a request for help.
	if len(args) == 1 && asksHelp(args[0]) {
		fmt.Fprint(stdout, hashTokenUsage)
		return 0
	}
	var token string
	switch len(args) {
	case 0:
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(stderr, "fixvenue admin hash-token: %v\n", err)
			return 1
		}
		token = strings.TrimRight(line, "\r\n")
	case 1:
		token = args[0]
	default:
		fmt.Fprint(stderr, hashTokenUsage)
		return 2
	}
	if len(token) < 16 {
		fmt.Fprintln(stderr, "fixvenue admin hash-token: use a token of at least 16 characters (e.g. openssl rand -hex 32)")
		return 2
	}
	// A token is presented in an Authorization header, which loses the
	// spaces at its ends, and a browser (the console) sends a character
	// beyond ASCII as another byte than the CLI does: the hash of such a
	// token would refuse it as unknown.
	if strings.TrimSpace(token) != token || strings.IndexFunc(token, func(r rune) bool { return r < ' ' || r > '~' }) >= 0 {
		fmt.Fprintln(stderr, "fixvenue admin hash-token: use a token of printable ASCII without a space at either end, which every call "+
			"presents as typed (e.g. openssl rand -hex 32)")
		return 2
	}
	// The block is appended to a configuration (>> venue.toml): one that
	// could not be written is no token configured.
	if _, err := fmt.Fprintf(stdout, "[[admin.token]]\noperator = \"YOUR-NAME\"\nsha256 = %q\n", ops.HashToken(token)); err != nil {
		fmt.Fprintf(stderr, "fixvenue admin hash-token: %v\n", err)
		return 1
	}
	return 0
}

// addInstrument calls POST /v1/instruments.
func (c *adminClient) addInstrument(symbol string) int {
	body := ops.AddInstrumentRequest{Reason: c.reason, ID: uint32(c.add.id), Symbol: symbol, TickSize: c.add.tick,
		LotSize: c.add.lot, MinQty: c.add.minQty, MaxQty: c.add.maxQty, RefPrice: c.refPx, BandPercent: c.bandPct,
		Status: c.add.status, Group: c.add.group}
	if uint(body.ID) != c.add.id {
		fmt.Fprintf(c.errOut, "fixvenue admin instrument add: --id %d does not fit 32 bits\n", c.add.id)
		return 2
	}
	var res ops.AddInstrumentResponse
	return c.call("POST", "/v1/instruments", body, &res, func() {
		in := res.Instrument
		fmt.Fprintf(c.out, "%s: %s by %s (journal seq %d)\n", res.Action, res.Result, res.Operator, res.Seq)
		fmt.Fprintf(c.out, "%s id %d %s, band %s..%s\n", in.Symbol, in.ID, in.Status, in.BandLow, in.BandHigh)
	})
}

// archivedText says what an end of day archived, and up to which snapshot.
func archivedText(e *ops.EndOfDayReport) string {
	if e.ArchivedThrough < 0 {
		if e.NotArchived == "" { // a venue from before not_archived
			return "nothing archived"
		}
		return "nothing archived: " + e.NotArchived
	}
	return fmt.Sprintf("%s archived before snapshot %d (%d bytes compressed)", plural(int64(e.ArchivedSegs), "segment"), e.ArchivedThrough, e.ArchivedGzip)
}

// plural writes n with its noun, singular for one: the answer lines read
// "1 order cancelled", not "1 orders cancelled".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// limitFlag reads --value: an integer, or "none" (gateway.LimitValue).
type limitFlag struct{ v *gateway.LimitValue }

func (f *limitFlag) String() string {
	if f.v == nil || *f.v == 0 {
		return ""
	}
	return f.v.String()
}

func (f *limitFlag) Set(s string) error {
	if s == gateway.LimitNone {
		return f.v.UnmarshalJSON([]byte(strconv.Quote(s)))
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return fmt.Errorf("%q is not an integer or %s", s, gateway.LimitNone)
	}
	// The API's own bound: the number that stands for none is refused.
	return f.v.UnmarshalJSON([]byte(s))
}
