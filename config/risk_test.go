package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixvenue/fixvenue/core"
)

func TestRiskConfig(t *testing.T) {
	good := `
[risk]
control_token = "t"
[risk.sessions]
max_order_qty = 100
[[risk.session]]
comp_id = "CLIENT2"
credit_limit = 5000
[[risk.account]]
name = "FUND"
max_position = 10
[[risk.account.instrument]]
symbol = "ACME"
max_position = 5
`
	c, err := Parse([]byte(good), "risk.toml")
	if err != nil {
		t.Fatal(err)
	}
	if Value(c.Risk.Sessions.MaxOrderQty) != 100 || Value(c.Risk.Account[0].Instrument[0].MaxPosition) != 5 {
		t.Fatalf("parsed %+v", c.Risk)
	}
	for _, bad := range []struct{ text, want string }{
		{"[risk.sessions]\nmax_order_qty = 0\n", "risk.sessions.max_order_qty: 0 is outside [1, 4611686018427387902]"},
		{"[risk.sessions]\ncredit_limit = -5\n", "risk.sessions.credit_limit: -5 is outside"},
		{"[risk.sessions]\ncredit_limit = 9223372036854775807\n", "risk.sessions.credit_limit: 9223372036854775807 is outside"},
		{"[[risk.session]]\ncomp_id = \"NOBODY\"\n", `unknown session comp_id "NOBODY"`},
		{"[[risk.account]]\nname = \"FUND\"\n[[risk.account.instrument]]\nsymbol = \"NOPE\"\n", `unknown instrument "NOPE"`},
		{"[[risk.account]]\nname = \"A\"\n[[risk.account]]\nname = \"A\"\n", `account "A" appears twice`},
		{"[[risk.account]]\nname = \"ABCDEFGHIJKLMNOPQ\"\n", "must be 1 to 16 characters"},
	} {
		_, err := Parse([]byte(bad.text), "bad.toml")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
}

// A [[risk.session]] naming a drop-copy session, which enters no orders,
// is refused: its limits would be checked against nothing and shown
// nowhere (GET /v1/risk lists order sessions, and its calls refuse a
// drop-copy one).
func TestRiskSessionRefusesADropCopySession(t *testing.T) {
	sessions := "[[session]]\ncomp_id = \"C1\"\n[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_sessions = [\"C1\"]\n[risk]\n"
	_, err := Load(writeConfig(t, sessions+"[[risk.session]]\ncomp_id = \"DC\"\nmax_order_qty = 10\n"))
	if err == nil || !strings.Contains(err.Error(), `risk.session[0].comp_id: "DC" is a drop-copy session: it enters no orders, so it has no risk limits`) {
		t.Fatalf("risk limits of a drop-copy session: %v", err)
	}
	if _, err := Load(writeConfig(t, sessions+"[[risk.session]]\ncomp_id = \"C1\"\nmax_order_qty = 10\n")); err != nil {
		t.Fatalf("risk limits of an order session: %v", err)
	}
}

// The matcher's risk bounds are refused at load naming the keys: more
// accounts than core.RiskAccountsMax, and more sessions and accounts ×
// instruments the table may hold (engine.instruments_max) than
// core.RiskCellsMax, each a cell of 64 bytes made at start. The cells
// were counted for the configured instruments alone, so 64 sessions and
// room for 65,535 instruments loaded, and the venue made 268 MB of cells
// (4,096 sessions, 17 GB).
func TestRiskBoundsRefusedAtLoad(t *testing.T) {
	sessions := "[[session]]\ncomp_id = \"C%d\"\nrange = [1, 64]\n"
	_, err := Load(writeConfig(t, sessions+"[engine]\ninstruments_max = 65535\n[risk]\n"))
	if err == nil || !strings.Contains(err.Error(), "risk: 64 sessions and accounts × 65535 instruments (engine.instruments_max, else the configured ones + 256) "+
		"need 4194240 risk cells of 64 bytes, at most 1048576 (64 MiB): lower engine.instruments_max") {
		t.Fatalf("64 sessions × 65,535 instruments: %v", err)
	}
	if _, err := Load(writeConfig(t, sessions+"[engine]\ninstruments_max = 16384\n[risk]\n")); err != nil {
		t.Fatalf("64 sessions × 16,384 instruments: %v", err)
	}
	var accounts strings.Builder
	for i := range core.RiskAccountsMax + 1 {
		fmt.Fprintf(&accounts, "[[risk.account]]\nname = \"A%d\"\n", i)
	}
	_, err = Load(writeConfig(t, sessions+"[risk]\n"+accounts.String()))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("risk.account: %d accounts, at most %d", core.RiskAccountsMax+1, core.RiskAccountsMax)) {
		t.Fatalf("%d accounts: %v", core.RiskAccountsMax+1, err)
	}
}
