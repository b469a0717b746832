package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/gateway/edge"
	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// FuzzApplicationMessages sends each input to a running venue as an
// application message of a logged-on session, then a TestRequest. The
// venue must stay up and answer the TestRequest: on the same connection, or,
// when the input made it end the session (a Logout, a closed connection),
// on a fresh one after a new Logon. Every message it sends on the way must
// be one a validating FIX client accepts (fixclient.Check, set in TestMain).
//
// An input is the message's fields after its header, '|' for SOH, from its
// MsgType: "35=D|11=a|55=ACME|...". The harness adds BeginString,
// BodyLength, the CompIDs, MsgSeqNum, SendingTime and CheckSum, and sends
// only what the FIX edge hands to the session layer (edge.Admits): what it
// drops as garbled consumes no sequence number and is the edge's own
// fuzzing's (gateway/edge, FuzzInbound). So the message reaches
// QuickFIX/Go's checks and the gateway's parsing and what lies behind them,
// and a ResendRequest from the venue, which would mean it lost a message it
// was sent whole, fails the input. The session layer's own types
// (Heartbeat, TestRequest, ResendRequest, Reject, SequenceReset, Logout,
// Logon) are left out: the harness keeps the session's numbers.
//
// Each fuzzing worker starts one venue and sends every input on its
// CLIENT1 session, so the venue's state (resting orders, used ClOrdIDs, the
// day's bounds) carries from input to input as it does for a client.
func FuzzApplicationMessages(f *testing.F) {
	for _, seed := range []string{
		"35=D|11=f1|55=ACME|54=1|60=20261207-10:00:00|38=10|40=2|44=100.00|59=0|",
		"35=D|11=f2|55=ACME|54=2|60=20261207-10:00:00|38=5|40=1|59=3|",
		"35=D|11=f3|55=LOTS|54=2|60=20261207-10:00:00|38=100|40=4|44=49.50|99=49.55|59=1|",
		"35=D|11=f4|55=ACME|54=1|60=20261207-10:00:00|38=100|40=2|44=99.00|59=6|126=20301231-00:00:00|111=10|",
		"35=F|11=f5|41=f1|55=ACME|54=1|60=20261207-10:00:00|",
		"35=G|11=f6|41=f1|55=ACME|54=1|60=20261207-10:00:00|38=20|40=2|44=100.01|59=0|",
		"35=H|11=f1|55=ACME|54=1|790=s1|",
		"35=q|11=f7|530=7|60=20261207-10:00:00|",
		"35=AF|584=m1|585=7|",
		"35=x|320=l1|559=4|",
		"35=g|335=t1|263=0|",
		"35=V|262=v1|263=1|264=5|265=0|267=2|269=0|269=1|146=1|55=ACME|",
		"35=AD|568=c1|569=0|",
		"35=j|45=3|372=8|380=0|",
		"35=c|320=d1|321=3|",
		"35=D|11=f8|453=1|448=P|447=D|452=1|55=ACME|54=1|60=20261207-10:00:00|38=1|40=2|44=100.00|",
		// Values that are not printable ASCII, which an answer would carry back.
		"35=D|11=f9\xc1|55=ACME|54=1|60=20261207-10:00:00|38=1|40=2|44=100.00|",
		"35=D|11=f10|1=acct\x7f|55=ACME|54=1|60=20261207-10:00:00|38=1|40=2|44=100.00|",
		"35=V|262=v\xe9|263=1|264=5|265=0|267=1|269=0|146=1|55=ACME|",
		"35=g|335=t\x09|263=0|",
		"35=D|11=f11|50=desk\xf5|55=ACME|54=1|60=20261207-10:00:00|38=1|40=2|44=100.00|",
	} {
		f.Add(seed)
	}
	v := startFuzzVenue(f)
	f.Fuzz(func(t *testing.T, fields string) {
		msgType, rest, ok := appMessage(fields)
		if !ok {
			return
		}
		v.send(t, msgType, rest)
	})
}

// appMessage splits an input into its MsgType and the fields after it; ok is
// false for an input the harness does not send (a session-layer type, SOH
// bytes of its own, no MsgType, a MsgSeqNum).
func appMessage(fields string) (msgType, rest string, ok bool) {
	if strings.ContainsRune(fields, '\x01') || !strings.HasPrefix(fields, "35=") || !strings.HasSuffix(fields, "|") {
		return "", "", false
	}
	msgType, rest, _ = strings.Cut(fields[len("35="):], "|")
	switch msgType {
	case "", "0", "1", "2", "3", "4", "5", "A":
		return "", "", false
	}
	// A MsgSeqNum of its own would renumber the session (QuickFIX/Go reads
	// the last of a repeated field): the harness keeps the numbers.
	if strings.HasPrefix(rest, "34=") || strings.Contains(rest, "|34=") {
		return "", "", false
	}
	return msgType, rest, true
}

