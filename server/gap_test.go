package server

import (
	"testing"

	"github.com/fixvenue/fixvenue/internal/fixclient"
)

// TestLogonWithSeqGap logs on with a MsgSeqNum above what the venue expects
// (messages lost in a crash) and sends an order status request at once: the
// venue asks for a resend, the client gap-fills, and the request is answered.
func TestLogonWithSeqGap(t *testing.T) {
	t.Parallel()
	s := startServer(t, testConfig(t, t.TempDir(), ""), Options{})
	c := logon(t, s, "CLIENT1", true)
	sendOrder(t, c, order{id: "g1", side: "1", qty: "1", px: "97.00", tif: "1"})
	expectER(t, c, map[int]string{11: "g1", 150: "0"})
	next := c.NextOut
	c.Close()
	r, _ := resume(t, s, "CLIENT1", next+50)
	if err := r.Send("H", fixclient.F(11, "g1"), fixclient.F(55, "ACME"), fixclient.F(54, "1")); err != nil {
		t.Fatal(err)
	}
	expectER(t, r, map[int]string{11: "g1", 150: "I"})
}
