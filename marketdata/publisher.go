package marketdata

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/packet"
	mdsbe "github.com/fixvenue/fixvenue/sbe/marketdata"
)

// publisher is the feed's packet.Sink: it keeps each sequenced packet in the
// retransmission window, then sends it as one UDP datagram. It also sends
// heartbeats when the channel has been idle for an interval.
//
// A failed send is counted, not fatal: UDP may lose any datagram, and the
// window lets clients recover it. The window append comes first, so a
// packet is always retransmittable once it exists.
type publisher struct {
	conn    *net.UDPConn
	dst     *net.UDPAddr
	dstB    *net.UDPAddr // the B line, nil without one: the same datagrams, from the same socket
	channel uint16
	win     *window
	// quiet keeps packets in the window without sending them: set while the
	// feed is rebuilt from the journal at start-up (see Feed.Replay), when
	// every packet repeats one that was sent before the restart.
	quiet bool
	// bFromStandby sends the B line from a standby feed alone
	// (FeedConfig.BLineFromStandby): a live feed sends line A only, and a
	// quiet one with standbyB set sends what it builds on line B, but for
	// packets older than StandbyBLineAgeMax.
	bFromStandby, standbyB bool

	mu         sync.Mutex // guards lastSendNs and hbBuf, and orders packets and heartbeats on the socket
	lastSendNs int64      // wall clock of the last datagram, for heartbeats
	hbBuf      [packet.HeaderSize + packet.LengthPrefixSize + mdsbe.HeartbeatEncodedLength]byte

	packetsSent    atomic.Uint64
	packetsSentB   atomic.Uint64
	packetsStaleB  atomic.Uint64 // a standby's packets kept off the B line (StandbyBLineAgeMax)
	bytesSent      atomic.Uint64
	sendErrors     atomic.Uint64
	heartbeatsSent atomic.Uint64
	now            func() time.Time
}

// ErrFeedAddr is NewFeed's error when FeedConfig.FeedAddr cannot be
// resolved or is refused, so that a caller can name its own key for the
// address.
var ErrFeedAddr = errors.New("marketdata: feed address")

// ErrFeedBAddr is ErrFeedAddr for FeedConfig.FeedBAddr.
var ErrFeedBAddr = errors.New("marketdata: B line address")

// feedDestination resolves a feed line's destination: loopback or
// multicast unless cfg.AllowNonLoopback.
func feedDestination(cfg *FeedConfig, addr string, kind error) (*net.UDPAddr, error) {
	dst, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", kind, addr, err)
	}
	if !dst.IP.IsLoopback() && !dst.IP.IsMulticast() && !cfg.AllowNonLoopback {
		return nil, fmt.Errorf("%w %s is neither loopback nor multicast (set AllowNonLoopback)", kind, dst)
	}
	return dst, nil
}

func newPublisher(cfg *FeedConfig, win *window) (*publisher, error) {
	dst, err := feedDestination(cfg, cfg.FeedAddr, ErrFeedAddr)
	if err != nil {
		return nil, err
	}
	var dstB *net.UDPAddr
	if cfg.FeedBAddr != "" {
		if dstB, err = feedDestination(cfg, cfg.FeedBAddr, ErrFeedBAddr); err != nil {
			return nil, err
		}
		if dstB.String() == dst.String() {
			return nil, fmt.Errorf("%w %s is the A line's: each datagram would reach its receivers twice by one path", ErrFeedBAddr, dstB)
		}
	}
	var laddr *net.UDPAddr
	if cfg.MulticastInterface != "" {
		laddr, err = net.ResolveUDPAddr("udp", net.JoinHostPort(cfg.MulticastInterface, "0"))
		if err != nil {
			return nil, fmt.Errorf("marketdata: multicast interface %q: %w", cfg.MulticastInterface, err)
		}
	}
	// An unconnected socket: sends to a unicast port nobody listens on do not
	// come back as errors on later sends.
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("marketdata: feed socket: %w", err)
	}
	if cfg.SendBufferBytes > 0 {
		_ = conn.SetWriteBuffer(cfg.SendBufferBytes)
	}
	return &publisher{conn: conn, dst: dst, dstB: dstB, channel: cfg.Channel, win: win, now: cfg.Clock}, nil
}

