package edge

import (
	"net"
	"testing"
	"time"
)

// fuzzSendingTime is a fixed SendingTime for the seed corpus: QuickFIX/Go
// answers stale ones with a Reject and a Logout, which is as good an input
// as any.
const fuzzSendingTime = "20260101-00:00:00.000"

// fuzzMsg builds a message from FUZZ1 to VENUE with MsgSeqNum seq.
func fuzzMsg(seq string, msgType string, body ...string) []byte {
	return fixMsg(append([]string{"35=" + msgType, "34=" + seq, "49=FUZZ1", "52=" + fuzzSendingTime, "56=VENUE"}, body...)...)
}

// FuzzInbound drives the whole inbound path: bytes from a client over a
// real TCP connection, through the edge, into a QuickFIX/Go v0.9.11
// acceptor with the FIX44 dictionary and a trivial application. With
// afterLogon the client first logs on as FUZZ1 and the data follows;
// otherwise the data are the connection's first bytes (the Logon gate's
// input). Any QuickFIX/Go panic kills the process, which the fuzzing engine
// reports as a crasher. After each input the connection is closed, the
// venue must be back to one session, and a witness session must still trade.
func FuzzInbound(f *testing.F) {
	order := newOrderBody("f1")
	f.Add(true, fuzzMsg("2", "D", order...))
	f.Add(true, fuzzMsg("", "D", order...))                                                   // empty MsgSeqNum
	f.Add(true, fuzzMsg("2", "D", append(order, "9=")...))                                    // second empty BodyLength
	f.Add(true, fuzzMsg("2", "D", append([]string{"212=500", "213=<a/>"}, order...)...))      // XmlDataLen overrun
	f.Add(true, fuzzMsg("2", "0", "212=", "213=<a/>"))                                        // empty XmlDataLen
	f.Add(true, fuzzMsg("2", "D", append([]string{"212=7", "213=<a>\x01</a>"}, order...)...)) // XmlData with SOH
	f.Add(true, fuzzMsg("2", "2", "7=", "16=0"))
	f.Add(true, fuzzMsg("2", "4", "123=Y", "36="))
	f.Add(true, fuzzMsg("2", "D", append(order, "78=2", "79=A", "80=1")...))
	f.Add(true, cat([]byte("garbage"), fuzzMsg("2", "1", "112=x"), fuzzMsg("3", "5")))
	f.Add(false, fuzzMsg("1", "A", logonBody(testPassword("FUZZ1"))...))
	f.Add(false, fuzzMsg("", "A", logonBody(testPassword("FUZZ1"))...))
	f.Add(false, cat(fuzzMsg("1", "A", logonBody(testPassword("FUZZ1"))...), fuzzMsg("2", "D", append(order, "34=")...)))
	f.Add(false, fuzzMsg("1", "A", append(logonBody(testPassword("FUZZ1")), "212=90", "213=x")...))

	v := startVenueAs(f, "VENUE", Config{
		LogonTimeout:    time.Second,
		LogonsPerCompID: Rate{PerSecond: 1e6, Burst: 1e6},
		LogonsPerSource: Rate{PerSecond: 1e6, Burst: 1e6},
		Accepts:         Rate{PerSecond: 1e6, Burst: 1e6},
		// One connection per input, all from loopback.
		AcceptsPerSource: Rate{PerSecond: 1e6, Burst: 1e6},
	}, nil, "FUZZ1", "WITNESS")
	witness := v.logon("WITNESS")
	stats := v.l.Stats()

	var inputs int
	f.Fuzz(func(t *testing.T, afterLogon bool, data []byte) {
		v.t, witness.t = t, t
		// The client closes first (CloseWrite below), so each input
		// leaves a TIME_WAIT socket for a minute: from 127.0.0.1 those
		// used up the machine's ports at fuzzing rates, and every other
		// test binding 127.0.0.1:0 failed meanwhile. Spread over
		// 127.0.0.2-127.0.0.254, they hold ports of those addresses only.
		inputs++
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+inputs%253))}
		conn, err := (&net.Dialer{Timeout: 5 * time.Second, LocalAddr: local}).Dial("tcp", v.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := newFixClient(t, conn, "FUZZ1")
		if afterLogon {
			c.sendMsg("A", logonBody(testPassword("FUZZ1"))...)
			c.expect("A")
		}
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write(data)
		_ = conn.(*net.TCPConn).CloseWrite()
		// Read whatever comes back until the venue closes the connection.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var sink [4096]byte
		for {
			if _, err := conn.Read(sink[:]); err != nil {
				break
			}
		}
		// QuickFIX/Go has handled every message once it closes its side:
		// it drains its inbound queue before it disconnects.
		deadline := time.Now().Add(10 * time.Second)
		for stats.SessionsOpen.Load() != 1 || stats.ConnectionsOpen.Load() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("venue still has %d sessions, %d connections", stats.SessionsOpen.Load(), stats.ConnectionsOpen.Load())
			}
			time.Sleep(time.Millisecond)
		}
		witness.trade("w")
	})
}
