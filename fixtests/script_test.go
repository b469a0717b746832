package fixtests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	src := "# comment\r\n" +
		"\r\n" +
		"   \r\n" +
		"iCONNECT\r\n" +
		"I8=FIX.4.4\x0135=A\x0152=<TIME>\x01\r\n" +
		"E8=FIX.4.4\x019=61\x0135=A\x0110=0\x01\r\n" +
		"i2,CONNECT\n" +
		"I2,8=FIX.4.4\x0135=A\x01\r\n" +
		"e2,DISCONNECT\r\n" +
		"iSET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=2000 NEXTTARGETSEQNUM=7\r\n" +
		"E1,8=FIX.4.4\x01\r\n" +
		"i1,DISCONNECT" // no newline at the end, as in some QuickFIX files
	s, err := ParseScript("x/y", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Line: 4, Kind: StepConnect, Conn: 1},
		{Line: 5, Kind: StepSend, Conn: 1, Message: []byte("8=FIX.4.4\x0135=A\x0152=<TIME>\x01")},
		{Line: 6, Kind: StepExpect, Conn: 1, Message: []byte("8=FIX.4.4\x019=61\x0135=A\x0110=0\x01")},
		{Line: 7, Kind: StepConnect, Conn: 2},
		{Line: 8, Kind: StepSend, Conn: 2, Message: []byte("8=FIX.4.4\x0135=A\x01")},
		{Line: 9, Kind: StepExpectDisconnect, Conn: 2},
		{Line: 10, Kind: StepSetSession, Conn: 1, SeqNums: SessionSeqNums{
			BeginString: "FIX.4.4", SenderCompID: "ISLD", TargetCompID: "TW", NextSenderSeqNum: 2000, NextTargetSeqNum: 7}},
		{Line: 11, Kind: StepExpect, Conn: 1, Message: []byte("8=FIX.4.4\x01")},
		{Line: 12, Kind: StepDisconnect, Conn: 1},
	}
	if len(s.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(s.Steps), len(want), s.Steps)
	}
	for i, w := range want {
		g := s.Steps[i]
		if g.Line != w.Line || g.Kind != w.Kind || g.Conn != w.Conn || string(g.Message) != string(w.Message) || g.SeqNums != w.SeqNums {
			t.Errorf("step %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct{ name, src, wantIn string }{
		{"unknown action", "iCONNECTX\r\n", "line 1: unknown action"},
		{"unknown expectation", "\r\neCONNECT\r\n", "line 2: unknown expectation"},
		{"unknown kind", "X8=FIX.4.4\r\n", "not one of"},
		{"connection zero", "i0,CONNECT\r\n", "outside 1..9"},
		{"empty message", "I\r\n", "without a message"},
		{"bad placeholder", "I8=FIX.4.4\x0152=<TIME+a>\x01\r\n", "placeholder"},
		{"set session without key", "iSET_SESSION FIX.4.4:ISLD->TW\r\n", "at least one"},
		{"set session bad id", "iSET_SESSION ISLD->TW NEXTSENDERSEQNUM=1\r\n", "BEGINSTRING:SENDER->TARGET"},
		{"set session bad number", "iSET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=x\r\n", "positive"},
		{"set session unknown key", "iSET_SESSION FIX.4.4:ISLD->TW NEXTFOO=1\r\n", "unknown key"},
		{"set session with connection", "i2,SET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=1\r\n", "no connection"},
		{"leading blank", " iCONNECT\r\n", "not one of"},
		{"<ANY> in an I line", "I8=FIX.4.4\x0111=<ANY>\x01\r\n", "only stand for a value in an E line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript("x/y", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantIn)
			}
		})
	}
	if _, err := ParseScript("big", make([]byte, MaxScriptBytes+1)); err == nil {
		t.Fatal("a script over MaxScriptBytes was accepted")
	}
}

// TestParseAllScripts parses every script this package knows of: the
// QuickFIX ones (when present) and our own. Every line must be understood,
// and every message line must carry SOH-separated fields.
func TestParseAllScripts(t *testing.T) {
	var dirs []string
	if dir, err := QuickFIXDefsDir(); err == nil {
		if _, err := os.Stat(dir); err == nil {
			dirs = append(dirs, dir)
			sub, _ := filepath.Glob(filepath.Join(dir, "extra", "*"))
			dirs = append(dirs, sub...)
		} else {
			t.Logf("the QuickFIX scripts are missing (%v); parsing only ours", err)
		}
	}
	dirs = append(dirs, filepath.Join("scripts", "session"), filepath.Join("scripts", "venue"))
	parsed := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.def"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseScript(ScriptName(f), data)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			parsed++
			for _, st := range s.Steps {
				if (st.Kind == StepSend || st.Kind == StepExpect) && !strings.Contains(string(st.Message), "\x01") {
					t.Errorf("%s line %d: message without SOH", f, st.Line)
				}
			}
		}
	}
	t.Logf("parsed %d scripts", parsed)
}

// FuzzParseScript feeds arbitrary bytes to the script parser: it must never
// panic, and every step it returns must be well formed.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte("iCONNECT\r\nI8=FIX.4.4\x0135=A\x0152=<TIME>\x01\r\neDISCONNECT"))
	f.Add([]byte("i2,CONNECT\ne2,DISCONNECT\n"))
	f.Add([]byte("iSET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=1\n"))
	f.Add([]byte("E8=<TIME-5>\x01<TIME\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseScript("fuzz", b)
		if err != nil {
			return
		}
		for _, st := range s.Steps {
			if st.Conn < 1 || st.Conn > connectionsMax || st.Line < 1 || st.Kind < StepConnect || st.Kind > StepSetSession {
				t.Fatalf("bad step %+v", st)
			}
			if st.Kind == StepSend || st.Kind == StepExpect {
				if _, err := prepareSend(st.Message, time.Unix(1e9, 0)); err != nil {
					t.Fatalf("parsed message does not expand: %v", err)
				}
			}
		}
	})
}