// WritePacket implements packet.Sink for sequenced packets.
func (p *publisher) WritePacket(pkt []byte, seq uint64, count int) error {
	if seq == 0 {
		return errors.New("marketdata: the feed sink takes sequenced packets only")
	}
	p.win.append(pkt, seq, count)
	switch {
	case !p.quiet:
		p.send(pkt)
	case p.standbyB:
		var h mdsbe.PacketHeader
		if h.Wrap(pkt, 0) == nil && p.now().UnixNano()-h.SendingTimeNs() > int64(StandbyBLineAgeMax) {
			p.packetsStaleB.Add(1)
			break
		}
		p.sendB(pkt)
	}
	return nil
}

// StandbyBLineAgeMax bounds the age of the packets a standby feed sends on
// the B line: the time from a packet's first event (its sending time, the
// command's FIX arrival on the leader) to the standby's clock. A follower
// catching up (restarted, or back from a partition) applies commands
// minutes old at full speed; its receivers have them from the A line or
// recover them, and a flood of them on the B line would crowd out the
// live datagrams both lines share a network with. They go into its window
// alone, counted (FeedStats.LineBStale). A follower's clock more than this
// ahead of the leader's sends nothing on the B line.
const StandbyBLineAgeMax = 2 * time.Second

// liveB reports whether the live feed sends the B line too (a standby's
// sends it instead with bFromStandby).
func (p *publisher) liveB() bool { return p.dstB != nil && !p.bFromStandby }

// sendB sends a standby feed's packet on the B line alone.
func (p *publisher) sendB(pkt []byte) {
	p.mu.Lock()
	_, err := p.conn.WriteToUDP(pkt, p.dstB)
	p.mu.Unlock()
	if err != nil {
		p.sendErrors.Add(1)
		return
	}
	p.packetsSentB.Add(1)
}

func (p *publisher) send(pkt []byte) {
	// Sent under mu, as heartbeats are: a heartbeat never follows a packet
	// with a next sequence older than that packet's, which a receiver would
	// take for a feed that numbers anew (feedclient, ErrSeqWentBack).
	p.mu.Lock()
	_, err := p.conn.WriteToUDP(pkt, p.dst)
	var errB error
	lineB := p.liveB()
	if lineB {
		_, errB = p.conn.WriteToUDP(pkt, p.dstB)
	}
	p.lastSendNs = p.now().UnixNano()
	p.mu.Unlock()
	if err != nil {
		p.sendErrors.Add(1)
	} else {
		p.packetsSent.Add(1)
		p.bytesSent.Add(uint64(len(pkt)))
	}
	switch {
	case !lineB:
	case errB != nil:
		p.sendErrors.Add(1)
	default:
		p.packetsSentB.Add(1)
	}
}

// heartbeatIfIdle sends a Heartbeat carrying the next sequence number when
// nothing was sent for interval. The heartbeat is unsequenced and stamped
// with the wall clock: it is not part of the deterministic stream.
func (p *publisher) heartbeatIfIdle(interval time.Duration) {
	now := p.now().UnixNano()
	p.mu.Lock()
	if now-p.lastSendNs < int64(interval) {
		p.mu.Unlock()
		return
	}
	// Read under mu: every packet sent so far is in the window (it is
	// appended before it is sent), so nextSeq is at or past each of them.
	_, nextSeq := p.win.bounds()
	buf := p.hbBuf[:]
	var h mdsbe.PacketHeader
	_ = h.Wrap(buf, 0)
	h.SetChannel(p.channel)
	h.SetMessageCount(1)
	h.SetSeq(0)
	h.SetSendingTimeNs(now)
	buf[packet.HeaderSize] = byte(mdsbe.HeartbeatEncodedLength)
	buf[packet.HeaderSize+1] = 0
	var m mdsbe.Heartbeat
	_ = m.WrapEncode(buf, packet.HeaderSize+packet.LengthPrefixSize)
	m.SetNextSeq(nextSeq)
	_, err := p.conn.WriteToUDP(buf, p.dst)
	if p.liveB() {
		if _, errB := p.conn.WriteToUDP(buf, p.dstB); errB != nil {
			p.sendErrors.Add(1)
		}
	}
	p.lastSendNs = now
	p.mu.Unlock()
	if err != nil {
		p.sendErrors.Add(1)
		return
	}
	p.heartbeatsSent.Add(1)
}
