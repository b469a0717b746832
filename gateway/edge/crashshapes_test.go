package edge

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quickfixgo/quickfix/datadictionary"
)

// crashShape is a message that kills a QuickFIX/Go v0.9.11 acceptor: a
// goroutine without recover panics and the process exits. Found by
// sending every FIX44 header, trailer and admin field with an empty value,
// and the length fields with wrong lengths, to a bare acceptor (see
// TestEmptyValueSweep for what QuickFIX/Go does with the others).
type crashShape struct {
	name   string
	reason Reason // what the edge drops it as
	build  func(c *fixClient, seq int) []byte
}

var crashShapes = []crashShape{
	{"empty MsgSeqNum", ReasonBadMsgSeqNum, func(c *fixClient, seq int) []byte {
		h := c.headerAt(seq, "D")
		h[1] = "34="
		return fixMsg(append(h, nosBody...)...)
	}},
	{"empty MsgSeqNum after a good one", ReasonBadMsgSeqNum, func(c *fixClient, seq int) []byte {
		return c.msgAt(seq, "D", append(newOrderBody("x"), "34=")...)
	}},
	{"second empty BodyLength", ReasonRepeatedFraming, func(c *fixClient, seq int) []byte {
		return c.msgAt(seq, "D", append(newOrderBody("x"), "9=")...)
	}},
	{"XmlDataLen larger than the data", ReasonBadDataLength, func(c *fixClient, seq int) []byte {
		return fixMsg(append(append(c.headerAt(seq, "D"), "212=500", "213=<a/>"), nosBody...)...)
	}},
	{"RawData holding SOH and an empty MsgSeqNum", ReasonDataWithSOH, func(c *fixClient, seq int) []byte {
		// QuickFIX/Go reads only XmlData by its length: it splits RawData
		// at the SOH and finds an empty MsgSeqNum in it.
		return c.msgAt(seq, "D", append([]string{"95=5", "96=a\x0134="}, nosBody...)...)
	}},
	{"empty XmlDataLen", ReasonBadDataLength, func(c *fixClient, seq int) []byte {
		return fixMsg(append(c.headerAt(seq, "0"), "212=", "213=<a/>")...)
	}},
}

// TestCrashShapesKillBareQuickFIX shows that each crash shape kills a bare
// QuickFIX/Go acceptor (in a child process), which is why the edge exists;
// the catalogue sends the same messages through the edge.
func TestCrashShapesKillBareQuickFIX(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process per shape")
	}
	for _, shape := range crashShapes {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			child := startRawChild(t)
			defer child.stop()
			conn, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", child.port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := newFixClient(t, conn, "CLIENT1")
			c.sendMsg("A", logonBody("")...)
			c.expect("A")
			c.send(shape.build(c, c.seqOut))
			select {
			case <-child.exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("QuickFIX/Go survived %s", shape.name)
			}
			if out := child.output(); !strings.Contains(out, "panic: runtime error") {
				t.Fatalf("child exited without a panic:\n%s", out)
			}
		})
	}
}

// TestEmptyValueSweep sends, through the edge, every field of the FIX44
// standard header and trailer and of the admin messages and NewOrderSingle
// with an empty value, in each of those message types. The edge drops the
// crash shapes (MsgSeqNum, length fields) and passes the rest, which
// QuickFIX/Go answers with a session Reject (373=4 "tag specified without
// value", or 373=6 for SendingTime), consuming the sequence number, or with
// a Logout for a Logon inside the session. The process survives them all.
func TestEmptyValueSweep(t *testing.T) {
	t.Parallel()
	dd, err := datadictionary.Parse(dictionaryPath)
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string][]string{
		"0": nil, "1": {"112=T"}, "2": {"7=1", "16=0"}, "3": {"45=1"}, "4": {"123=Y", "36=2"},
		"5": nil, "A": {"98=0", "108=30"}, "D": newOrderBody("sweep"),
	}
	var headerTags []int
	for tag := range dd.Header.Fields {
		headerTags = append(headerTags, tag)
	}
	for tag := range dd.Trailer.Fields {
		headerTags = append(headerTags, tag)
	}
	// Each empty field in a Logon ends the session: log on again each time.
	v := startVenue(t, Config{LogonsPerCompID: Rate{PerSecond: 1, Burst: 1000}, LogonsPerSource: Rate{PerSecond: 1, Burst: 1000}}, "CLIENT1", "CLIENT2")
	witness := v.logon("CLIENT2")
	c := v.logon("CLIENT1")
	combos, dropped := 0, 0
	for _, mt := range slices.Sorted(func(yield func(string) bool) {
		for k := range valid {
			if !yield(k) {
				return
			}
		}
	}) {
		tags := append([]int(nil), headerTags...)
		for tag := range dd.Messages[mt].Fields {
			tags = append(tags, tag)
		}
		slices.Sort(tags)
		for _, tag := range slices.Compact(tags) {
			switch tag {
			case 8, 9, 10, 35:
				continue // framing: covered by the catalogue
			}
			combos++
			seq := c.seqOut
			c.send(c.msgAt(seq, mt, emptyField(valid[mt], tag, dd)...))
			if tag == 34 || dataTagOf(tag) != 0 {
				dropped++
				c.probe(seq)
				continue
			}
			if mt == "A" {
				c.expect("5")
				c.sendMsg("5")
				c.expectClosed(5 * time.Second)
				v.waitReleased("CLIENT1")
				c = v.logon("CLIENT1")
				continue
			}
			rj := c.expect("3")
			if rj.get("45") != strconv.Itoa(seq) || (rj.get("373") != "4" && rj.get("373") != "6") || rj.get("371") != strconv.Itoa(tag) {
				t.Fatalf("35=%s empty %d: %s", mt, tag, rj)
			}
			c.probe(seq + 1)
		}
	}
	witness.trade("after-sweep")
	if combos < 300 {
		t.Fatalf("only %d combinations", combos)
	}
	t.Logf("%d empty-value combinations, %d dropped by the edge, the rest answered by QuickFIX/Go", combos, dropped)
}

// emptyField returns body with tag's value emptied, or tag added empty
// (a standard header field goes before the body, which QuickFIX/Go also
// checks).
func emptyField(body []string, tag int, dd *datadictionary.DataDictionary) []string {
	prefix := strconv.Itoa(tag) + "="
	out := append([]string(nil), body...)
	for i, f := range out {
		if strings.HasPrefix(f, prefix) {
			out[i] = prefix
			return out
		}
	}
	if _, header := dd.Header.Fields[tag]; header {
		return append([]string{prefix}, out...)
	}
	return append(out, prefix)
}
