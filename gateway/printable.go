package gateway

import (
	"encoding/binary"
	"fmt"

	"github.com/quickfixgo/quickfix"

	"github.com/fixvenue/fixvenue/internal/fixwire"
)

// FIX 4.4's strings are printable ASCII: other characters go in its Encoded
// fields, data fields a length field gives. The venue sends back what a
// client names its requests and orders by (ClOrdID, Account, Symbol, the
// request IDs, a TestRequest's TestReqID), and a value holding another byte
// made an answer that a validating client refuses (internal/fixcheck), then
// every report of an order taken with it, its drop copy too. So an
// application message, or a TestRequest (the one session message whose
// value the venue echoes, in its Heartbeat), with such a value gets a
// session Reject before anything reads it: SessionRejectReason 6 (incorrect
// data format), RefTagID the field, its MsgSeqNum consumed
// (docs/ARCHITECTURE.md, "FIX 4.4 conformance of outbound messages"). The
// fields a Reject itself carries back never get here: the FIX edge drops a
// MsgType holding such a byte as garbled, and logs out a session whose
// message has a routing field (SenderSubID, OnBehalfOfCompID, …) holding one
// (gateway/edge, "Framing"). A client's BusinessMessageReject is never
// answered (FromApp), whatever it holds, and a Logon is the edge's to refuse.

// rejectReasonIncorrectDataFormat is SessionRejectReason 6 (Incorrect data
// format for value).
const rejectReasonIncorrectDataFormat = 6

// nonPrintable finds the first field of raw, a whole FIX message, whose
// value holds a byte outside printable ASCII (0x20-0x7E), a data field
// aside: its tag and that byte; found is false when there is none. A
// message of printable bytes alone (every one on the order path) costs one
// pass over its bytes, eight at a time.
func nonPrintable(raw []byte) (t quickfix.Tag, b byte, found bool) {
	if allPrintableOrSOH(raw) {
		return 0, 0, false
	}
	var data quickfix.Tag // the data field the previous length field announced
	it := fixwire.NewIterator(raw)
	for f, ok := it.Next(); ok; f, ok = it.Next() {
		if f.Tag == data && data != 0 {
			data = 0
			continue
		}
		data = fixwire.DataTag(f.Tag)
		if i := fixwire.NotPrintable(f.Value); i >= 0 {
			return f.Tag, f.Value[i], true
		}
	}
	return 0, 0, false
}

// allPrintableOrSOH reports whether every byte of raw is printable ASCII or
// SOH, eight bytes at a time: a byte-at-a-time loop took about 270 ns for
// an order's 176 bytes (BenchmarkNonPrintable).
func allPrintableOrSOH(raw []byte) bool {
	const ones, highs, low7 = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	for len(raw) >= 8 {
		w := binary.LittleEndian.Uint64(raw)
		raw = raw[8:]
		x := w & low7                        // each byte's low seven bits: no carry leaves a byte below
		below := ^(x + 0x60*ones) & highs    // x < 0x20
		del := (x + ones) & highs            // x == 0x7f
		e := x ^ ones                        // 0 where x == 0x01
		soh := ^((e + low7) | e) & highs     // x == 0x01
		if (w&highs)|(below&^soh)|del != 0 { // a byte of 0x80 or more, a control byte, DEL
			return false
		}
	}
	for _, c := range raw {
		if (c < ' ' && c != fixwire.SOH) || c > '~' {
			return false
		}
	}
	return true
}

// nonPrintableText says which field held which byte.
func nonPrintableText(t quickfix.Tag, b byte) string {
	return fmt.Sprintf("tag %d holds byte 0x%02X, not printable ASCII: FIX 4.4 puts other characters in its Encoded fields", t, b)
}

// refuseNonPrintable is the session Reject of m when a field of it holds a
// byte outside printable ASCII, naming the first; nil when every value is
// printable.
func refuseNonPrintable(m *quickfix.Message) quickfix.MessageRejectError {
	t, b, found := nonPrintable(m.Bytes())
	if !found {
		return nil
	}
	return quickfix.NewMessageRejectError(nonPrintableText(t, b), rejectReasonIncorrectDataFormat, &t)
}
