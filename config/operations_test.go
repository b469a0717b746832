package config

import (
	"strings"
	"testing"
)

func TestAdminConfig(t *testing.T) {
	c, err := Parse(Default(), "default.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Addr != "127.0.0.1:9465" || len(c.Admin.Tokens) != 0 || c.Schedule.Enabled {
		t.Fatalf("defaults: %+v %+v", c.Admin, c.Schedule)
	}
	hash := strings.Repeat("ab", 32)
	ok := "[admin]\naddr = \"[::1]:0\"\n[[admin.token]]\noperator = \"alice\"\nsha256 = \"" + hash + "\"\n"
	if c, err := Parse([]byte(ok), "t.toml"); err != nil || c.Admin.Tokens[0].Operator != "alice" {
		t.Fatalf("valid admin config: %v", err)
	}
	for _, bad := range []struct{ text, want string }{
		{"[admin]\naddr = \"0.0.0.0:9465\"\n", "not a loopback address"},
		{"[admin]\naddr = \":9465\"\n", "not a loopback address"},
		{"[admin]\naddr = \"10.1.2.3:9465\"\ntls_key_file = \"k\"\n", "give both or neither"},
		{"[admin]\nbody_bytes_max = 0\n", "admin.body_bytes_max"},
		{"[[admin.token]]\noperator = \"alice\"\nsha256 = \"abc\"\n", "admin.token[0].sha256"},
		{"[[admin.token]]\noperator = \"alice\"\nsha256 = \"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\"\n", "admin.token[0].sha256: is the SHA-256 of an empty token"},
		{"[[admin.token]]\noperator = \"a very long operator name\"\nsha256 = \"" + hash + "\"\n", "admin.token[0].operator"},
		{"[[admin.token]]\noperator = \"a\"\nsha256 = \"" + hash + "\"\n[[admin.token]]\noperator = \"b\"\nsha256 = \"" + hash + "\"\n", "admin.token[1].sha256"},
	} {
		if _, err := Parse([]byte(bad.text), "t.toml"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
	// With TLS the admin API may listen beyond loopback.
	if _, err := Parse([]byte("[admin]\naddr = \"0.0.0.0:9465\"\ntls_cert_file = \"c\"\ntls_key_file = \"k\"\n"), "t.toml"); err != nil {
		t.Fatal(err)
	}
}

// TestScheduleGroupNamesAreUnique: the admin API names a group by its name,
// so two groups with one name are refused (a phase call moved only one).
func TestScheduleGroupNamesAreUnique(t *testing.T) {
	text := "[schedule]\nenabled = true\nend_of_day = \"17h\"\n" +
		"[[schedule.group]]\nname = \"g\"\ninstruments = [\"ACME\"]\npre_open = \"7h\"\nopen = \"8h\"\nclose = \"16h\"\n" +
		"[[schedule.group]]\nname = \"g\"\npre_open = \"7h\"\nopen = \"8h\"\nclose = \"16h\"\n"
	if _, err := Parse([]byte(text), "t.toml"); err == nil || !strings.Contains(err.Error(), `schedule.group[1].name: "g" repeats schedule.group[0]`) {
		t.Fatalf("error %v", err)
	}
}

// TestPublicDemoTokenStaysOnLoopback: the cluster demo's operator token is
// published (README, deploy/cluster), so a node keeps it only while the
// listeners that take a token, the admin API and its own cluster status
// listener, are on loopback; beyond, the configuration is refused naming
// the token's entry and the listener.
func TestPublicDemoTokenStaysOnLoopback(t *testing.T) {
	const demo = "a3b168c6973e4775298b1209c7c605ef80cba952ca6e32f822f8ab418fd43c1b" // fixvenue admin hash-token cluster-demo-operator-token
	own := strings.Repeat("ab", 32)
	token := func(operator, sum, role string) string {
		return "[[admin.token]]\noperator = \"" + operator + "\"\nsha256 = \"" + sum + "\"\nrole = \"" + role + "\"\n"
	}
	tls := "tls_cert_file = \"c\"\ntls_key_file = \"k\"\n"
	// node 2's status_addr, or another node's, moved off loopback.
	selfStatus := func(addr string) string {
		return strings.Replace(clusterTOML, `status_addr = "127.0.0.1:9712"`, `status_addr = "`+addr+`"`, 1)
	}
	otherStatus := strings.Replace(clusterTOML, `status_addr = "127.0.0.1:9713"`, `status_addr = "10.0.0.3:9713"`, 1)
	for _, tc := range []struct {
		name, text string
		want       []string // nil: accepted
	}{
		{"the loopback demo", "[admin]\naddr = \"127.0.0.1:9481\"\n" + token("demo", demo, "") + clusterTOML, nil},
		{"admin on localhost", "[admin]\naddr = \"localhost:9481\"\n" + token("demo", demo, ""), nil},
		{"admin off, status on loopback", "[admin]\naddr = \"\"\n" + token("demo", demo, "") + clusterTOML, nil},
		{"own token beyond loopback", "[admin]\naddr = \"0.0.0.0:9481\"\n" + tls + token("alice", own, "") + selfStatus("10.0.0.2:9712"), nil},
		{"another node's status beyond loopback", "[admin]\naddr = \"127.0.0.1:9481\"\n" + token("demo", demo, "") + otherStatus, nil},
		{"admin on every interface", "[admin]\naddr = \"0.0.0.0:9481\"\n" + tls + token("demo", demo, ""),
			[]string{"admin.token[0].sha256", `"cluster-demo-operator-token"`, `admin.addr "0.0.0.0:9481"`}},
		{"admin on a host name, as a read token, in upper case", "[admin]\naddr = \"venue.example:9481\"\n" + tls +
			token("alice", own, "") + token("viewer", strings.ToUpper(demo), "read"),
			[]string{"admin.token[1].sha256", `admin.addr "venue.example:9481"`}},
		{"this node's status on a private address", "[admin]\naddr = \"127.0.0.1:9481\"\n" + token("demo", demo, "") + selfStatus("10.0.0.2:9712"),
			[]string{"admin.token[0].sha256", `cluster.peer[1].status_addr "10.0.0.2:9712"`}},
		{"this node's status on every interface", "[admin]\naddr = \"127.0.0.1:9481\"\n" + token("demo", demo, "") + selfStatus(":9712"),
			[]string{"admin.token[0].sha256", `cluster.peer[1].status_addr ":9712"`}},
	} {
		_, err := Parse([]byte(tc.text), "t.toml")
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != nil && err == nil:
			t.Errorf("%s: accepted", tc.name)
		case tc.want != nil:
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %v, want %q in it", tc.name, err, w)
				}
			}
		}
	}
}

// TestStatusInClear: a cluster node's status listener serves TLS with the
// admin API's certificate; without one, an address beyond loopback takes a
// transfer's token in clear, and the node warns of it at start.
func TestStatusInClear(t *testing.T) {
	plain, withTLS := &Admin{}, &Admin{TLSCertFile: "c", TLSKeyFile: "k"}
	for _, tc := range []struct {
		admin *Admin
		addr  string
		want  bool
	}{
		{plain, "127.0.0.1:9711", false},
		{plain, "[::1]:9711", false},
		{plain, "localhost:9711", false},
		{plain, "10.0.0.2:9711", true},
		{plain, ":9711", true},
		{plain, "0.0.0.0:9711", true},
		{plain, "venue-b.example:9711", true},
		{withTLS, "10.0.0.2:9711", false},
		{withTLS, ":9711", false},
	} {
		if got := tc.admin.InClear(tc.addr); got != tc.want {
			t.Errorf("status_addr %q, tls_cert_file %q: in clear %v, want %v", tc.addr, tc.admin.TLSCertFile, got, tc.want)
		}
	}
}
