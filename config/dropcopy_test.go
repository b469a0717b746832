package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestDropCopyConfig(t *testing.T) {
	base := "[[session]]\ncomp_id = \"C1\"\n"
	ok := base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_sessions = [\"C1\"]\ncopy_accounts = [\"A1\"]\n"
	c, err := Parse([]byte(ok), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Sessions[0].IsDropCopy() || !c.Sessions[1].IsDropCopy() {
		t.Fatalf("kinds: %+v", c.Sessions)
	}
	for _, url := range []string{"127.0.0.1:4222", "tls://nats1:4222,tls://nats2:4222", "nats://a:1, nats://b:2,", "wss://n.example"} {
		if _, err := Parse([]byte(base+fmt.Sprintf("[export]\nenabled = true\nnats_url = %q\n", url)), "t.toml"); err != nil {
			t.Errorf("nats_url %q: %v", url, err)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\n", "needs copy_sessions, copy_accounts or copy_all"},
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_sessions = [\"NOPE\"]\n", `"NOPE" is not the CompID of an order session`},
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_sessions = [\"DC\"]\n", `"DC" is not the CompID of an order session`},
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"copy\"\n", `kind: "copy" is not`},
		{"[[session]]\ncomp_id = \"C1\"\ncopy_all = true\n", `need kind = "dropcopy"`},
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_accounts = [\"ABCDEFGHIJKLMNOPQ\"]\n", "is not an account of 1 to 16"},
		{base + "[export]\nformat = \"xml\"\n", `export.format: "xml"`},
		{base + "[export]\nsubject_prefix = \"a.b\"\n", "export.subject_prefix"},
		{base + "[export]\npublish_window = 0\n", "export.publish_window"},
		{base + "[export]\nstream = \"" + strings.Repeat("S", 256) + "\"\n", "is 256 bytes, longer than the 255 JetStream takes"},
		{base + "[export]\nvenue = \"" + strings.Repeat("V", 250) + "\"\n", "export.stream: \"FIXVENUE_VVV"},
		{base + "[export]\ntap_events = 1000\n", "export.tap_events"},
		{base + "[export]\nbatch_interval = \"0s\"\n", "export.batch_interval"},
		{base + "[export]\nbatch_interval = \"2s\"\n", "export.batch_interval"},
		{base + "[export]\nenabled = true\nembedded_addr = \"nope\"\n", "export.embedded_addr"},
		{base + "[export]\nnats_url = \"nats://a\"\nuser = \"u\"\ntoken = \"t\"\n", "export.user, export.token: give"},
		{base + "[export]\nnats_url = \"nats://a\"\npassword = \"p\"\n", "export.password: needs export.user"},
		{base + "[export]\nenabled = true\ntls_ca_file = \"ca.pem\"\n", "export.tls_ca_file: credentials and TLS are for an external NATS"},
		{base + "[export]\nnats_url = \",\"\n", `export.nats_url: "," holds no URL`},
		{base + "[export]\nnats_url = \"nats://a:1, http://b\"\n", `export.nats_url: "http://b": scheme "http"`},
		{base + "[export]\nnats_url = \"nats://:4222\"\n", `export.nats_url: "nats://:4222" names no host`},
	} {
		_, err := Parse([]byte(tc.text), "t.toml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error with %q", tc.text, err, tc.want)
		}
	}
}

// With export on, two instruments whose event subjects would be one are
// refused naming both (SubjectToken); with export off both load.
func TestExportSubjectCollision(t *testing.T) {
	two := instrumentText + strings.Replace(instrumentText, "id = 1\nsymbol = \"X\"", "id = 2\nsymbol = \"X.A\"", 1) +
		strings.Replace(instrumentText, "id = 1\nsymbol = \"X\"", "id = 3\nsymbol = \"X_A\"", 1)
	if _, err := Parse([]byte(two), "t.toml"); err != nil {
		t.Fatalf("without export: %v", err)
	}
	_, err := Parse([]byte(two+"[export]\nenabled = true\n"), "t.toml")
	if err == nil || !strings.Contains(err.Error(), "instrument X_A: its event subjects would be X.A's") {
		t.Fatalf("with export: %v", err)
	}
	for sym, want := range map[string]string{"BRK.A": "BRK_A", "a*b>c d": "a_b_c_d", "PLAIN": "PLAIN"} {
		if got := SubjectToken(sym); got != want {
			t.Errorf("SubjectToken(%q) = %q, want %q", sym, got, want)
		}
	}
}

// instrumentsText lists an instrument for each symbol, ids from 1.
func instrumentsText(symbols ...string) string {
	var b strings.Builder
	for i, sym := range symbols {
		b.WriteString(strings.Replace(instrumentText, "id = 1\nsymbol = \"X\"", fmt.Sprintf("id = %d\nsymbol = %q", i+1, sym), 1))
	}
	return b.String()
}

// Each instrument whose subject token an earlier one has is named with the
// first of them, in the file's order, once per instrument, by one pass
// over a map of tokens; the instruments between, and those alone on their
// token, are not named.
func TestExportSubjectCollisionsNamedInOrder(t *testing.T) {
	_, err := Load(writeConfig(t, instrumentsText("X.A", "Y", "X_A", "Z.B", "X*A", "Z>B", "Q")+"[export]\nenabled = true\n"))
	if err == nil {
		t.Fatal("colliding subjects loaded with export on")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if i := strings.Index(line, "instrument "); i >= 0 && strings.Contains(line, "its event subjects") {
			got = append(got, line[i:]) // the first line starts with the file's name
		}
	}
	want := []string{
		"instrument X_A: its event subjects would be X.A's (export turns '.', '*' and '>' into '_', both are ...orders.X_A); rename one or turn export off",
		"instrument X*A: its event subjects would be X.A's (export turns '.', '*' and '>' into '_', both are ...orders.X_A); rename one or turn export off",
		"instrument Z>B: its event subjects would be Z.B's (export turns '.', '*' and '>' into '_', both are ...orders.Z_B); rename one or turn export off",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("collisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A symbol whose token is that of the events of no instrument shares
	// their subjects.
	_, err = Load(writeConfig(t, instrumentsText("A", ">")+"[export]\nenabled = true\n"))
	if err == nil || !strings.Contains(err.Error(), "instrument >: its event subjects would be those of the events of no instrument (...orders._); rename it or turn export off") {
		t.Fatalf("symbol > with export on: %v", err)
	}
	if _, err := Load(writeConfig(t, instrumentsText("A", ">"))); err != nil {
		t.Fatalf("symbol > with export off: %v", err)
	}
	// A symbol given again is not a collision with itself; the first
	// other symbol of its token is named.
	seen := SubjectTokens{}
	for i, step := range []struct{ sym, other string }{{"A.B", ""}, {"A.B", ""}, {"A_B", "A.B"}, {"A.B", "A_B"}, {"A*B", "A.B"}} {
		if got := seen.Add(step.sym); got != step.other {
			t.Errorf("step %d: Add(%q) = %q, want %q", i, step.sym, got, step.other)
		}
	}
}

// BenchmarkExportSubjectTokens loads 4,096 instruments, each with a
// subject token of its own, with the export on.
func BenchmarkExportSubjectTokens(b *testing.B) {
	symbols := make([]string, 4096)
	for i := range symbols {
		symbols[i] = fmt.Sprintf("S.%d", i)
	}
	text := []byte(instrumentsText(symbols...) + "[export]\nenabled = true\n")
	for b.Loop() {
		if _, err := Parse(text, "bench.toml"); err != nil {
			b.Fatal(err)
		}
	}
}

// A drop-copy grant given twice is refused naming it: an account listed
// twice in copy_accounts sent the drop-copy session two copies of each
// report of that account (the gateway routes a copy per entry).
func TestDropCopyGrantGivenTwice(t *testing.T) {
	base := "[[session]]\ncomp_id = \"C1\"\n[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\n"
	for _, tc := range []struct{ grant, want string }{
		{"copy_accounts = [\"A1\", \"A2\", \"A1\"]\n", `session[1].copy_accounts: "A1" appears twice`},
		{"copy_sessions = [\"C1\", \"C1\"]\n", `session[1].copy_sessions: "C1" appears twice`},
	} {
		_, err := Load(writeConfig(t, base+tc.grant))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.grant, err, tc.want)
		}
	}
	if _, err := Load(writeConfig(t, base+"copy_sessions = [\"C1\"]\ncopy_accounts = [\"C1\", \"A1\"]\n")); err != nil {
		t.Fatalf("a session and an account of one name: %v", err)
	}
}

// TestSessionAccounts: an order session's accounts load; a drop-copy
// session with accounts, an empty or too long account and one listed twice
// are refused, naming the key.
func TestSessionAccounts(t *testing.T) {
	c, err := Parse([]byte("[[session]]\ncomp_id = \"C%d\"\nrange = [1, 2]\naccounts = [\"A1\", \"A2\"]\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Sessions[1].Accounts; len(got) != 2 || got[1] != "A2" {
		t.Fatalf("C2's accounts: %q", got)
	}
	base := "[[session]]\ncomp_id = \"C1\"\n"
	for _, tc := range []struct{ text, want string }{
		{base + "[[session]]\ncomp_id = \"DC\"\nkind = \"dropcopy\"\ncopy_all = true\naccounts = [\"A1\"]\n", "session[1].accounts: a drop-copy session enters no orders"},
		{base + "accounts = [\"\"]\n", `session[0].accounts: "" is not an account of 1 to 16`},
		{base + "accounts = [\"ABCDEFGHIJKLMNOPQ\"]\n", "is not an account of 1 to 16"},
		{base + "accounts = [\"A1\", \"A1\"]\n", `session[0].accounts: "A1" appears twice`},
	} {
		if _, err := Parse([]byte(tc.text), "t.toml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}
