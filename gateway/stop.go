package gateway

import (
	"time"
)

// A stop that keeps every answer (docs/ARCHITECTURE.md, "Stopping"). Answers
// reach a session's store only when its sender hands them to QuickFIX/Go,
// and QuickFIX/Go forgets its sessions once its acceptor stops: an answer
// still in the pipeline or a sender's queue then is neither sent nor
// stored, and no resend can bring it back, though its command is in the
// journal (an order the client never heard was accepted; a cancel-on-
// disconnect's Canceled reports, made by the very logouts the stop
// causes). So the venue calls BeginStop before stopping the acceptor, and
// every logout from then on returns to QuickFIX/Go only once the pipeline
// has drained and every sender has handed over what it held.

// stopDrain is what BeginStop was given.
type stopDrain struct {
	drained func() bool
	within  time.Duration
}

// BeginStop refuses new orders and replaces from now on (cancels are still
// taken: they answer only their own session), and makes the gateway wait,
// now and in every logout from now on,
// until drained reports that the pipeline has handed every event to its
// consumers and every session's sender has handed its messages to
// QuickFIX/Go, each wait at most within (a client that does not read holds
// its paced sender; what is left then is logged).
func (g *Gateway) BeginStop(drained func() bool, within time.Duration) {
	g.stopping.Store(&stopDrain{drained: drained, within: within})
	g.awaitStopDrain()
}

// awaitStopDrain waits as BeginStop says, if it was called.
func (g *Gateway) awaitStopDrain() {
	d := g.stopping.Load()
	if d == nil {
		return
	}
	deadline := time.Now().Add(d.within)
	for {
		left := 0
		// A drop-copy replay ends at the stop with an AQ of its own
		// (errReplayStopped), queued once it has seen the stop.
		if d.drained() && g.replaying.Load() == 0 {
			if left = g.queued(); left == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			g.log.Warn("stopping: answers not yet handed to their sessions", "pipeline_drained", d.drained(), "messages_queued", left,
				"replays_running", g.replaying.Load(), "waited", d.within)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// queued is how many messages the sessions' senders hold.
func (g *Gateway) queued() int {
	n := 0
	for _, s := range g.sessions {
		n += int(s.out.pending.Load())
	}
	return n
}
