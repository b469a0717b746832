package marketdata

import (
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/marketdata/feedclient"
)

// lossyRelay forwards datagrams from in to dst on loopback, dropping,
// duplicating and reordering them at random (seeded) rates.
type lossyRelay struct {
	in, out            *net.UDPConn
	dst                *net.UDPAddr
	drop, dup, reorder float64
	rng                *rand.Rand
	held               [][]byte
	dropped, forwarded atomic.Int64
	done               chan struct{}
}

func newLossyRelay(t *testing.T, dst *net.UDPAddr, seed uint64, drop, dup, reorder float64) *lossyRelay {
	r := &lossyRelay{in: udpSink(t), out: udpSink(t), dst: dst, drop: drop, dup: dup, reorder: reorder,
		rng: rand.New(rand.NewPCG(seed, 3)), done: make(chan struct{})}
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
