package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fixvenue/fixvenue/ops"
)

// cmdRisk is `fixvenue admin risk …` under its older name: one
// implementation, on the admin API.
func cmdRisk(args []string) int {
	return runAdmin("fixvenue", append([]string{"risk"}, args...), os.Stdout, os.Stderr)
}

// risk runs `fixvenue admin risk show|kill|reset|limits`.
func (c *adminClient) risk(args []string) int {
	if len(args) != 1 {
		got := "none"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args)
		}
		fmt.Fprintf(c.errOut, "%s risk: want one of show, kill, reset, limits, got %s\n", c.prog, got)
		return 2
	}
	body := map[string]any{"reason": c.reason}
	for k, v := range map[string]string{"session": c.session, "account": c.account} {
		if v != "" {
			body[k] = v
		}
	}
	// --value 0 is a value given, the venue's to judge (README "Operating
	// the venue"), not a --value left out: read from the options given.
	valueGiven := c.given()["value"]
	var ans ops.RiskAnswer
	printAnswer := func() {
		fmt.Fprintf(c.out, "%s: %s by %s (journal seq %d, %s cancelled)\n", ans.Action, ans.Result, ans.Operator, ans.Seq, plural(int64(ans.Cancelled), "order"))
	}
	switch args[0] {
	case "show":
		if c.limit != "" || valueGiven || c.instr != "" || c.reason != "" {
			// Refused rather than ignored, as kill's and reset's are.
			fmt.Fprintf(c.errOut, "%s risk show: takes --session or --account (one subject), not --limit, --value, --instrument or --reason\n", c.prog)
			return 2
		}
		if c.session != "" && c.account != "" {
			fmt.Fprintf(c.errOut, "%s risk show: give --session or --account, not both\n", c.prog)
			return 2
		}
		var list []ops.RiskSubject
		if c.session == "" && c.account == "" {
			return c.call("GET", "/v1/risk", nil, &list, func() { c.printRisk(list) })
		}
		// One subject, as kill, reset and limits name it (the API lists
		// them all), as a table or, with --json, as its JSON object.
		scope, name := "session", c.session
		if c.account != "" {
			scope, name = "account", c.account
		}
		asJSON, missing := c.asJSON, false
		c.asJSON = false
		exit := c.call("GET", "/v1/risk", nil, &list, func() {
			for _, s := range list {
				if s.Scope != scope || s.Name != name {
					continue
				}
				if asJSON {
					b, _ := json.MarshalIndent(s, "", "  ")
					fmt.Fprintf(c.out, "%s\n", b)
				} else {
					c.printRisk([]ops.RiskSubject{s})
				}
				return
			}
			missing = true
			if scope == "session" && c.dropCopySession(name) {
				// The API lists order sessions only; a drop-copy session
				// exists, and kill, reset and limits refuse it with these
				// words.
				fmt.Fprintf(c.errOut, "%s risk show: session %s is a drop-copy session: it enters no orders, so it has no risk limits\n", c.prog, name)
				return
			}
			fmt.Fprintf(c.errOut, "%s risk show: no %s %q: the venue lists %s\n", c.prog, scope, name, subjectsText(list, scope))
		})
		if missing {
			return 1
		}
		return exit
	case "kill", "reset":
		if c.limit != "" || valueGiven || c.instr != "" {
			// Refused rather than ignored: whoever gave them meant something else.
			fmt.Fprintf(c.errOut, "%s risk %s: takes --session or --account and --reason, not --limit, --value or --instrument\n", c.prog, args[0])
			return 2
		}
		if !c.requireOne("risk "+args[0], "session", "account") || !c.require("risk "+args[0], "reason") {
			return 2
		}
		return c.call("POST", "/v1/risk/"+args[0], body, &ans, printAnswer)
	case "limits":
		if c.limit == "" || !valueGiven {
			// Said here, as a usage error that sends nothing (the API
			// refuses a call without them too: no_limit, no_value).
			fmt.Fprintf(c.errOut, "%s risk limits: takes --limit NAME and --value N (a positive integer, or none to remove the limit), with --session or --account and --reason\n", c.prog)
			return 2
		}
		if !c.requireOne("risk limits", "session", "account") || !c.require("risk limits", "reason") {
			return 2
		}
		body["limit"], body["value"] = c.limit, c.value
		if c.instr != "" {
			body["instrument"] = c.instr
		}
		return c.call("POST", "/v1/risk/limit", body, &ans, func() {
			in := ""
			if c.instr != "" {
				in = " in " + c.instr
			}
			fmt.Fprintf(c.out, "%s: %s by %s (journal seq %d): %s%s = %s\n", ans.Action, ans.Result, ans.Operator, ans.Seq, c.limit, in, ans.Value)
		})
	}
	fmt.Fprintf(c.errOut, "%s risk: unknown action %q: show, kill, reset or limits\n", c.prog, args[0])
	return 2
}

