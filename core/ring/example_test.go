package ring_test

import (
	"encoding/binary"
	"fmt"

	"github.com/fixvenue/fixvenue/core/ring"
)

// A producer claims a slot, writes into it in place and publishes it; a
// consumer waits for a batch, reads it in place and releases it by storing
// its sequence. Here both run in one goroutine to keep the output fixed.
func Example() {
	r, err := ring.New(ring.Config{
		Slots:        8,
		SlotSize:     64,
		Producer:     ring.MultiProducer,
		Wait:         ring.SpinPark,
		ClaimTimeout: ring.DefaultClaimTimeout,
	})
	if err != nil {
		panic(err)
	}
	consumed := ring.NewSequence(-1)
	r.AddGatingSequences(consumed)
	barrier := r.NewBarrier()

	for i := uint64(1); i <= 3; i++ {
		seq, slot, err := r.Claim()
		if err != nil {
			panic(err) // ErrBusy: the gateway answers "system busy"
		}
		binary.LittleEndian.PutUint64(slot, i*100)
		r.Publish(seq)
	}

	next := consumed.Load() + 1
	avail, err := barrier.WaitFor(next)
	if err != nil {
		panic(err)
	}
	for seq := next; seq <= avail; seq++ {
		fmt.Println(seq, binary.LittleEndian.Uint64(r.Slot(seq)))
	}
	consumed.Store(avail)
	// Output:
	// 0 100
	// 1 200
	// 2 300
}
