// Package testports gives the tests that write a venue's addresses into its
// configuration before the venue binds them (a cluster's Raft, FIX and
// status addresses, the market data feed and recovery addresses) ports
// that stay free for it: cmd/fixvenue's, which bind them again when they
// restart a killed node, and server's, whose nodes run beside other tests
// in the same process.
//
// Between the reservation's release and the bind, or between a kill and
// the restart, the port is free, and the kernel may hand it to any outgoing
// connection on the machine (a node redialling its peers, a link proxy,
// another test) as its ephemeral source port; the bind then fails with
// "address already in use". SO_REUSEADDR, which Go sets on every listener,
// only lets a bind share the port with sockets in TIME_WAIT or that set it
// too, not with such a connection. So these ports come from outside the
// ephemeral range (net.ipv4.ip_local_port_range), which the kernel never
// picks by itself; each is checked by binding it, and the test holds all
// of them until release so that none is handed out twice.
//
// Contract: Reserve returns distinct loopback ports, none returned before
// in the test binary, each bound until release; a port of the system's
// choosing (:0) when no range outside the ephemeral one leaves a thousand
// ports. Limits: a port held by another process between the release and
// the bind is not prevented, only made unlikely; a test fails after
// 10n+1000 attempts to find n.
package testports
