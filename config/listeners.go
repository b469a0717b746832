package config

import (
	"fmt"
	"net"
)

// Listener is one TCP address this process listens at, with the key that
// sets it.
type Listener struct {
	Key, Addr string
}

// Listeners lists the TCP addresses the venue (or this cluster node)
// listens at: FIX, metrics, the admin API, market-data recovery, the
// embedded NATS server, and a node's Raft and status addresses. Listeners
// that are off are left out.
func (c *Config) Listeners() []Listener {
	var out []Listener
	add := func(key, addr string) {
		if addr != "" {
			out = append(out, Listener{key, addr})
		}
	}
	if c.Cluster.Enabled() {
		for i, p := range c.Cluster.Peers {
			if p.ID == c.Cluster.NodeID {
				key := fmt.Sprintf("cluster.peer[%d]", i)
				add(key+".fix_addr", p.FIXAddr)
				add(key+".raft_addr", p.RaftAddr)
				add(key+".status_addr", p.StatusAddr)
			}
		}
	} else {
		add("fix.addr", c.FIX.Addr)
	}
	add("metrics.addr", c.Metrics.Addr)
	add("admin.addr", c.Admin.Addr)
	if c.MarketData.Enabled {
		add("marketdata.recovery_addr", c.MarketData.RecoveryAddr)
	}
	if c.Export.Embedded() {
		add("export.embedded_addr", c.Export.EmbeddedAddr)
	}
	return out
}

// CheckListeners refuses two of the venue's TCP listeners at one address:
// the second could not bind, and the start failed only once the data
// directory was in use and the journal replayed, with "address already in
// use" as if another process held the port. Port 0 (any free port) never
// collides; a wildcard host (0.0.0.0, ::, none) collides with every host
// on its port. serve checks again after its address flags.
func (c *Config) CheckListeners() error {
	ls := c.Listeners()
	for i, a := range ls {
		for _, b := range ls[:i] {
			if sameListenAddr(a.Addr, b.Addr) {
				return fmt.Errorf("%s: %q is also %s: two listeners cannot share an address", a.Key, a.Addr, b.Key)
			}
		}
	}
	return nil
}

// sameListenAddr reports whether listening at a and at b would take the
// same port on a common address.
func sameListenAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return false
	}
	// The port as a listener takes it: "09878" is 9878, as a service name
	// is its number.
	na, errA := net.LookupPort("tcp", pa)
	nb, errB := net.LookupPort("tcp", pb)
	if errA != nil || errB != nil || na != nb || na == 0 {
		return false
	}
	ha, hb = listenHost(ha), listenHost(hb)
	return ha == "" || hb == "" || ha == hb
}

// listenHost is host as a listener takes it: "" for every address, an IP
// in its canonical form, localhost as 127.0.0.1.
func listenHost(host string) string {
	if host == "localhost" {
		return "127.0.0.1"
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.IsUnspecified():
		return ""
	}
	return ip.String()
}
