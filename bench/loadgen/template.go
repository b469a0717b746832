package loadgen

import (
	"errors"
	"strings"

	"github.com/fixvenue/fixvenue/internal/fixwire"
	"github.com/quickfixgo/quickfix"
	"github.com/quickfixgo/tag"
)

// Widths of the fields patched in place. Fixed widths keep BodyLength
// constant, so patching a template is a copy, a few digit writes and a
// checksum: no formatting, no allocation.
const (
	// seqDigits bounds MsgSeqNum per connection to 999,999,999. FIX allows
	// leading zeros in int fields ("00023" = 23) and QuickFIX/Go reads them.
	seqDigits = 9
	seqMax    = 999_999_999
	// timestampBytes is a UTCTimestamp with milliseconds, "YYYYMMDD-HH:MM:SS.sss".
	timestampBytes = 21
	// runIDBytes is the run prefix of every ClOrdID, so that runs against
	// the same venue day never reuse a ClOrdID.
	runIDBytes = 6
	// indexDigits is the order index in a ClOrdID.
	indexDigits = 10
	// clOrdIDBytes is run id + kind letter + index.
	clOrdIDBytes = runIDBytes + 1 + indexDigits
	// templateBytesMax bounds one pre-encoded message.
	templateBytesMax = 512
)

// ClOrdID kind letters.
const (
	kindOrder  = 'O'
	kindCancel = 'C'
)

// template is one pre-encoded message whose variable fields are patched in
// place: MsgSeqNum, SendingTime, TransactTime, the order index inside
// ClOrdID (and OrigClOrdID for a cancel), and the checksum.
type template struct {
	msg             []byte
	seqOff          int
	sendingTimeOff  int
	transactTimeOff int
	indexOffs       [2]int // digits of ClOrdID and OrigClOrdID; -1 when absent
}

// templateField is one body field of a template.
type templateField struct {
	tag   quickfix.Tag
	value string
}

// Placeholders the template builder recognises in templateField values.
const (
	placeholderTransactTime = "\x00transact"
	placeholderOrderID      = "\x00order"  // runID + 'O' + index
	placeholderCancelID     = "\x00cancel" // runID + 'C' + index
)

var errTemplate = errors.New("loadgen: template")

// newTemplate pre-encodes msgType with the header for sender → target and
// the given body fields.
func newTemplate(w *fixWriter, msgType, sender, target, runID string, body []templateField) (*template, error) {
	if len(runID) != runIDBytes {
		return nil, errTemplate
	}
	zeros := strings.Repeat("0", timestampBytes)
	t := &template{transactTimeOff: -1, indexOffs: [2]int{-1, -1}}
	w.reset()
	w.str(tag.MsgType, msgType)
	w.str(tag.SenderCompID, sender)
	w.str(tag.TargetCompID, target)
	t.seqOff = w.str(tag.MsgSeqNum, strings.Repeat("0", seqDigits))
	t.sendingTimeOff = w.str(tag.SendingTime, zeros)
	ids := 0
	for _, f := range body {
		switch f.value {
		case placeholderTransactTime:
			t.transactTimeOff = w.str(f.tag, zeros)
		case placeholderOrderID, placeholderCancelID:
			if ids == len(t.indexOffs) {
				return nil, errTemplate
			}
			kind := byte(kindOrder)
			if f.value == placeholderCancelID {
				kind = kindCancel
			}
			t.indexOffs[ids] = w.str(f.tag, runID+string(kind)+strings.Repeat("0", indexDigits)) + runIDBytes + 1
			ids++
		default:
			if strings.IndexByte(f.value, soh) >= 0 || f.value == "" {
				return nil, errTemplate
			}
			w.str(f.tag, f.value)
		}
	}
	msg, bodyOff := w.finish()
	if len(msg) > templateBytesMax {
		return nil, errTemplate
	}
	t.msg = append([]byte(nil), msg...)
	t.seqOff += bodyOff
	t.sendingTimeOff += bodyOff
	if t.transactTimeOff >= 0 {
		t.transactTimeOff += bodyOff
	}
	for i := range t.indexOffs {
		if t.indexOffs[i] >= 0 {
			t.indexOffs[i] += bodyOff
		}
	}
	return t, nil
}

// encode writes the message into dst with the given sequence number, time
// and order index, and returns its length. dst must hold len(t.msg) bytes;
// seq ≤ seqMax and index < 10^indexDigits are checked by the callers' bounds.
func (t *template) encode(dst []byte, seq uint64, now *[timestampBytes]byte, index uint64) int {
	n := copy(dst, t.msg)
	m := dst[:n]
	putDigits(m[t.seqOff:t.seqOff+seqDigits], seq)
	copy(m[t.sendingTimeOff:], now[:])
	if t.transactTimeOff >= 0 {
		copy(m[t.transactTimeOff:], now[:])
	}
	for _, off := range t.indexOffs {
		if off >= 0 {
			putDigits(m[off:off+indexDigits], index)
		}
	}
	fixwire.SetCheckSum(m)
	return n
}
