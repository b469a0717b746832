package loadgen

import (
	"errors"
	"sync"

	"github.com/fixvenue/fixvenue/journal"
)

// echoJournal makes a durable Echo's orders durable before they are
// answered: the floor under every durable venue on this disk. Connections
// hand it the orders of one read and wait; one goroutine appends whatever
// is waiting and makes it durable with one journal flush (one write, one
// fdatasync), so orders that arrive during an fdatasync form the next
// batch, as in the venue's journal.
type echoJournal struct {
	w        *journal.Writer
	reqs     chan *echoJournalReq // bounded by echoConnectionsMax: one per connection
	done     chan struct{}
	once     sync.Once
	closeErr error // the writer's Close, read after done
}

// echoJournalReq is one connection's orders, slices of its read buffer,
// which it leaves untouched until done has answered.
type echoJournalReq struct {
	msgs [][]byte
	done chan error
}

var errEchoJournalClosed = errors.New("loadgen: echo: journal closed")

func newEchoJournal(w *journal.Writer) *echoJournal {
	j := &echoJournal{w: w, reqs: make(chan *echoJournalReq, echoConnectionsMax), done: make(chan struct{})}
	go j.run()
	return j
}

// commit returns once every message of r is durable (or the journal failed).
func (j *echoJournal) commit(r *echoJournalReq) error {
	select {
	case j.reqs <- r:
	case <-j.done:
		return errEchoJournalClosed
	}
	select {
	case err := <-r.done:
		return err
	case <-j.done:
		return errEchoJournalClosed
	}
}

// close stops the journal goroutine; the caller has stopped every
// connection first. It closes the journal's writer and returns its error.
func (j *echoJournal) close() error {
	j.once.Do(func() { close(j.reqs) })
	<-j.done
	return j.closeErr
}

func (j *echoJournal) run() {
	defer close(j.done)
	defer func() { j.closeErr = j.w.Close() }()
	batch := make([]*echoJournalReq, 0, echoConnectionsMax)
	for first := range j.reqs {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < cap(batch) {
			select {
			case r, ok := <-j.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		err := j.append(batch)
		if err == nil {
			err = j.w.Flush()
		}
		for _, r := range batch {
			r.done <- err
		}
	}
}

func (j *echoJournal) append(batch []*echoJournalReq) error {
	for _, r := range batch {
		for _, m := range r.msgs {
			if err := j.w.Append(j.w.NextSeq(), m); err != nil {
				return err
			}
		}
	}
	return nil
}
