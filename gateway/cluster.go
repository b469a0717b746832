package gateway

// LoggedOn reports whether session idx is logged on now. A cluster's new
// leader uses it to find the cancel-on-disconnect sessions that did not
// come back after a failover (docs/ARCHITECTURE.md, "Cluster").
func (g *Gateway) LoggedOn(idx uint16) bool {
	return int(idx) < len(g.sessions) && g.sessions[idx].loggedOn.Load()
}
