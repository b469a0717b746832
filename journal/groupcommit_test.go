package journal_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/core/ring"
	"github.com/fixvenue/fixvenue/journal"
	"github.com/fixvenue/fixvenue/sbe/venue"
)

// encodeNewOrder writes a NewOrder with the given seq at the start of slot
// and returns its encoded bytes.
func encodeNewOrder(t testing.TB, slot []byte, seq uint64) []byte {
	t.Helper()
	var m venue.NewOrder
	if err := m.WrapEncode(slot, 0); err != nil {
		t.Fatal(err)
	}
	m.SetSeq(seq)
	m.SetTimestampNs(1_700_000_000_000_000_000 + int64(seq))
	m.SetSessionIdx(uint16(seq % 7))
	m.SetSide(venue.SideBuy)
	m.SetOrdType(venue.OrdTypeLimit)
	m.SetInstrumentID(1)
	m.SetTimeInForce(venue.TimeInForceDay)
	m.SetPriceTicks(10_000 + int64(seq%13))
	m.SetQty(100)
	if err := m.SetClOrdIDString("c" + string(rune('a'+seq%26))); err != nil {
		t.Fatal(err)
	}
	return slot[:m.EncodedLength()]
}

// commandRing is a ring with the journal as its only consumer.
type commandRing struct {
	r       *ring.Ring
	barrier *ring.Barrier
	own     *ring.Sequence
}

