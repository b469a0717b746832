package server

import "testing"

// TestMappedSourceAddressAllowsIPv4: an allowed source written as an
// IPv4-mapped IPv6 address names the IPv4 client it maps (the edge
// compares IPv4 clients unmapped, so the entry never matched and its
// client was refused).
func TestMappedSourceAddressAllowsIPv4(t *testing.T) {
	s := startServer(t, testConfig(t, t.TempDir(), "[[session]]\ncomp_id = \"MAPPED\"\nallowed_source_addresses = [\"::ffff:127.0.0.1\"]\n"), Options{})
	c := logon(t, s, "MAPPED", true)
	sendOrder(t, c, order{id: "m1", side: "1", qty: "1", px: "99.00"})
	expectER(t, c, map[int]string{11: "m1", 150: "0"})
}
