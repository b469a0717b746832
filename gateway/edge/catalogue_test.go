package edge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The catalogue of malformed and hostile inputs. Each case runs over a real
// TCP connection to a QuickFIX/Go v0.9.11 acceptor behind the edge, asserts
// the reaction the FIX session rules call for, and then a witness session
// that stays logged on through the whole catalogue must still trade: the
// process is alive and nobody else was disturbed.

// logonWith sends a Logon with fields (and ResetSeqNumFlag and the
// password), at MsgSeqNum 1.
func logonWith(fields ...string) func(c *fixClient, seq int) []byte {
	return func(c *fixClient, seq int) []byte {
		return c.msgAt(1, "A", append(fields, "141=Y", "554="+testPassword(c.compID))...)
	}
}

// reaction is what a case expects from the venue.
type reaction uint8

const (
	// reactDrop: silently ignored without consuming the sequence number: a
	// TestRequest with the same MsgSeqNum is answered with a Heartbeat.
	reactDrop reaction = iota
	// reactReject: a session Reject (35=3) with 45=MsgSeqNum, 373 and 371
	// as given; the sequence number is consumed.
	reactReject
	// reactLogout: QuickFIX/Go logs the session out (35=5); the client
	// answers and the connection closes.
	reactLogout
	// reactRejectLogout: a Reject, then a Logout.
	reactRejectLogout
	// reactClose: the connection closes without any FIX message.
	reactClose
	// reactRefused: the edge answers a Logon with a Logout (34=1, 58=text)
	// and closes the connection.
	reactRefused
	// reactAnswered: the bytes end with a TestRequest, which is answered.
	reactAnswered
	// reactCustom: the case's run function asserts everything.
	reactCustom
)

// hostileCase is one entry of the catalogue.
type hostileCase struct {
	name   string
	logon  bool // log on before sending
	send   func(c *fixClient, seq int) []byte
	react  reaction
	reject [2]string // 373, 371 ("" = not checked) for reactReject*
	text   string    // expected substring of 58 for reactLogout/reactRefused
	reason Reason    // edge counter that must increase, ReasonNone if none
	run    func(t *testing.T, v *venue, c *fixClient)
}

// msgAt builds a message of msgType with MsgSeqNum seq from this client.
func (c *fixClient) msgAt(seq int, msgType string, body ...string) []byte {
	return fixMsg(append(c.headerAt(seq, msgType), body...)...)
}

func (c *fixClient) headerAt(seq int, msgType string) []string {
	return []string{"35=" + msgType, "34=" + strconv.Itoa(seq), "49=" + c.compID, "52=" + sendingTime(), "56=" + c.venueID}
}

// probe sends a TestRequest with MsgSeqNum seq and expects its Heartbeat.
func (c *fixClient) probe(seq int) {
	c.t.Helper()
	id := "probe-" + strconv.Itoa(seq)
	c.send(c.msgAt(seq, "1", "112="+id))
	hb := c.expect("0")
	if hb.get("112") != id {
		c.t.Fatalf("%s: Heartbeat answers %q, want %q: %s", c.compID, hb.get("112"), id, hb)
	}
	c.seqOut = seq + 1
}

// corruptCheckSum changes the CheckSum's last digit.
func corruptCheckSum(m []byte) []byte {
	out := append([]byte(nil), m...)
	d := &out[len(out)-2]
	*d = '0' + (*d-'0'+1)%10
	return out
}

// withBodyLength rebuilds m with BodyLength value n (CheckSum kept right).
func withBodyLength(m []byte, n string) []byte {
	i := bytes.Index(m, []byte("\x019=")) + 3
	j := bytes.IndexByte(m[i:], 1) + i
	body := m[j+1 : len(m)-trailerBytes]
	return withCheckSum([]byte("8=FIX.4.4\x019=" + n + "\x01" + string(body)))
}

var nosBody = newOrderBody("cat-1")

