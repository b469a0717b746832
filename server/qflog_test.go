package server

import "testing"

func TestScrub(t *testing.T) {
	in := "8=FIX.4.4\x0135=A\x01554=hunter2\x01925=newpass\x0110=000\x01"
	got := Scrub(in)
	want := "8=FIX.4.4\x0135=A\x01554=***\x01925=***\x0110=000\x01"
	if got != want {
		t.Fatalf("Scrub = %q", got)
	}
	if got := Scrub("8=FIX.4.4|554=x|1554=keep|"); got != "8=FIX.4.4|554=***|1554=keep|" {
		t.Fatalf("Scrub with | = %q", got)
	}
}
