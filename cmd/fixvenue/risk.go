package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func init() { commands["risk"] = cmdRisk }

// cmdRisk drives the running venue's risk control endpoint (server/risk.go):
//
//	fixvenue risk kill   --session CLIENT1 | --account FUND
//	fixvenue risk reset  --session CLIENT1 | --account FUND
//	fixvenue risk limits --account FUND --limit credit_limit --value 1000000 [--instrument ACME]
//
// The token comes from --token or FIXVENUE_RISK_TOKEN; the endpoint is the
// metrics listener (--addr).
func cmdRisk(args []string) int {
	action, fs, ok := subcommand("risk", args, "usage: fixvenue risk kill|reset|limits [options] (fixvenue risk kill -h)", "kill", "reset", "limits")
	if !ok {
		return 2
	}
	addr := fs.String("addr", "127.0.0.1:9464", "the venue's metrics listener")
	token := fs.String("token", os.Getenv("FIXVENUE_RISK_TOKEN"), "risk.control_token of the venue (default $FIXVENUE_RISK_TOKEN)")
	session := fs.String("session", "", "the session's CompID")
	account := fs.String("account", "", "the account (FIX tag 1)")
	limit := fs.String("limit", "", "limits: max_order_qty, max_order_notional, max_open_orders, max_open_notional, credit_limit, max_position, kill_after_breaches, kill_at_loss")
	value := fs.String("value", "", "limits: the new value (quantity, count or notional in price ticks)")
	instrument := fs.String("instrument", "", "limits: the instrument's symbol (max_order_qty, max_order_notional, max_position)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	form := url.Values{}
	for k, v := range map[string]string{"session": *session, "account": *account} {
		if v != "" {
			form.Set(k, v)
		}
	}
	path := "/risk/" + action
	if action == "limits" {
		path = "/risk/limit"
		form.Set("limit", *limit)
		form.Set("value", *value)
		if *instrument != "" {
			form.Set("instrument", *instrument)
		}
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+*addr+path, strings.NewReader(form.Encode()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue risk:", err)
		return 2
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+*token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixvenue risk:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "fixvenue risk: %s: %s", resp.Status, body)
		return 1
	}
	os.Stdout.Write(body)
	return 0
}