func hostileCases() []hostileCase {
	order := func(extra ...string) func(c *fixClient, seq int) []byte {
		return func(c *fixClient, seq int) []byte {
			return c.msgAt(seq, "D", append(newOrderBody("cat-"+strconv.Itoa(seq)), extra...)...)
		}
	}
	raw := func(f func(c *fixClient, seq int) []byte) func(c *fixClient, seq int) []byte { return f }
	logonMsg := func(c *fixClient, extra ...string) []byte {
		return c.msgAt(1, "A", append(logonBody(testPassword(c.compID)), extra...)...)
	}
	// bodyLength is an order whose BodyLength (9) says v.
	bodyLength := func(v string) func(c *fixClient, seq int) []byte {
		return func(c *fixClient, seq int) []byte { return withBodyLength(order()(c, seq), v) }
	}
	// logonAs is a Logon sent from compID to venueID, each left as the client's when "".
	logonAs := func(compID, venueID string) func(c *fixClient, seq int) []byte {
		return func(c *fixClient, seq int) []byte {
			if compID != "" {
				c.compID = compID
			}
			if venueID != "" {
				c.venueID = venueID
			}
			return logonMsg(c)
		}
	}
	cases := []hostileCase{
		// Garbled: dropped, no sequence number consumed.
		{name: "bad CheckSum", logon: true, react: reactDrop, reason: ReasonBadCheckSum,
			send: raw(func(c *fixClient, seq int) []byte { return corruptCheckSum(order()(c, seq)) })},
		{name: "CheckSum of two digits", logon: true, react: reactDrop, reason: ReasonBadCheckSum,
			send: raw(func(c *fixClient, seq int) []byte {
				m := order()(c, seq)
				return append(m[:len(m)-3:len(m)-3], 1)
			})},
		{name: "BodyLength too short", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: raw(func(c *fixClient, seq int) []byte {
				m := order()(c, seq)
				return withBodyLength(m, strconv.Itoa(len(m)-40))
			})},
		{name: "BodyLength too long", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: raw(func(c *fixClient, seq int) []byte {
				m := order()(c, seq)
				return withBodyLength(m, strconv.Itoa(len(m)+20))
			})},
		{name: "BodyLength not numeric", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: bodyLength("1x0")},
		{name: "BodyLength empty", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: bodyLength("")},
		{name: "BodyLength negative", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: bodyLength("-120")},
		{name: "BeginString not a FIX version", logon: true, react: reactDrop, reason: ReasonBadHeader,
			send: raw(func(c *fixClient, seq int) []byte { return fixMsgBegin("FIX.44", c.headerAt(seq, "D")...) })},
		{name: "MsgType not third", logon: true, react: reactDrop, reason: ReasonBadHeader,
			send: raw(func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				h[0], h[2] = h[2], h[0]
				return fixMsg(append(h, nosBody...)...)
			})},
		{name: "BodyLength not second", logon: true, react: reactDrop, reason: ReasonBadHeader,
			send: raw(func(c *fixClient, seq int) []byte {
				return rawMsg("8=FIX.4.4\x0135=D\x019=10\x01", c.headerAt(seq, "D")[1:]...)
			})},
		{name: "MsgType empty", logon: true, react: reactDrop, reason: ReasonBadHeader,
			send: raw(func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				h[0] = "35="
				return fixMsg(append(h, nosBody...)...)
			})},
		{name: "MsgSeqNum not a number", logon: true, react: reactDrop, reason: ReasonBadMsgSeqNum,
			send: raw(func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				h[1] = "34=" + strconv.Itoa(seq) + "x"
				return fixMsg(append(h, nosBody...)...)
			})},
		{name: "second BodyLength with a value", logon: true, react: reactDrop, reason: ReasonRepeatedFraming,
			send: order("9=12")},
		{name: "second MsgType", logon: true, react: reactDrop, reason: ReasonRepeatedFraming,
			send: order("35=A")},
		{name: "CheckSum inside the body", logon: true, react: reactDrop, reason: ReasonBadBodyLength,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append(append(c.headerAt(seq, "D"), "10=123"), nosBody...)...)
			})},
		{name: "XmlDataLen smaller than the data", logon: true, react: reactDrop, reason: ReasonBadDataLength,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append(append(c.headerAt(seq, "D"), "212=2", "213=<a/>X34="), nosBody...)...)
			})},
		{name: "XmlDataLen without XmlData", logon: true, react: reactDrop, reason: ReasonBadDataLength,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append(append(c.headerAt(seq, "D"), "212=4"), nosBody...)...)
			})},
		{name: "RawData holding SOH", logon: true, react: reactDrop, reason: ReasonDataWithSOH,
			send: order("95=9", "96=abc\x0134=\x01x")},
		{name: "tag not a number", logon: true, react: reactDrop, reason: ReasonBadField,
			send: order("5a=1")},
		{name: "field without =", logon: true, react: reactDrop, reason: ReasonBadField,
			send: order("58")},
		{name: "tag with a leading zero", logon: true, react: reactDrop, reason: ReasonBadField,
			send: order("055=ACME")},
		{name: "tag of nineteen digits", logon: true, react: reactDrop, reason: ReasonBadField,
			send: order("1234567890123456789=x")},

		// Resynchronisation: whatever precedes "8=FIX" is skipped.
		{name: "garbage before 8=", logon: true, react: reactAnswered,
			send: raw(func(c *fixClient, seq int) []byte {
				return cat([]byte("\x01\x01garbage 8=FOO 88=FIX"), c.msgAt(seq, "1", "112=probe-"+strconv.Itoa(seq)))
			})},
		{name: "binary garbage", logon: true, react: reactAnswered,
			send: raw(func(c *fixClient, seq int) []byte {
				junk := make([]byte, 4096)
				r := rand.New(rand.NewPCG(1, 2))
				for i := range junk {
					junk[i] = byte(r.IntN(256))
				}
				junk = bytes.ReplaceAll(junk, []byte("8=FIX"), []byte("8=FIY"))
				return cat(junk, c.msgAt(seq, "1", "112=probe-"+strconv.Itoa(seq)))
			})},

		// Disconnected: a Logon inside the session that the first Logon's
		// rules refuse (QuickFIX/Go would take any HeartBtInt from it).
		{name: "Logon inside the session with HeartBtInt 2^32+1", logon: true, react: reactClose, reason: ReasonLogonMalformed,
			send: func(c *fixClient, seq int) []byte {
				return c.msgAt(seq, "A", "98=0", "108=4294967297")
			}},
		{name: "Logon inside the session with HeartBtInt 0", logon: true, react: reactClose, reason: ReasonLogonMalformed,
			send: func(c *fixClient, seq int) []byte {
				return c.msgAt(seq, "A", "98=0", "108=0")
			}},
		// A reset whose MsgSeqNum is not 1, which the gate refuses in a first
		// Logon: QuickFIX/Go reset both stores, answered with a Logon and
		// logged out without a Text. Dropped; no Config.LogOut here (the
		// venue's: fixtests' logon_reset_in_session_not_at_one script), so
		// the edge closes.
		{name: "Logon inside the session with 141=Y and MsgSeqNum not 1", logon: true, react: reactClose, reason: ReasonLogonMalformed,
			send: func(c *fixClient, seq int) []byte {
				return c.msgAt(seq, "A", "98=0", "108=30", "141=Y")
			}},

		// Disconnected: a message without MsgSeqNum, which FIX ends the
		// session for. QuickFIX/Go would reject it and take the next
		// expected MsgSeqNum for it; dropped, it takes none. No
		// Config.LogOut here to log the session out (the venue's: fixtests'
		// msgseqnum_missing script), so the edge closes.
		{name: "message without MsgSeqNum", logon: true, react: reactClose, reason: ReasonMissingMsgSeqNum,
			send: func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				return fixMsg(append(append(h[:1:1], h[2:]...), nosBody...)...)
			}},

		// A routing field QuickFIX/Go would copy into its Reject of the
		// message, holding a byte a validating client refuses: dropped, and
		// the session logged out (here closed: no Config.LogOut; the
		// venue's: fixtests' reject_values_not_printable_ascii script).
		{name: "SenderSubID not printable ASCII", logon: true, react: reactClose, reason: ReasonRouteNotPrintable,
			send: func(c *fixClient, seq int) []byte {
				return fixMsg(append(append(c.headerAt(seq, "D"), "50=desk\xf5"), nosBody...)...)
			}},

		// Disconnected: a size claim the edge will not buffer.
		{name: "BodyLength huge", logon: true, react: reactClose, reason: ReasonOversize,
			send: bodyLength("999999999")},
		{name: "BodyLength over MessageBytesMax", logon: true, react: reactClose, reason: ReasonOversize,
			send: bodyLength("65537")},
		{name: "BodyLength of twenty digits", logon: true, react: reactClose, reason: ReasonOversize,
			send: bodyLength("12345678901234567890")},

		// Well framed, passed to QuickFIX/Go, which answers per the FIX rules.
		{name: "empty value in the body", logon: true, react: reactReject, reject: [2]string{"4", "44"},
			send: raw(func(c *fixClient, seq int) []byte {
				b := newOrderBody("e1")
				b[7] = "44="
				return c.msgAt(seq, "D", b...)
			})},
		{name: "empty value in the header", logon: true, react: reactReject, reject: [2]string{"4", "115"},
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append(append(c.headerAt(seq, "D"), "115="), nosBody...)...)
			})},
		{name: "empty repeating group count", logon: true, react: reactReject, reject: [2]string{"4", "78"},
			send: order("78=")},
		{name: "repeated tag", logon: true, react: reactReject, reject: [2]string{"13", "55"},
			send: order("55=ACME")},
		{name: "repeating group count mismatch", logon: true, react: reactReject, reject: [2]string{"16", "78"},
			send: order("78=2", "79=ACC1", "80=10")},
		{name: "header field after the body", logon: true, react: reactReject, reject: [2]string{"14", "115"},
			send: order("115=ONBEHALF")},
		{name: "undefined tag", logon: true, react: reactReject, reject: [2]string{"0", "4999"},
			send: order("4999=x")},
		{name: "tag of ten digits", logon: true, react: reactReject, reject: [2]string{"0", "1234567890"},
			send: order("1234567890=x")},
		{name: "tag of eighteen digits", logon: true, react: reactReject, reject: [2]string{"0", "123456789012345678"},
			send: order("123456789012345678=x")},
		{name: "unknown MsgType", logon: true, react: reactReject, reject: [2]string{"11", ""},
			send: raw(func(c *fixClient, seq int) []byte { return c.msgAt(seq, "ZZ", "58=hi") })},
		{name: "required field missing", logon: true, react: reactReject, reject: [2]string{"1", "54"},
			send: raw(func(c *fixClient, seq int) []byte {
				b := newOrderBody("m1")
				return c.msgAt(seq, "D", append(b[:3:3], b[4:]...)...)
			})},
		{name: "wrong BeginString after Logon", logon: true, react: reactLogout, text: "Incorrect BeginString",
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsgBegin("FIX.4.2", append(c.headerAt(seq, "D"), nosBody...)...)
			})},
		{name: "CompID problem", logon: true, react: reactRejectLogout, reject: [2]string{"9", ""},
			send: raw(func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				h[2] = "49=SOMEONE"
				return fixMsg(append(h, nosBody...)...)
			})},
		{name: "SendingTime accuracy problem", logon: true, react: reactRejectLogout, reject: [2]string{"10", ""},
			send: raw(func(c *fixClient, seq int) []byte {
				h := c.headerAt(seq, "D")
				h[3] = "52=" + time.Now().Add(-time.Hour).UTC().Format("20060102-15:04:05.000")
				return fixMsg(append(h, nosBody...)...)
			})},
		{name: "MsgSeqNum too low", logon: true, react: reactLogout, text: "MsgSeqNum too low",
			send: raw(func(c *fixClient, seq int) []byte { return c.msgAt(1, "D", nosBody...) })},
		{name: "PossDup resend passes unchanged", logon: true, react: reactCustom,
			run: func(t *testing.T, v *venue, c *fixClient) {
				c.trade("pd-1")
				// The same order again as a possible duplicate of an earlier
				// sequence number is ignored (FIX: PossDupFlag=Y, seq too low).
				h := c.headerAt(c.seqOut-1, "D")
				orig := time.Now().Add(-time.Second).UTC().Format("20060102-15:04:05.000")
				c.send(fixMsg(append(append(h, "43=Y", "122="+orig), newOrderBody("pd-1")...)...))
				c.probe(c.seqOut)
				// A PossDup at the expected sequence number is processed.
				h = c.headerAt(c.seqOut, "D")
				c.seqOut++
				c.send(fixMsg(append(append(h, "43=Y", "122="+orig), newOrderBody("pd-2")...)...))
				if er := c.expect("8"); er.get("11") != "pd-2" {
					t.Fatalf("PossDup order answered for %q", er.get("11"))
				}
			}},

		// The Logon gate.
		{name: "message before Logon", react: reactClose, reason: ReasonNotLogon,
			send: raw(func(c *fixClient, seq int) []byte { return c.msgAt(1, "D", nosBody...) })},
		{name: "unknown CompID", react: reactClose, reason: ReasonLogonRefused,
			send: logonAs("NOBODY", "")},
		{name: "wrong password", react: reactRefused, text: "Logon refused", reason: ReasonLogonRefused,
			send: raw(func(c *fixClient, seq int) []byte {
				return c.msgAt(1, "A", logonBody("not-the-password")...)
			})},
		{name: "missing password", react: reactRefused, text: "Logon refused", reason: ReasonLogonRefused,
			send: raw(func(c *fixClient, seq int) []byte { return c.msgAt(1, "A", logonBody("")...) })},
		{name: "Logon asking a new password", react: reactRefused, text: NewPasswordRefused, reason: ReasonLogonRefused,
			send: logonWith("98=0", "108=30", "925=n3w")},
		{name: "wrong password asking a new one", react: reactRefused, text: "Logon refused", reason: ReasonLogonRefused,
			send: raw(func(c *fixClient, seq int) []byte {
				return c.msgAt(1, "A", append(logonBody("not-the-password"), "925=n3w")...)
			})},
		{name: "wrong TargetCompID", react: reactClose, reason: ReasonLogonRefused,
			send: logonAs("", "OTHERVENUE")},
		{name: "source address not allowed", react: reactRefused, text: "Logon refused", reason: ReasonLogonRefused,
			send: logonAs("FARAWAY", "")},
		{name: "crash shape in Logon: empty MsgSeqNum", react: reactRefused, text: "tag 34 specified without value", reason: ReasonLogonMalformed,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append([]string{"35=A", "49=" + c.compID, "52=" + sendingTime(), "56=VENUE"}, append(logonBody(testPassword(c.compID)), "34=")...)...)
			})},
		{name: "Logon with empty HeartBtInt", react: reactRefused, text: "tag 108 specified without value", reason: ReasonLogonMalformed,
			send: logonWith("98=0", "108=")},
		{name: "Logon with HeartBtInt 0", react: reactRefused, text: "tag 108 must be a heartbeat interval of 1 to 3600 seconds", reason: ReasonLogonMalformed,
			send: logonWith("98=0", "108=0")},
		{name: "Logon with a negative HeartBtInt", react: reactRefused, text: "tag 108 must be a heartbeat interval of 1 to 3600 seconds", reason: ReasonLogonMalformed,
			send: logonWith("98=0", "108=-5")},
		{name: "Logon with a HeartBtInt beyond 32 bits", react: reactRefused, text: "tag 108 must be a heartbeat interval of 1 to 3600 seconds", reason: ReasonLogonMalformed,
			send: logonWith("98=0", "108=99999999999")},
		{name: "Logon without HeartBtInt", react: reactRefused, text: "required tag 108 missing", reason: ReasonLogonMalformed,
			send: logonWith("98=0")},
		{name: "Logon with a second SenderCompID", react: reactRefused, text: "tag 49 appears more than once", reason: ReasonLogonMalformed,
			send: raw(func(c *fixClient, seq int) []byte { return logonMsg(c, "49=WITNESS") })},
		{name: "Logon with a second Password", react: reactRefused, text: "tag 554 appears more than once", reason: ReasonLogonMalformed,
			send: raw(func(c *fixClient, seq int) []byte { return logonMsg(c, "554=other") })},
		{name: "Logon without MsgSeqNum", react: reactRefused, text: "required tag 34 missing", reason: ReasonLogonMalformed,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsg(append([]string{"35=A", "49=" + c.compID, "52=" + sendingTime(), "56=VENUE"}, logonBody(testPassword(c.compID))...)...)
			})},
		{name: "Logon with another BeginString", react: reactClose, reason: ReasonWrongBeginString,
			send: raw(func(c *fixClient, seq int) []byte {
				return fixMsgBegin("FIX.4.2", append(c.headerAt(1, "A"), logonBody(testPassword(c.compID))...)...)
			})},
		{name: "Logon with XmlDataLen overrun", react: reactClose, reason: ReasonBadDataLength,
			send: raw(func(c *fixClient, seq int) []byte { return logonMsg(c, "212=900", "213=<x/>") })},
		{name: "Logon with a bad CheckSum", react: reactClose, reason: ReasonBadCheckSum,
			send: raw(func(c *fixClient, seq int) []byte { return corruptCheckSum(logonMsg(c)) })},
		{name: "Logon with a huge BodyLength", react: reactClose, reason: ReasonOversize,
			send: raw(func(c *fixClient, seq int) []byte { return withBodyLength(logonMsg(c), "999999999") })},
		{name: "idle connection", react: reactClose, reason: ReasonLogonTimeout,
			send: raw(func(c *fixClient, seq int) []byte { return nil })},
		{name: "garbage then Logon", react: reactCustom,
			run: func(t *testing.T, v *venue, c *fixClient) {
				c.send(cat([]byte("GET / HTTP/1.1\r\n\r\n"), logonMsg(c)))
				c.expect("A")
				c.seqOut = 2
				c.trade("gl-1")
			}},
		{name: "slowloris Logon", react: reactCustom, reason: ReasonLogonTimeout,
			run: func(t *testing.T, v *venue, c *fixClient) {
				m := logonMsg(c)
				for i := range m {
					if _, err := c.conn.Write(m[i : i+1]); err != nil {
						break // closed by the deadline
					}
					time.Sleep(40 * time.Millisecond)
				}
				if got := c.expectClosed(5 * time.Second); len(got) != 0 {
					t.Fatalf("slowloris got %v", got)
				}
			}},
		{name: "second Logon for a logged-on session", react: reactCustom, reason: ReasonLogonDuplicate,
			run: func(t *testing.T, v *venue, c *fixClient) {
				first := v.logon(c.compID)
				c.send(logonMsg(c))
				if got := c.expectClosed(5 * time.Second); len(got) != 0 {
					t.Fatalf("a second Logon must be closed without a message, got %v", got)
				}
				first.trade("dup-1")
			}},
		{name: "Logon attempts rate-limited per CompID", react: reactCustom, reason: ReasonLogonRateLimit,
			run: func(t *testing.T, v *venue, c *fixClient) {
				var texts []string
				for range catalogueLogonBurst + 1 {
					cc := v.dial("RATED")
					cc.send(cc.msgAt(1, "A", logonBody("guess")...))
					texts = append(texts, refusalTextOrSilent(t, cc))
				}
				want := strings.Repeat("Logon refused,", catalogueLogonBurst) + "Too many logon attempts,"
				if got := strings.Join(texts, ",") + ","; got != want {
					t.Fatalf("refusals %q, want %q", got, want)
				}
			}},
		{name: "bad passwords do not move sequence numbers", react: reactCustom,
			run: func(t *testing.T, v *venue, c *fixClient) {
				first := v.logon(c.compID)
				first.trade("sq-1")
				first.trade("sq-2")
				first.sendMsg("5")
				first.expect("5")
				first.expectClosed(5 * time.Second)
				v.waitReleased(c.compID)
				next := first.seqOut
				for range 3 {
					cc := v.dial(c.compID)
					cc.send(cc.msgAt(next, "A", "98=0", "108=30", "554=wrong"))
					expectRefused(t, cc, "Logon refused")
				}
				// The good Logon continues the sequence: no reset flag, the
				// venue expects exactly `next`; a moved counter would end
				// in a Logout (too low) or a ResendRequest (too high).
				good := v.dial(c.compID)
				good.seqOut = next
				good.sendMsg("A", "98=0", "108=30", "554="+testPassword(c.compID))
				la := good.expect("A")
				if la.get("34") != "5" {
					t.Fatalf("venue's Logon has MsgSeqNum %s, want 5 (after 1 Logon, 2 reports, 1 Logout)", la.get("34"))
				}
				good.trade("sq-3")
			}},
	}
	// The messages that kill a bare QuickFIX/Go: dropped, the session lives.
	for _, shape := range crashShapes {
		cases = append(cases, hostileCase{name: "crash shape: " + shape.name, logon: true, react: reactDrop, reason: shape.reason, send: shape.build})
	}
	return cases
}