// subjectsText lists the names of list's subjects of scope, for an error.
func subjectsText(list []ops.RiskSubject, scope string) string {
	var names []string
	for _, s := range list {
		if s.Scope == scope {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "no " + scope
	}
	return strings.Join(names, ", ")
}

func (c *adminClient) printRisk(list []ops.RiskSubject) {
	w := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SUBJECT\tKILLED\tCREDIT USED/LIMIT\tPOSITION USED/LIMIT\tOPEN ORDERS\tBREACHES\tLIMITS")
	for _, s := range list {
		credit, position, open, breaches := "-", "-", "-", "-"
		if f := s.Figures; f != nil {
			credit, position = usedOf(f.CreditUsed, f.CreditLimit), usedOf(f.PositionUsed, f.PositionLimit)
			open, breaches = fmt.Sprint(f.OpenOrders), fmt.Sprint(f.Breaches)
		}
		fmt.Fprintf(w, "%s:%s\t%v\t%s\t%s\t%s\t%s\t%s\n", s.Scope, s.Name, s.Killed, credit, position, open, breaches, limitsText(s.Limits))
	}
	w.Flush()
	// Why a switch an automatic kill turned on is on: what an operator
	// reads before a reset (README "Risk limits").
	for _, s := range list {
		if a := s.AutoKill; a != nil {
			fmt.Fprintf(c.out, "%s:%s killed automatically at %s (journal seq %d): %s\n", s.Scope, s.Name, a.Time, a.Seq, autoKillText(a))
		}
	}
}

// usedOf is a figure against its limit, "-" for the limit when there is
// none: a report gives 0 then (a limit is always positive), and "4/0" would
// read as a position four past its limit.
func usedOf(used, limit int64) string {
	if limit == 0 {
		return fmt.Sprintf("%d/-", used)
	}
	return fmt.Sprintf("%d/%d", used, limit)
}

// autoKillText says which rule tripped an automatic kill, at which limit,
// by what, and the orders it cancelled.
func autoKillText(a *ops.RiskAutoKill) string {
	limit := "limit unknown"
	if a.Limit != 0 {
		limit = fmt.Sprintf("limit %d", a.Limit)
	}
	t := fmt.Sprintf("%s reached (%s)", a.Rule, limit)
	if a.TrippedBy != "" {
		t += ", tripped by " + a.TrippedBy
	}
	return t + ", " + plural(int64(a.Cancelled), "order") + " cancelled"
}

// limitsText is a subject's limits as name=value pairs sorted by name,
// comma-separated; "-" when it has none.
func limitsText(limits map[string]int64) string {
	if len(limits) == 0 {
		return "-"
	}
	pairs := make([]string, 0, len(limits))
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		pairs = append(pairs, fmt.Sprintf("%s=%d", name, limits[name]))
	}
	return strings.Join(pairs, ",")
}

// dropCopySession reports whether the venue names comp as a drop-copy
// session (GET /v1/sessions).
func (c *adminClient) dropCopySession(comp string) bool {
	var sessions []ops.SessionInfo
	found := false
	c.call("GET", "/v1/sessions", nil, &sessions, func() {
		for _, s := range sessions {
			found = found || (s.CompID == comp && s.DropCopy)
		}
	})
	return found
}
