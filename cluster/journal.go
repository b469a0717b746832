package cluster

import (
	"fmt"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
)

// Journal is the leader's journal as the pipeline sees it
// (pipeline.Journal): Append collects a batch of commands as journal
// frames, Flush proposes the batch as one Raft entry and returns once a
// quorum has it on disk, and DurableSequence is the seq of the last batch
// Flush saw committed. So everything that waits for the durable sequence
// (ExecutionReports, market data, the event export, snapshots) waits for
// the quorum, unchanged. It is not the node's committed seq: once deposed,
// the node follows the new leader until its process restarts, and its
// committed seq passes the seqs of this journal's batches that never
// committed, which the new leader gave to commands of its own; the
// pipeline's events of those batches must never count as durable.
// Append and Flush belong to the pipeline's journal goroutine.
type Journal struct {
	// OnCommit, when set, is called after each batch a quorum acknowledged,
	// with its size and the time from proposal to acknowledgement (metrics).
	OnCommit func(records int, took time.Duration)

	runner  *Runner
	node    *Node
	durable *ring.Sequence
	frames  []byte
	last    int64
	nextSeq uint64
	err     error
}

// NewJournal returns the journal of a serving leader, whose pipeline
// numbers commands from next (the node's ProposeNext when it started
// serving). durable, when set, is the sequence it advances as its
// DurableSequence (one a snapshotter made while following waits on);
// nil: one of its own.
func NewJournal(r *Runner, n *Node, next uint64, durable *ring.Sequence) *Journal {
	if durable == nil {
		durable = ring.NewSequence(int64(next) - 1)
	} else {
		durable.Store(int64(next) - 1)
	}
	return &Journal{runner: r, node: n, durable: durable, last: int64(next) - 1, nextSeq: next}
}

// Append adds one command to the batch; seq must follow the previous one.
func (j *Journal) Append(seq uint64, payload []byte) error {
	if j.err != nil {
		return j.err
	}
	if int64(seq) != j.last+1 {
		return fmt.Errorf("cluster journal: command seq %d after %d", seq, j.last)
	}
	j.frames = journal.AppendFrame(j.frames, seq, payload)
	j.last = int64(seq)
	j.nextSeq = seq + 1
	return nil
}

// Flush replicates the batch and waits for the quorum. An error is final:
// after a lost leadership the commands' fate is unknown, so the pipeline
// must stop acknowledging (it fails) and the node rebuild from the log.
func (j *Journal) Flush() error {
	if j.err != nil {
		return j.err
	}
	if len(j.frames) == 0 {
		return nil
	}
	start := time.Now()
	if err := j.runner.Propose(j.frames, j.last); err != nil {
		j.err = err
		return err
	}
	// The runner confirms a batch only while this node still leads the
	// term that proposed it (Runner.settle fails the waiting proposals
	// first when the leadership was lost).
	j.durable.Store(j.last)
	if j.OnCommit != nil {
		j.OnCommit(int(j.last-j.firstOfBatch()+1), time.Since(start))
	}
	j.frames = j.frames[:0]
	return nil
}

// firstOfBatch is the seq of the batch's first command.
func (j *Journal) firstOfBatch() int64 {
	seq, _, _, _ := journal.NextFrame(j.frames)
	return int64(seq)
}

// DurableSequence is the seq of the last command of this journal's that a
// quorum has on disk (and of those before it).
func (j *Journal) DurableSequence() *ring.Sequence { return j.durable }

// NextSeq is the seq the next command must carry.
func (j *Journal) NextSeq() uint64 { return j.nextSeq }

// Close flushes what is pending; the runner and node are closed by their owner.
func (j *Journal) Close() error { return j.Flush() }