// expectRefused asserts the edge's refusal: a Logout with MsgSeqNum 1 and
// text, then the connection closes.
func expectRefused(t *testing.T, c *fixClient, text string) {
	t.Helper()
	if got := refusalText(t, c); got != text {
		t.Fatalf("refusal text %q, want %q", got, text)
	}
}

// refusalTextOrSilent returns the refusal Logout's text, or "" when the edge
// closed without a word (unknown CompIDs, wrong BeginString, second Logon).
func refusalTextOrSilent(t *testing.T, c *fixClient) string {
	t.Helper()
	got := c.expectClosed(5 * time.Second)
	if len(got) == 0 {
		return ""
	}
	if len(got) != 1 || got[0].get("35") != "5" || got[0].get("34") != "1" {
		t.Fatalf("want one Logout with MsgSeqNum 1 or nothing, got %v", got)
	}
	return got[0].get("58")
}

func refusalText(t *testing.T, c *fixClient) string {
	t.Helper()
	got := c.expectClosed(5 * time.Second)
	if len(got) != 1 || got[0].get("35") != "5" || got[0].get("34") != "1" {
		t.Fatalf("want one Logout with MsgSeqNum 1, got %v", got)
	}
	return got[0].get("58")
}

// catalogueCompIDs is the pool of client sessions the cases take turns
// with (each QuickFIX/Go session parses the dictionary, which is slow under
// the race detector); a case's connections are closed when it ends and the
// session is released before its CompID is used again.
const catalogueCompIDs = 10

