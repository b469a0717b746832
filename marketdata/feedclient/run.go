package feedclient

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// pollInterval bounds how long Run waits on the socket before it checks gap
// timers, Inspect requests and the context.
const pollInterval = 5 * time.Millisecond

// listen opens a line's socket: unicast, or a multicast group joined on
// the interface ifName.
func (c *Client) listen(feedAddr, ifName string) (*net.UDPConn, error) {
	addr, err := net.ResolveUDPAddr("udp", feedAddr)
	if err != nil {
		return nil, fmt.Errorf("feedclient: feed address %q: %w", feedAddr, err)
	}
	var conn *net.UDPConn
	if addr.IP.IsMulticast() {
		ifi, err := multicastInterface(ifName)
		if err != nil {
			return nil, err
		}
		conn, err = net.ListenMulticastUDP("udp", ifi, addr)
	} else {
		conn, err = net.ListenUDP("udp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("feedclient: feed socket %s: %w", feedAddr, err)
	}
	_ = conn.SetReadBuffer(c.cfg.ReceiveBufferBytes)
	return conn, nil
}

// Run receives the feed until ctx ends: it joins with a snapshot, applies
// packets, recovers gaps, and serves Inspect requests. It returns ctx's
// error, or the error that made a socket unusable.
func (c *Client) Run(ctx context.Context) error {
	conn := c.cfg.Conn
	if conn == nil {
		var err error
		if conn, err = c.listen(c.cfg.FeedAddr, c.cfg.MulticastInterface); err != nil {
			if c.cfg.ConnB != nil {
				c.cfg.ConnB.Close()
			}
			return err
		}
	}
	return c.RunConn(ctx, conn)
}

// RunConn is Run on a socket the caller opened (and Run closes) as the A
// line; the B line, when configured, is Config.ConnB or a socket on
// Config.FeedBAddr.
func (c *Client) RunConn(ctx context.Context, conn *net.UDPConn) error {
	conns := []*net.UDPConn{conn}
	switch {
	case c.cfg.ConnB != nil:
		conns = append(conns, c.cfg.ConnB)
	case c.cfg.FeedBAddr != "":
		connB, err := c.listen(c.cfg.FeedBAddr, cmp.Or(c.cfg.MulticastInterfaceB, c.cfg.MulticastInterface))
		if err != nil {
			conn.Close()
			return err
		}
		conns = append(conns, connB)
	}
	return c.runLines(ctx, conns)
}

// lineBuffers bounds the datagrams the lines' readers hold ahead of the
// client's goroutine, all lines together: while it recovers (synchronously)
// the readers stop at the bound and the kernel buffers the rest
// (ReceiveBufferBytes), as with no reader between.
const lineBuffers = 64

// datagram is one datagram a line's reader read into buf.
type datagram struct {
	buf  []byte
	n    int
	line int
}

// runLines reads each line on a goroutine of its own, into buffers taken
// from a fixed set, and handles the datagrams on the calling goroutine in
// the order they were read, whichever line brought them. Nothing else
// touches the client: its books stay free of locks. Poll and OnIdle run
// once no datagram came for a poll interval. The sockets are closed, and
// the readers gone, when it returns.
func (c *Client) runLines(ctx context.Context, conns []*net.UDPConn) error {
	defer c.rec.Close()
	stop := context.AfterFunc(ctx, func() { c.rec.Close() })
	defer stop()
	c.lines = len(conns)
	free := make(chan []byte, lineBuffers)
	for range lineBuffers {
		free <- make([]byte, packet.DatagramBytesMax+1) // one byte more: oversized datagrams show up as such
	}
	in := make(chan datagram, lineBuffers)
	failed := make(chan error, len(conns))
	done := make(chan struct{})
	var readers sync.WaitGroup
	for line, conn := range conns {
		readers.Go(func() { readLine(conn, line, free, in, failed, done) })
	}
	defer func() {
		close(done)
		for _, conn := range conns {
			conn.Close()
		}
		readers.Wait()
	}()
	idle := time.NewTimer(pollInterval)
	defer idle.Stop()
	c.join()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case fn := <-c.inspect:
			fn(c)
		case d := <-in:
			c.handleLine(d.buf[:d.n], d.line)
			free <- d.buf
			idle.Reset(pollInterval)
		case <-idle.C:
			c.Poll()
			if cb := c.cfg.Callbacks.OnIdle; cb != nil {
				cb()
			}
			idle.Reset(pollInterval)
		case err := <-failed:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
}

// readLine reads one line's socket until it fails or done is closed.
func readLine(conn *net.UDPConn, line int, free chan []byte, in chan<- datagram, failed chan<- error, done <-chan struct{}) {
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-done:
			return
		}
		n, _, err := conn.ReadFromUDP(buf)
		if err != nil {
			failed <- err // room for every line's
			return
		}
		select {
		case in <- datagram{buf: buf, n: n, line: line}:
		case <-done:
			return
		}
	}
}

// handleLine is HandlePacket for a datagram of a line, counted there.
func (c *Client) handleLine(pkt []byte, line int) {
	c.line = line
	dup := c.stats.Duplicates
	c.stats.Lines[line].Datagrams++
	c.HandlePacket(pkt)
	c.stats.Lines[line].Duplicates += c.stats.Duplicates - dup
	c.line = 0
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
