package server

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/fixvenue/fixvenue/internal/periodic"
)

// A disk that stops completing writes (a device retrying, a storage path
// failing over, a frozen file system) fails nothing: the journal's write or
// fdatasync just does not return, every order waits for it unanswered, and
// the venue stays ready and silent. The stall watch tells it apart from a
// quiet venue: commands wait to be durable and none has become durable for
// a while. It reads two counters a few times a second, beside the order
// path, and reports the stall in fixvenue_journal_stalled_seconds, in the
// log (once when it passes stallReported, once when it ends) and in
// /v1/status.
const (
	// stallSample is how often the watch reads the durable sequence: the
	// resolution of the stall's length.
	stallSample = 250 * time.Millisecond
	// stallReported is how long commands wait with none made durable before
	// the log and /v1/status say so: a sync takes milliseconds, and a busy
	// disk's slowest ones a few hundred.
	stallReported = 2 * time.Second
)

// stallWatch is what the watch last found.
type stallWatch struct {
	stalledNs atomic.Int64 // how long no waiting command has become durable (0: keeping up)
	waiting   atomic.Int64 // the commands waiting then
}

// watchDurable samples the pipeline's durable sequence every stallSample
// until stop is closed. A halted venue is not stalled: it says why it halted.
func (s *Server) watchDurable(stop <-chan struct{}) {
	p := s.pipe
	last, progress, reported := p.Durable().Load(), time.Now(), false
	periodic.Run(stop, stallSample, func(now time.Time) {
		durable := p.Durable().Load()
		waiting := int64(p.SeqBase()) + p.Commands.Cursor() - durable
		if durable != last || waiting <= 0 || p.Err() != nil {
			if reported && p.Err() == nil { // a halt logged its own cause
				s.log.Info("journal: commands durable again after a stall", "stalled", now.Sub(progress).Round(time.Millisecond).String(),
					"durable_seq", durable)
			}
			last, progress, reported = durable, now, false
			s.stall.stalledNs.Store(0)
			return
		}
		stalled := now.Sub(progress)
		s.stall.waiting.Store(waiting)
		s.stall.stalledNs.Store(int64(stalled))
		if !reported && stalled >= stallReported {
			reported = true
			s.log.Warn("journal: no command has become durable for a while: their orders wait unanswered until the journal's writes complete",
				"stalled", stalled.Round(time.Millisecond).String(), "waiting", waiting, "durable_seq", durable)
		}
	})
}

// stalled says how long commands have waited with none made durable, for
// /v1/status: "" while the journal keeps up, or for less than stallReported.
func (s *Server) stalled() string {
	d := time.Duration(s.stall.stalledNs.Load())
	if d < stallReported {
		return ""
	}
	return fmt.Sprintf("no command has become durable for %s, %d waiting: their orders wait unanswered until the journal's writes complete",
		d.Round(100*time.Millisecond), s.stall.waiting.Load())
}
