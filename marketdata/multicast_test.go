package marketdata

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

// TestMulticastFeed runs the feed to a multicast group on the loopback
// interface, and the client joins the group itself. Hosts whose loopback
// cannot carry multicast skip it.
func TestMulticastFeed(t *testing.T) {
	probe := udpSink(t)
	port := probe.LocalAddr().(*net.UDPAddr).Port
	probe.Close()
	group := fmt.Sprintf("239.255.77.1:%d", port)
	gaddr, _ := net.ResolveUDPAddr("udp", group)
	lo, err := loopbackInterface()
	if err != nil {
		t.Skip(err)
	}
	conn, err := net.ListenMulticastUDP("udp", lo, gaddr)
	if err != nil {
		t.Skipf("no multicast on loopback here: %v", err)
	}
	defer conn.Close()
	fx := newFeedFixture(t, group, func(c *FeedConfig) { c.MulticastInterface = "127.0.0.1" })
	sim := newVenueSim(t, 8)
	fx.run(sim, 5)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Read(make([]byte, 2048)); err != nil {
		t.Skipf("multicast datagrams do not loop back here: %v", err)
	}

	c, err := feedclient.New(feedclient.Config{FeedAddr: group, MulticastInterface: "127.0.0.1",
		RecoveryAddr: fx.feed.RecoveryAddr().String()})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c.Run)
	fx.run(sim, 500)
	waitConverged(t, fx, c)
}

func loopbackInterface() (*net.Interface, error) {
	ifis, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for i := range ifis {
		if ifis[i].Flags&net.FlagLoopback != 0 {
			return &ifis[i], nil
		}
	}
	return nil, errors.New("no loopback interface")
}