func newCommandRing(t testing.TB, slots int) commandRing {
	t.Helper()
	r, err := ring.New(ring.Config{Slots: slots, SlotSize: 256, Producer: ring.MultiProducer,
		Wait: ring.SpinPark, ClaimTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	own := ring.NewSequence(-1)
	r.AddGatingSequences(own)
	return commandRing{r: r, barrier: r.NewBarrier(), own: own}
}

// publish claims a slot, encodes a NewOrder carrying base+ringSeq, publishes.
func (c commandRing) publish(t testing.TB, base uint64) {
	seq, slot, err := c.r.Claim()
	if err != nil {
		t.Error(err)
		return
	}
	encodeNewOrder(t, slot, base+uint64(seq))
	c.r.Publish(seq)
}

// waitDurable waits (bounded) until the writer's durable sequence reaches want.
func waitDurable(t testing.TB, w *journal.Writer, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Durable() < want {
		if time.Now().After(deadline) {
			t.Fatalf("durable stuck at %d, want %d", w.Durable(), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestRunGroupCommit: while one fdatasync runs, producers on several
// goroutines publish 200 commands; they are then covered by exactly one
// more fdatasync, and none of them is durable before it returns.
func TestRunGroupCommit(t *testing.T) {
	dir := t.TempDir()
	rec := newSyncRecorder()
	rec.entered, rec.release = make(chan struct{}, 16), make(chan struct{})
	var wokenAt []int64
	var mu sync.Mutex
	cfg := journal.Config{Sync: rec.sync, OnFlush: func(fi journal.FlushInfo) {
		mu.Lock()
		wokenAt = append(wokenAt, fi.DurableSeq)
		mu.Unlock()
	}}
	w := openWriter(t, dir, cfg)
	cr := newCommandRing(t, 1024)
	done := make(chan error, 1)
	go func() { done <- w.Run(cr.r, cr.barrier, cr.own) }()

	cr.publish(t, 0)
	<-rec.entered // the first batch (seq 0) is in fdatasync
	const producers, perProducer = 4, 50
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range perProducer {
				cr.publish(t, 0)
			}
		})
	}
	wg.Wait()
	const last = producers * perProducer
	// The journal goroutine is still inside the first fdatasync, so not even
	// seq 0 is durable, let alone the commands published since.
	if d := w.Durable(); d != -1 {
		t.Fatalf("durable %d while the first fdatasync has not returned", d)
	}
	close(rec.release)
	waitDurable(t, w, last)
	if got := rec.count(journal.SyncData); got != 2 {
		t.Fatalf("%d fdatasyncs for 2 batches", got)
	}
	mu.Lock()
	if len(wokenAt) != 2 || wokenAt[0] != 0 || wokenAt[1] != last {
		t.Fatalf("flushes reported %v", wokenAt)
	}
	mu.Unlock()
	if got := w.Stats().BatchRecordsMax.Load(); got != last {
		t.Fatalf("largest batch %d, want %d", got, last)
	}
	cr.barrier.Alert()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The journal holds every command verbatim, in seq order.
	buf := make([]byte, 256)
	next := uint64(0)
	n, _ := eachRecord(t, dir, journal.ReaderOptions{}, func(rec journal.Record) {
		if rec.Seq != next {
			t.Fatalf("record %d has seq %d", next, rec.Seq)
		}
		next++
		// Producers raced for slots, but the slot content is a function of seq.
		if want := encodeNewOrder(t, buf, rec.Seq); !bytes.Equal(rec.Payload, want) {
			t.Fatalf("seq %d: journaled %x, want %x", rec.Seq, rec.Payload, want)
		}
	})
	if n != last+1 {
		t.Fatalf("%d records, want %d", n, last+1)
	}
}

// TestRunContinuesAfterRestart: command seqs continue the journal; ring
// sequence 0 of the new run is NextSeq of the recovered journal.
func TestRunContinuesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	for run := range 3 {
		w := openWriter(t, dir, journal.Config{SegmentBytes: 1 << 20})
		base := w.NextSeq()
		if base != uint64(run*10) {
			t.Fatalf("run %d starts at %d", run, base)
		}
		cr := newCommandRing(t, 16)
		done := make(chan error, 1)
		go func() { done <- w.Run(cr.r, cr.barrier, cr.own) }()
		for range 10 {
			cr.publish(t, base)
		}
		waitDurable(t, w, int64(base)+9)
		cr.r.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := eachRecord(t, dir, journal.ReaderOptions{}, func(journal.Record) {}); n != 30 {
		t.Fatalf("%d records after 3 runs", n)
	}
}

// TestRunFailsOnBrokenCommands: a slot that is not a command, or carries
// the wrong seq, stops the journal instead of journaling it.
func TestRunFailsOnBrokenCommands(t *testing.T) {
	for name, corrupt := range map[string]func(slot []byte){
		"event template": func(slot []byte) {
			var m venue.OrderAccepted
			_ = m.WrapEncode(slot, 0)
		},
		"wrong schema": func(slot []byte) { slot[4] = 0x77 },
		"wrong seq":    func(slot []byte) { slot[8] = 0x55 },
	} {
		t.Run(name, func(t *testing.T) {
			w := openWriter(t, t.TempDir(), journal.Config{SegmentBytes: 1 << 20})
			defer w.Close()
			cr := newCommandRing(t, 16)
			done := make(chan error, 1)
			go func() { done <- w.Run(cr.r, cr.barrier, cr.own) }()
			cr.publish(t, 0)
			waitDurable(t, w, 0)
			seq, slot, err := cr.r.Claim()
			if err != nil {
				t.Fatal(err)
			}
			encodeNewOrder(t, slot, uint64(seq))
			corrupt(slot)
			cr.r.Publish(seq)
			err = <-done
			if !errors.Is(err, journal.ErrFailed) {
				t.Fatalf("run returned %v, want fail-stop", err)
			}
			if w.Durable() != 0 || w.Err() == nil {
				t.Fatalf("durable %d, err %v", w.Durable(), w.Err())
			}
		})
	}
}

// TestCommandLengthByTemplate runs CommandLength over a message of every
// template the venue schema defines: the commands (IsCommand, generated from
// the schema's command id range) are accepted with their encoded length,
// the events refused with ErrNotCommand, so a command added to the schema
// is journaled without a list here to update.
func TestCommandLengthByTemplate(t *testing.T) {
	commands, events := 0, 0
	for id := range 1 << 16 {
		name := venue.MessageName(uint16(id))
		if name == "" {
			continue
		}
		// A header and a block of zeros that is long enough for any message.
		msg := make([]byte, 512)
		msg[0], msg[1] = 64, 0 // blockLength 64 ≥ seq's 8 bytes
		msg[2], msg[3] = byte(id), byte(id>>8)
		msg[4], msg[5] = byte(venue.SchemaID), byte(venue.SchemaID>>8)
		n, err := journal.CommandLength(msg)
		switch {
		case venue.IsCommand(uint16(id)):
			commands++
			if err != nil || n != venue.MessageHeaderSize+64 {
				t.Errorf("command %s: CommandLength = %d, %v", name, n, err)
			}
		default:
			events++
			if !errors.Is(err, journal.ErrNotCommand) {
				t.Errorf("event %s: CommandLength = %d, %v; want ErrNotCommand", name, n, err)
			}
		}
	}
	if commands == 0 || events == 0 {
		t.Fatalf("%d commands and %d events in the schema", commands, events)
	}
}