// catalogueLogonBurst is the catalogue's per-CompID logon bucket: large
// enough for the pool's turns, and what the rate-limit case must exceed.
const catalogueLogonBurst = 20

func TestHostileCatalogue(t *testing.T) {
	t.Parallel()
	cases := hostileCases()
	if len(cases) < 40 {
		t.Fatalf("catalogue has %d cases, want at least 40", len(cases))
	}
	pool := testClients("C", catalogueCompIDs)
	venueID := nextVenueID()
	creds := Credentials{}
	for _, id := range append(pool, "WITNESS", "RATED") {
		creds[id] = Credential{Password: testPassword(id), VenueCompID: venueID}
	}
	creds["FARAWAY"] = Credential{Password: testPassword("FARAWAY"), Sources: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	v := startVenueAs(t, venueID, Config{
		Authenticator:   creds,
		LogonTimeout:    500 * time.Millisecond,
		LogonsPerCompID: Rate{PerSecond: 0.01, Burst: catalogueLogonBurst},
		LogonsPerSource: Rate{PerSecond: 1000, Burst: 1000},
	}, nil, append(pool, "WITNESS")...)
	witness := v.logon("WITNESS")
	stats := v.l.Stats()
	parent := v.t
	for i, tc := range cases {
		ok := t.Run(tc.name, func(t *testing.T) {
			v.t = t
			defer func() { v.t = parent }()
			compID := pool[i%len(pool)]
			v.waitReleased(compID)
			before := stats.Count(tc.reason)
			closesBefore := len(v.closeEvents())
			c := v.dial(compID)
			if tc.logon {
				c.sendMsg("A", logonBody(testPassword(compID))...)
				c.expect("A")
			}
			if tc.run != nil {
				tc.run(t, v, c)
			} else {
				runReaction(t, v, c, tc, closesBefore)
			}
			if tc.reason != ReasonNone {
				if after := stats.Count(tc.reason); after <= before {
					t.Fatalf("counter %s did not move (%d)", tc.reason, after)
				}
			}
		})
		// After every case: the process is alive and the witness trades.
		witness.t = t
		witness.trade(fmt.Sprintf("w-%d", i))
		if !ok {
			break
		}
	}
}

func runReaction(t *testing.T, v *venue, c *fixClient, tc hostileCase, closesBefore int) {
	seq := c.seqOut
	c.send(tc.send(c, seq))
	switch tc.react {
	case reactDrop:
		c.probe(seq)
	case reactAnswered:
		hb := c.expect("0")
		if hb.get("112") != "probe-"+strconv.Itoa(seq) {
			t.Fatalf("answered %s", hb)
		}
	case reactReject, reactRejectLogout:
		rj := c.expect("3")
		if rj.get("45") != strconv.Itoa(seq) || rj.get("373") != tc.reject[0] || (tc.reject[1] != "" && rj.get("371") != tc.reject[1]) {
			t.Fatalf("Reject %s, want 45=%d 373=%s 371=%s", rj, seq, tc.reject[0], tc.reject[1])
		}
		if tc.react == reactReject {
			c.probe(seq + 1)
			return
		}
		lo := c.expect("5")
		c.sendMsg("5")
		c.expectClosed(5 * time.Second)
		_ = lo
	case reactLogout:
		lo := c.expect("5")
		if !strings.Contains(lo.get("58"), tc.text) {
			t.Fatalf("Logout text %q, want %q", lo.get("58"), tc.text)
		}
		c.sendMsg("5")
		c.expectClosed(5 * time.Second)
	case reactClose:
		if got := c.expectClosed(5 * time.Second); len(got) != 0 {
			t.Fatalf("want a close without messages, got %v", got)
		}
		if tc.logon {
			v.waitCloseEvent(t, closesBefore, c.compID, tc.reason)
		}
	case reactRefused:
		got := refusalText(t, c)
		if !strings.Contains(got, tc.text) {
			t.Fatalf("refusal text %q, want %q", got, tc.text)
		}
	}
}
