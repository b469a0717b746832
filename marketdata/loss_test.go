package marketdata

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/internal/testports"
	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

// lossyRelay forwards datagrams from in to dst on loopback, dropping,
// duplicating and reordering them at random (seeded) rates.
type lossyRelay struct {
	in, out            *net.UDPConn
	dst                *net.UDPAddr
	drop, dup, reorder float64
	// dropIf, when set, drops the datagrams whose number (from 0, in the
	// order read) it names, instead of drop, dup and reorder.
	dropIf             func(n int64) bool
	read               int64
	rng                *rand.Rand
	held               [][]byte
	dropped, forwarded atomic.Int64
	done               chan struct{}
}

func newLossyRelay(t *testing.T, dst *net.UDPAddr, seed uint64, drop, dup, reorder float64) *lossyRelay {
	return startRelay(t, &lossyRelay{dst: dst, drop: drop, dup: dup, reorder: reorder, rng: rand.New(rand.NewPCG(seed, 3))})
}

// newDroppingRelay forwards datagrams from in to dst, dropping those whose
// number dropIf names.
func newDroppingRelay(t *testing.T, dst *net.UDPAddr, dropIf func(n int64) bool) *lossyRelay {
	return startRelay(t, &lossyRelay{dst: dst, dropIf: dropIf})
}

// startRelay opens r's sockets and runs it until the test ends.
func startRelay(t *testing.T, r *lossyRelay) *lossyRelay {
	r.in, r.out, r.done = udpSink(t), udpSink(t), make(chan struct{})
	go r.run()
	t.Cleanup(func() { r.in.Close(); <-r.done; r.out.Close() })
	return r
}

func (r *lossyRelay) send(p []byte) {
	if _, err := r.out.WriteToUDP(p, r.dst); err == nil {
		r.forwarded.Add(1)
	}
}

func (r *lossyRelay) run() {
	defer close(r.done)
	buf := make([]byte, 2048)
	for {
		// A quiet socket releases what is held, so nothing is held forever.
		_ = r.in.SetReadDeadline(time.Now().Add(2 * time.Millisecond))
		n, err := r.in.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				for _, p := range r.held {
					r.send(p)
				}
				r.held = r.held[:0]
				continue
			}
			return
		}
		p := append([]byte(nil), buf[:n]...)
		if r.dropIf != nil {
			if r.dropIf(r.read) {
				r.dropped.Add(1)
			} else {
				r.send(p)
			}
			r.read++
			continue
		}
		switch x := r.rng.Float64(); {
		case x < r.drop:
			r.dropped.Add(1)
		case x < r.drop+r.reorder:
			r.held = append(r.held, p)
		default:
			r.send(p)
			if r.rng.Float64() < r.dup {
				r.send(p)
			}
			if len(r.held) > 0 && r.rng.IntN(2) == 0 {
				r.send(r.held[0])
				r.held = r.held[1:]
			}
		}
	}
}

// TestLossyUDPRelay is the loss test over real sockets: the feed goes
// through a relay that drops, duplicates and reorders datagrams at several
// rates; the client recovers over TCP and its books converge to the
// tracker's, with every gap recovered (none reported unrecovered).
func TestLossyUDPRelay(t *testing.T) {
	for _, rate := range []struct {
		name               string
		drop, dup, reorder float64
	}{
		{"1% loss", 0.01, 0.01, 0.02},
		{"10% loss", 0.10, 0.05, 0.10},
		{"30% loss", 0.30, 0.10, 0.20},
	} {
		t.Run(rate.name, func(t *testing.T) {
			clientConn := udpSink(t)
			relay := newLossyRelay(t, clientConn.LocalAddr().(*net.UDPAddr), 9, rate.drop, rate.dup, rate.reorder)
			fx := newFeedFixture(t, relay.in.LocalAddr().String(), func(c *FeedConfig) { c.Recovery.WindowPackets = 256 })
			var mu sync.Mutex
			var recs []feedclient.Recovery
			c := startClient(t, clientConn, fx.feed.RecoveryAddr().String(), feedclient.Callbacks{
				OnRecovery: func(r feedclient.Recovery) { mu.Lock(); recs = append(recs, r); mu.Unlock() },
			})
			sim := newVenueSim(t, 21)
			for i := 0; i < 6; i++ {
				fx.run(sim, 250)
				time.Sleep(2 * time.Millisecond) // let the client read: its socket buffer is finite
			}
			stats := waitConverged(t, fx, c)
			mu.Lock()
			defer mu.Unlock()
			retransmitted, snapshotted := 0, 0
			for _, r := range recs {
				switch r.Outcome {
				case feedclient.Retransmitted:
					retransmitted++
				case feedclient.Snapshotted:
					snapshotted++
				default:
					t.Fatalf("unrecovered: %+v", r)
				}
			}
			dropped, forwarded := relay.dropped.Load(), relay.forwarded.Load()
			if dropped > 0 && retransmitted+snapshotted < 2 {
				t.Fatalf("relay dropped %d, recoveries %+v", dropped, recs)
			}
			t.Logf("relay dropped %d of %d: %d retransmissions, %d snapshots; client %+v",
				dropped, dropped+forwarded, retransmitted, snapshotted, stats)
		})
	}
}

