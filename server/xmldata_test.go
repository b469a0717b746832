package server

import (
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestXMLDataHoldingSOH: XmlData (213) may hold any byte, SOH included
// (its length, XmlDataLen 212, gives its end), and the FIX edge passes it.
// QuickFIX/Go's validator refused every such message with a Reject for a
// tag 0 without a value (373=4, 371=0), a field the message does not have:
// a TestRequest was not answered, an order was not taken.
func TestXMLDataHoldingSOH(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	xml := func() []fixclient.Field {
		return []fixclient.Field{fixclient.F(212, "8"), fixclient.F(213, "<a>\x01</a>")}
	}
	if err := c.Send("1", append(xml(), fixclient.F(112, "xml-soh"))...); err != nil {
		t.Fatal(err)
	}
	if m, err := c.ReadAny(readWait); err != nil || m.Type() != "0" || m.Get(112) != "xml-soh" {
		t.Fatalf("got %v (%v), want the Heartbeat answering the TestRequest", m, err)
	}
	order := append(xml(), fixclient.F(11, "xml-order"), fixclient.F(55, "ACME"), fixclient.F(54, "1"),
		fixclient.F(60, now()), fixclient.F(38, "1"), fixclient.F(40, "2"), fixclient.F(44, "95.00"), fixclient.F(59, "0"))
	if err := c.Send("D", order...); err != nil {
		t.Fatal(err)
	}
	if m, err := c.ReadAny(readWait); err != nil || m.Type() != "8" || m.Get(11) != "xml-order" || m.Get(150) != "0" {
		t.Fatalf("got %v (%v), want the order's New report", m, err)
	}
}
