package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/fixvenue/fixvenue/internal/connset"
	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// followerGate answers FIX connections while this node does not lead: it
// reads the Logon and refuses it with a Logout whose Text names the
// leader's FIX address, so that a client tries the next address it knows
// (README, "Cluster: three replicas").
type followerGate struct {
	ln     net.Listener     // tcp, or TLS over it
	tcp    *net.TCPListener // the socket, which HandOver gives the venue
	leader func() string    // the leader's FIX address, "" while none is known
	log    *slog.Logger
	wg     sync.WaitGroup // the accept loop
	conns  *connset.Set
	// bySource counts each client address's open connections (mu), at
	// most followerConnsPerSourceMax: one address cannot hold the gate's
	// followerConnsMax and keep every client from hearing of the leader.
	mu       sync.Mutex
	bySource map[netip.Addr]int
	// given: HandOver gave the socket away (Close leaves it open); closed:
	// Close closed it (HandOver has none to give). Under mu.
	given, closed bool
}

// Bounds of the gate: one Logon per connection, read within followerReadWait.
const (
	followerReadWait     = 5 * time.Second
	followerMessageBytes = 8 << 10
	followerConnsMax     = 256
	// followerConnsPerSourceMax bounds one address's connections to the
	// gate (a firm behind one address reconnects its sessions at once).
	followerConnsPerSourceMax = 64
)

// startFollowerGate answers on inherited, the FIX socket the process
// before a re-execution handed over (PrepareRestart), or on addr bound
// anew when there is none.
func startFollowerGate(addr string, inherited net.Listener, tlsConfig *tls.Config, leader func() string, log *slog.Logger) (*followerGate, error) {
	tcp, _ := inherited.(*net.TCPListener)
	if tcp == nil {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		tcp = l.(*net.TCPListener)
	}
	var ln net.Listener = tcp
	if tlsConfig != nil {
		// The leader's port takes TLS only; so does a follower's, which
		// names the leader to TLS clients (a plain one answered plain text).
		ln = tls.NewListener(ln, tlsConfig)
	}
	g := &followerGate{ln: ln, tcp: tcp, leader: leader, log: log, conns: connset.New(followerConnsMax), bySource: map[netip.Addr]int{}}
	g.wg.Add(1)
	go g.serve()
	return g, nil
}

func (g *followerGate) serve() {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			g.mu.Lock()
			ended := g.given || g.closed
			g.mu.Unlock()
			if ended || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		src := sourceOf(c)
		g.mu.Lock()
		full := g.bySource[src] >= followerConnsPerSourceMax
		if !full {
			g.bySource[src]++
		}
		g.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		if !g.conns.Serve(c, func(c net.Conn) {
			defer g.left(src)
			g.refuse(c)
		}) {
			g.left(src) // refused: serve never runs
		}
	}
}

// left counts a connection of src closed.
func (g *followerGate) left(src netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.bySource[src]--; g.bySource[src] <= 0 {
		delete(g.bySource, src)
	}
}

// sourceOf is a connection's client address (unmapped; the zero address
// when it has none).
func sourceOf(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// refuse reads one message and, when it is a Logon, answers with a Logout
// that names the leader.
func (g *followerGate) refuse(c net.Conn) {
	c.SetDeadline(time.Now().Add(followerReadWait))
	msg, err := fixwire.NewReader(c, followerMessageBytes).Next()
	if err != nil {
		return
	}
	var msgType, sender, target, begin string
	it := fixwire.NewIterator(msg)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		switch f.Tag {
		case 8:
			begin = string(f.Value)
		case 35:
			msgType = string(f.Value)
		case 49:
			sender = string(f.Value)
		case 56:
			target = string(f.Value)
		}
	}
	if msgType != "A" || begin == "" {
		return
	}
	text := "not the leader; no leader elected yet, try the other nodes"
	if l := g.leader(); l != "" {
		text = "not the leader; leader FIX address " + l
	}
	body := []byte("35=5\x0149=" + target + "\x0156=" + sender + "\x0134=1\x0152=" +
		time.Now().UTC().Format("20060102-15:04:05.000") + "\x0158=" + text + "\x01")
	_, _ = c.Write(fixwire.AppendMessage(nil, begin, body))
	g.log.Info("cluster: logon refused on a follower", "comp_id", sender, "leader_fix", g.leader())
}

// Addr is the bound FIX address.
func (g *followerGate) Addr() string { return g.ln.Addr().String() }

// Close stops accepting and ends every open connection; it closes the
// socket unless HandOver gave it away.
func (g *followerGate) Close() {
	g.mu.Lock()
	given := g.given
	g.closed = true
	g.mu.Unlock()
	if !given {
		g.ln.Close()
	}
	g.conns.Close()
	g.wg.Wait()
	g.conns.Wait()
}

// HandOver stops accepting, ends every open connection and returns the
// listening socket, open, for the venue's FIX edge to accept on
// (edge.Config.Socket): closing it and binding the address again would
// refuse the clients that dial in between and reset the connections the
// kernel had queued for it, at every promotion (docs/ARCHITECTURE.md,
// "Cluster"). Nil when Close closed it already.
func (g *followerGate) HandOver() *net.TCPListener {
	g.mu.Lock()
	if g.closed || g.given {
		g.mu.Unlock()
		return nil
	}
	g.given = true
	g.mu.Unlock()
	// A deadline in the past ends the Accept under way; the loop sees
	// given and returns. Connections the kernel queued meanwhile stay
	// queued for the edge.
	_ = g.tcp.SetDeadline(time.Unix(1, 0))
	g.wg.Wait()
	_ = g.tcp.SetDeadline(time.Time{})
	g.conns.Close()
	g.conns.Wait()
	return g.tcp
}

func formatID(id uint64) string { return strconv.FormatUint(id, 10) }
