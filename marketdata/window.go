package marketdata

import (
	"errors"
	"sync"

	"github.com/fixvenue/fixvenue/marketdata/packet"
)

// WindowPacketsDefault is the default number of recent packets kept for
// retransmission: at 1,400 bytes each, about 11 MB.
const WindowPacketsDefault = 8192

// Reasons a window cannot serve a range; the recovery service turns them
// into RetransmitReject reasons.
var (
	errWindowTooOld  = errors.New("range starts before the window")
	errWindowInvalid = errors.New("range ends after the last published message")
)

// window keeps the most recent sequenced packets, exactly as sent, in a
// ring of fixed-size slots allocated at start. The feed goroutine appends;
// recovery connections copy packets out under the mutex and write them to
// their sockets after releasing it, so a slow client never stalls the feed.
type window struct {
	mu      sync.Mutex
	arena   []byte // slots × packet.DatagramBytesMax
	slots   []windowSlot
	first   uint64 // index of the oldest held packet (monotonic, not wrapped)
	next    uint64 // index the next appended packet gets
	nextSeq uint64 // sequence number after the last held message
}

type windowSlot struct {
	seq   uint64
	count int
	n     int
}

func newWindow(packets int, firstSeq uint64) *window {
	return &window{arena: make([]byte, packets*packet.DatagramBytesMax),
		slots: make([]windowSlot, packets), nextSeq: firstSeq}
}

// append stores a sequenced packet, evicting the oldest when full.
func (w *window) append(pkt []byte, seq uint64, count int) {
	w.mu.Lock()
	if w.next-w.first == uint64(len(w.slots)) {
		w.first++
	}
	i := int(w.next % uint64(len(w.slots)))
	copy(w.arena[i*packet.DatagramBytesMax:], pkt)
	w.slots[i] = windowSlot{seq: seq, count: count, n: len(pkt)}
	w.next++
	w.nextSeq = seq + uint64(count)
	w.mu.Unlock()
}

// restart empties the window and continues the numbering at nextSeq.
func (w *window) restart(nextSeq uint64) {
	w.mu.Lock()
	w.first, w.next, w.nextSeq = 0, 0, nextSeq
	w.mu.Unlock()
}

// bounds returns the oldest sequence held (0 when empty) and the next one.
func (w *window) bounds() (oldestSeq, nextSeq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == w.first {
		return 0, w.nextSeq
	}
	return w.slots[w.first%uint64(len(w.slots))].seq, w.nextSeq
}

// copyFrom appends to dst, as TCP frames, the held packets that contain
// messages from fromSeq up to (excluding) endSeq, stopping before dst would
// exceed bytesMax. It returns the sequence after the last message copied:
// the caller continues from there. A packet that starts before fromSeq is
// copied whole; the client skips the messages it already has.
func (w *window) copyFrom(dst []byte, fromSeq, endSeq uint64, bytesMax int) ([]byte, uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if endSeq > w.nextSeq {
		return dst, fromSeq, errWindowInvalid
	}
	if w.next == w.first || fromSeq < w.slots[w.first%uint64(len(w.slots))].seq {
		return dst, fromSeq, errWindowTooOld
	}
	// Binary search for the packet that holds fromSeq.
	lo, hi := w.first, w.next
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		if w.slots[mid%uint64(len(w.slots))].seq <= fromSeq {
			lo = mid
		} else {
			hi = mid
		}
	}
	seq := fromSeq
	for p := lo; p < w.next && seq < endSeq; p++ {
		s := &w.slots[p%uint64(len(w.slots))]
		if len(dst)+packet.LengthPrefixSize+s.n > bytesMax {
			break
		}
		start := int(p%uint64(len(w.slots))) * packet.DatagramBytesMax
		dst = append(dst, byte(s.n), byte(s.n>>8))
		dst = append(dst, w.arena[start:start+s.n]...)
		seq = s.seq + uint64(s.count)
	}
	return dst, seq, nil
}
