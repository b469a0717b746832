package marketdata

import (
	"errors"
	"io"

	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// FeedState derives the feed's state (state.go) from events without a
// socket: a tracker that numbers the messages exactly as a Feed does and
// sends none. A cluster leader replays its journal into one to build the
// Raft snapshot a follower too far behind installs, so that the follower's
// standby feed continues the sequence (docs/ARCHITECTURE.md, "Cluster").
type FeedState struct {
	tracker *Tracker
	builder *packet.Builder
}

// discardPackets is the sink of a FeedState: the messages are numbered,
// never sent.
type discardPackets struct{}

func (discardPackets) WritePacket([]byte, uint64, int) error { return nil }

// NewFeedState allocates a tracker for cfg, at sequence number 1.
func NewFeedState(cfg TrackerConfig) (*FeedState, error) {
	b, err := packet.NewBuilder(packet.BuilderConfig{Channel: ChannelDefault, Sequenced: true, Sink: discardPackets{}})
	if err != nil {
		return nil, err
	}
	t, err := NewTracker(cfg, b)
	if err != nil {
		return nil, err
	}
	return &FeedState{tracker: t, builder: b}, nil
}

// Event applies one event, as Feed.Replay does.
func (s *FeedState) Event(ev []byte) error { return s.tracker.Apply(ev) }

// WriteState ends the command in progress (its messages are numbered, as
// the feed does before it captures its state) and writes the state.
func (s *FeedState) WriteState(w io.Writer) error {
	if err := s.tracker.EndCommand(); err != nil {
		return err
	}
	if err := s.builder.Flush(); err != nil {
		return err
	}
	return s.tracker.writeState(w, s.builder.NextSeq())
}

// Restore loads a state (Feed's or FeedState's) into a FeedState that has
// applied nothing yet.
func (s *FeedState) Restore(r io.Reader) error {
	if s.builder.NextSeq() != 1 || s.builder.Pending() != 0 {
		return errors.New("marketdata: Restore into a feed state that has numbered messages")
	}
	nextSeq, err := s.tracker.readState(r)
	if err != nil {
		return err
	}
	return s.builder.Restart(nextSeq)
}

// WriteState writes the feed's state as it would capture it now, ending
// the command in progress first: for a feed in replay mode (a cluster
// follower's standby feed), between commands.
func (f *Feed) WriteState(w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrFeedClosed
	}
	if err := f.tracker.EndCommand(); err != nil {
		return f.fail(err)
	}
	return f.tracker.writeState(w, f.builder.NextSeq())
}