// TestABLinesCoverEachOthersLoss: the feed goes out on an A and a B line,
// each through a relay that drops a third of its datagrams, never the same
// ones (A every third from the first, B every third from the second). A
// client reading A alone recovers gap after gap over TCP; one reading both
// (the B line on a socket of its own, from Config.FeedBAddr) takes each
// datagram from the line that has it and converges to the tracker's books
// without a single recovery of a gap, each line's copies of what the other
// brought first counted as its duplicates.
func TestABLinesCoverEachOthersLoss(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    bool
	}{{"A alone", false}, {"A and B", true}} {
		t.Run(tc.name, func(t *testing.T) {
			connA := udpSink(t)
			ports, release := testports.Reserve(t, "udp", 1)
			release() // the client binds it
			lineB := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ports[0]}
			relayA := newDroppingRelay(t, connA.LocalAddr().(*net.UDPAddr), func(n int64) bool { return n%3 == 0 })
			relayB := newDroppingRelay(t, lineB, func(n int64) bool { return n%3 == 1 })
			fx := newFeedFixture(t, relayA.in.LocalAddr().String(), func(c *FeedConfig) {
				c.FeedBAddr = relayB.in.LocalAddr().String()
				c.Recovery.WindowPackets = 4096
			})
			var mu sync.Mutex
			gaps := 0
			// A gap on one line waits this long for the other (a loaded
			// machine under the race detector may take tens of ms to relay
			// it); alone, a line's gaps are recovered at once.
			gapTimeout := 20 * time.Millisecond
			if tc.b {
				gapTimeout = 5 * time.Second
			}
			cfg := feedclient.Config{RecoveryAddr: fx.feed.RecoveryAddr().String(), GapTimeout: gapTimeout,
				Callbacks: feedclient.Callbacks{OnRecovery: func(r feedclient.Recovery) {
					if r.Cause != feedclient.CauseJoin {
						mu.Lock()
						gaps++
						mu.Unlock()
					}
				}}}
			if tc.b {
				cfg.FeedBAddr = lineB.String()
			}
			c, err := feedclient.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runClient(t, func(ctx context.Context) error { return c.RunConn(ctx, connA) })
			waitConverged(t, fx, c) // joined
			sim := newVenueSim(t, 33)
			for range 8 {
				fx.run(sim, 100)
				time.Sleep(2 * time.Millisecond) // let the client read: its socket buffers are finite
			}
			stats := waitConverged(t, fx, c)
			mu.Lock()
			defer mu.Unlock()
			if relayA.dropped.Load() == 0 || relayB.dropped.Load() == 0 {
				t.Fatalf("the relays dropped nothing (A %d, B %d)", relayA.dropped.Load(), relayB.dropped.Load())
			}
			switch {
			case !tc.b && gaps == 0:
				t.Fatalf("A alone lost a third of the datagrams and recovered no gap: %+v", stats)
			case tc.b && gaps != 0:
				t.Fatalf("with both lines %d gaps were recovered over TCP (A dropped %d, B %d): %+v",
					gaps, relayA.dropped.Load(), relayB.dropped.Load(), stats)
			case tc.b && (stats.Lines[1].Datagrams == 0 || stats.Lines[0].Duplicates == 0 || stats.Lines[1].Duplicates == 0):
				t.Fatalf("line counts: %+v", stats.Lines)
			}
			t.Logf("A dropped %d, B dropped %d: %d gaps recovered over TCP; lines %+v", relayA.dropped.Load(), relayB.dropped.Load(), gaps, stats.Lines)
		})
	}
}
