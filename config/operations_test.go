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