// fuzzVenue is a fuzzing worker's venue and the connection its inputs go
// on (nil until the first input, and after the venue ended a session).
type fuzzVenue struct {
	s       *Server
	target  string
	c       *fixclient.Client
	testReq int // TestRequests sent, for their TestReqIDs
}

func startFuzzVenue(f *testing.F) *fuzzVenue {
	cfg := testConfig(f, f.TempDir(), "")
	withMarketData(f, cfg)
	// An input that ends its session is followed by a new Logon at once,
	// far more often than a client retries.
	cfg.FIX.LogonsPerCompIDPerSecond, cfg.FIX.LogonsPerCompIDBurst = 1e6, 1e6
	cfg.FIX.LogonsPerSourcePerSecond, cfg.FIX.LogonsPerSourceBurst = 1e6, 1e6
	// The venue runs for the whole fuzzing run: its log would grow the
	// test's output without bound.
	s := startServer(f, cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	v := &fuzzVenue{s: s, target: cfg.Venue.SenderCompID}
	f.Cleanup(v.drop)
	return v
}

// fuzzAnswerWait bounds the wait for the venue's answer to a TestRequest:
// a venue that does not answer within it has stopped serving the session.
const fuzzAnswerWait = 10 * time.Second

// send sends one input and proves the venue still serves.
func (v *fuzzVenue) send(t *testing.T, msgType, rest string) {
	if v.c == nil {
		v.logon(t, msgType, rest)
	}
	c := v.c
	body := "35=" + msgType + "\x0149=" + c.Sender + "\x0156=" + c.Target + "\x0134=" + strconv.Itoa(c.NextOut) +
		"\x0152=" + fixclient.Timestamp(time.Now()) + "\x01" + strings.ReplaceAll(rest, "|", "\x01")
	raw := fixclient.AppendChecksum([]byte("8=FIX.4.4\x019=" + strconv.Itoa(len(body)) + "\x01" + body))
	if !edge.Admits(raw) {
		return
	}
	c.NextOut++
	ended := c.SendRaw(raw) != nil
	if !ended {
		var err error
		if ended, err = v.roundTrip(); err != nil {
			t.Fatalf("after 35=%s|%s: %v", msgType, rest, err)
		}
	}
	if ended {
		// The input ended the session: a fresh one must be served.
		v.drop()
		v.logon(t, msgType, rest)
		if ended, err := v.roundTrip(); ended || err != nil {
			t.Fatalf("after 35=%s|%s the venue ended the session, then did not serve a new one (ended again %v): %v", msgType, rest, ended, err)
		}
	}
}

// logon connects and logs CLIENT1 on with ResetSeqNumFlag. A session the
// venue has just ended may not be released yet (its Logon is refused or its
// connection closed): tried again until fuzzAnswerWait has passed.
func (v *fuzzVenue) logon(t *testing.T, msgType, rest string) {
	deadline := time.Now().Add(fuzzAnswerWait)
	for {
		c, err := fixclient.Dial(v.s.FIXAddr(), "CLIENT1", v.target)
		if err == nil {
			if _, err = c.Logon(true); err == nil {
				v.c = c
				return
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 35=%s|%s no Logon was taken for %v: %v", msgType, rest, fuzzAnswerWait, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drop closes the connection, if there is one.
func (v *fuzzVenue) drop() {
	if v.c != nil {
		v.c.Close()
		v.c = nil
	}
}

// roundTrip sends a TestRequest and reads until the Heartbeat answering it,
// answering the venue's own TestRequests on the way.
// ended is true when the venue ended the session first (a Logout, or the
// connection closed); err is any other failure: no answer in time, or a
// message a validating client refuses.
func (v *fuzzVenue) roundTrip() (ended bool, err error) {
	c := v.c
	v.testReq++
	id := "fuzz-" + strconv.Itoa(v.testReq)
	if c.Send("1", fixclient.F(112, id)) != nil {
		return true, nil
	}
	deadline := time.Now().Add(fuzzAnswerWait)
	for {
		m, err := c.ReadAny(time.Until(deadline))
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET):
			return true, nil
		case err != nil:
			return false, err
		}
		switch m.Type() {
		case "0":
			if m.Get(112) == id {
				return false, nil
			}
		case "1":
			if c.Send("0", fixclient.F(112, m.Get(112))) != nil {
				return true, nil
			}
		case "2":
			return false, fmt.Errorf("the venue asked for messages it was sent whole: %s", m)
		case "5":
			return true, nil
		}
	}
}
