package server

import (
	"testing"

	"github.com/fixvenue/fixvenue/ops"
)

// TestSessionDisableThatTimesOutIsCarriedOut: an operator disables CLIENT2
// while it is logged on, and the journal's sync holds the command past the
// call's timeout: the call answers 504 timeout, and the matcher applies the
// command once the journal has it. The venue then carries it out as a call
// answered done does: CLIENT2 is logged out, listed as disabled, and its
// logon refused, as a restart's replay and a cluster's follower take it
// from the journal. It was carried out only for a call answered done: the
// session traded on until a restart disabled it. An enable then sent
// waits for nothing and lets it back in.
func TestSessionDisableThatTimesOutIsCarriedOut(t *testing.T) {
	t.Parallel()
	s, hold := startHeld(t, testConfig(t, t.TempDir(), adminConfig()), Options{})
	c := logon(t, s, "CLIENT2", true)
	defer c.Close()
	hold.on.Store(true)
	var timedOut struct{ Code string }
	if code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/disable", aliceToken, `{"reason":"unpaid bill"}`, &timedOut); code != 504 ||
		timedOut.Code != "timeout" {
		t.Fatalf("a disable held by the journal's sync: %d %+v, want 504 timeout", code, timedOut)
	}
	hold.on.Store(false)
	hold.release()
	waitUntil(t, "CLIENT2 listed as disabled once its disable is applied", func() bool {
		var sessions []ops.SessionInfo
		adminCall(t, s, "GET", "/v1/sessions", aliceToken, "", &sessions)
		for _, si := range sessions {
			if si.CompID == "CLIENT2" {
				return si.Disabled && !si.LoggedOn
			}
		}
		return false
	})
	logonRefused(t, s, "CLIENT2", "after its disable was applied")
	if code := adminCall(t, s, "POST", "/v1/sessions/CLIENT2/enable", aliceToken, `{"reason":"paid"}`, nil); code != 200 {
		t.Fatalf("enable: %d", code)
	}
	logon(t, s, "CLIENT2", true).Close()
}
