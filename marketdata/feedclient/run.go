package feedclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// pollInterval bounds how long Run waits on the socket before it checks gap
// timers, Inspect requests and the context.
const pollInterval = 5 * time.Millisecond

// listen opens the feed socket: unicast, or a multicast group joined on
// the configured interface.
func (c *Client) listen() (*net.UDPConn, error) {
	addr, err := net.ResolveUDPAddr("udp", c.cfg.FeedAddr)
	if err != nil {
		return nil, fmt.Errorf("feedclient: feed address %q: %w", c.cfg.FeedAddr, err)
	}
	var conn *net.UDPConn
	if addr.IP.IsMulticast() {
		ifi, err := multicastInterface(c.cfg.MulticastInterface)
		if err != nil {
			return nil, err
		}
		conn, err = net.ListenMulticastUDP("udp", ifi, addr)
	} else {
		conn, err = net.ListenUDP("udp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("feedclient: feed socket: %w", err)
	}
	_ = conn.SetReadBuffer(c.cfg.ReceiveBufferBytes)
	return conn, nil
}

// Run receives the feed until ctx ends: it joins with a snapshot, applies
// packets, recovers gaps, and serves Inspect requests. It returns ctx's
// error, or the error that made the socket unusable.
func (c *Client) Run(ctx context.Context) error {
	if c.cfg.Conn != nil {
		return c.RunConn(ctx, c.cfg.Conn)
	}
	conn, err := c.listen()
	if err != nil {
		return err
	}
	return c.RunConn(ctx, conn)
}

// RunConn is Run on a socket the caller opened (and Run closes).
func (c *Client) RunConn(ctx context.Context, conn *net.UDPConn) error {
	defer conn.Close()
	defer c.rec.Close()
	stop := context.AfterFunc(ctx, func() { c.rec.Close() })
	defer stop()
	buf := make([]byte, packet.DatagramBytesMax+1) // one byte more: oversized datagrams show up as such
	c.join()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case fn := <-c.inspect:
			fn(c)
		default:
		}
		_ = conn.SetReadDeadline(time.Now().Add(pollInterval))
		n, _, err := conn.ReadFromUDP(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.Poll()
				if cb := c.cfg.Callbacks.OnIdle; cb != nil {
					cb()
				}
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		c.HandlePacket(buf[:n])
	}
}

// Inspect runs fn on the client's goroutine (between packets) and waits for
// it: the way for other goroutines to read books while Run is running.
func (c *Client) Inspect(ctx context.Context, fn func(c *Client)) error {
	done := make(chan struct{})
	wrapped := func(c *Client) {
		defer close(done)
		fn(c)
	}
	select {
	case c.inspect <- wrapped:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// multicastInterface finds an interface by name or by one of its IPs; ""
// means the system's choice.
func multicastInterface(nameOrIP string) (*net.Interface, error) {
	if nameOrIP == "" {
		return nil, nil
	}
	ip := net.ParseIP(nameOrIP)
	if ip == nil {
		ifi, err := net.InterfaceByName(nameOrIP)
		if err != nil {
			return nil, fmt.Errorf("feedclient: multicast interface: %w", err)
		}
		return ifi, nil
	}
	ifis, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("feedclient: multicast interface: %w", err)
	}
	for i := range ifis {
		addrs, _ := ifis[i].Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return &ifis[i], nil
			}
		}
	}
	return nil, fmt.Errorf("feedclient: no interface has address %s", ip)
}
