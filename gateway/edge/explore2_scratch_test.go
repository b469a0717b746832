package edge

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

func TestExplore2Scratch(t *testing.T) {
	if os.Getenv("EXPLORE2") == "" {
		t.Skip()
	}
	type cs struct {
		name     string
		settings []string
		logon    bool
		mk       func(c *fixClient) []byte
	}
	nos := []string{"11=C1", "55=ACME", "54=1", "60=" + sendingTime(), "38=10", "40=2", "44=100"}
	cases := []cs{
		{"logon-empty34", nil, false, func(c *fixClient) []byte {
			return fixMsg("35=A", "34=", "49=CLIENT1", "52="+sendingTime(), "56=VENUE", "98=0", "108=30")
		}},
		{"logon-empty34-novalidate", []string{"ValidateFieldsHaveValues=N"}, false, func(c *fixClient) []byte {
			return fixMsg("35=A", "34=", "49=CLIENT1", "52="+sendingTime(), "56=VENUE", "98=0", "108=30")
		}},
		{"logon-empty34-nodd", []string{"DataDictionary=none"}, false, func(c *fixClient) []byte {
			return fixMsg("35=A", "34=", "49=CLIENT1", "52="+sendingTime(), "56=VENUE", "98=0", "108=30")
		}},
		{"logon-empty108-novalidate", []string{"ValidateFieldsHaveValues=N", "RejectInvalidMessage=N"}, false, func(c *fixClient) []byte {
			return fixMsg("35=A", "34=1", "49=CLIENT1", "52="+sendingTime(), "56=VENUE", "98=0", "108=")
		}},
		{"session-empty34-D", nil, true, func(c *fixClient) []byte {
			return fixMsg(append([]string{"35=D", "34=", "49=CLIENT1", "52=" + sendingTime(), "56=VENUE"}, nos...)...)
		}},
		{"session-empty34-0", nil, true, func(c *fixClient) []byte {
			return fixMsg("35=0", "34=", "49=CLIENT1", "52="+sendingTime(), "56=VENUE")
		}},
		{"session-second34-empty", nil, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), nos...), "34=")...)
		}},
		{"session-second9-empty", nil, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), nos...), "9=")...)
		}},
		{"session-second9-value", nil, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), nos...), "9=5")...)
		}},
		{"session-212-overrun", nil, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), "212=500", "213=<a/>"), nos...)...)
		}},
		{"session-212-under", nil, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), "212=2", "213=<a/>X34="), nos...)...)
		}},
		{"session-empty-group-count", []string{"ValidateFieldsHaveValues=N"}, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), nos...), "78=")...)
		}},
		{"session-empty-38-novalidate", []string{"ValidateFieldsHaveValues=N", "RejectInvalidMessage=N"}, true, func(c *fixClient) []byte {
			return fixMsg(append(append(c.header("D"), nos[:4]...), "38=", "40=2", "44=100")...)
		}},
		{"session-empty-7", []string{}, true, func(c *fixClient) []byte {
			return fixMsg(append(c.header("2"), "7=", "16=0")...)
		}},
		{"session-empty-7-novalidate", []string{"ValidateFieldsHaveValues=N"}, true, func(c *fixClient) []byte {
			return fixMsg(append(c.header("2"), "7=", "16=0")...)
		}},
		{"session-empty-36-novalidate", []string{"ValidateFieldsHaveValues=N"}, true, func(c *fixClient) []byte {
			return fixMsg(append(c.header("4"), "36=")...)
		}},
	}
	for _, cs := range cases {
		child := startRawChild(t, cs.settings...)
		conn, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", child.port))
		if err != nil {
			t.Fatal(err)
		}
		c := newFixClient(t, conn, "CLIENT1")
		if cs.logon {
			c.sendMsg("A", logonFields("")...)
			m, err := c.read(3 * time.Second)
			if err != nil || m.get("35") != "A" {
				t.Fatalf("logon: %v %v", m, err)
			}
		}
		c.send(cs.mk(c))
		m, err := c.read(2 * time.Second)
		select {
		case <-child.exited:
			t.Logf("%s: CRASH %v %v", cs.name, m, err)
		case <-time.After(300 * time.Millisecond):
			t.Logf("%s: alive %v %v", cs.name, m, err)
			child.stop()
		}
	}
}
