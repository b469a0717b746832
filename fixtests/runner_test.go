package fixtests_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixvenue/fixvenue/fixtests"
	"github.com/fixvenue/fixvenue/internal/closingln"
)

// These tests prove that the runner fails when it should: against a real
// QuickFIX/Go acceptor where one exists for the situation, and against a
// scripted fake where only a broken acceptor could produce it.

const (
	logonIn  = "I8=FIX.4.4|35=A|34=1|49=TW|52=<TIME>|56=ISLD|98=0|108=30|"
	logonOut = "E8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW|98=0|108=30|10=0|"
)

// writeScript writes a script with '|' standing for SOH and CRLF line ends,
// like the QuickFIX files, and returns its path.
func writeScript(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	body := strings.ReplaceAll(strings.Join(lines, "\r\n")+"\r\n", "|", "\x01")
	path := filepath.Join(dir, name+".def")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOne runs the given script files and returns the summary and report.
func runOne(t *testing.T, o fixtests.Options) (fixtests.Summary, string) {
	t.Helper()
	var out bytes.Buffer
	o.Out = &out
	sum, err := fixtests.RunDir(context.Background(), o)
	if err != nil {
		t.Fatalf("RunDir: %v\n%s", err, out.String())
	}
	return sum, out.String()
}

// wantReport checks that the report contains each piece, in order.
func wantReport(t *testing.T, report string, pieces ...string) {
	t.Helper()
	rest := report
	for _, p := range pieces {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Fatalf("report lacks %q (in order) in:\n%s", p, report)
		}
		rest = rest[i+len(p):]
	}
}

func TestWrongExpectationFails(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	dir := t.TempDir()
	path := writeScript(t, dir, "wrong",
		"# the acceptor answers 108=30, the script expects 108=31",
		"iCONNECT",
		logonIn,
		"E8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW|98=0|108=31|10=0|",
		"iDISCONNECT",
	)
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Passed != 0 || sum.Failed != 1 || sum.Results[0].Passed {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	f := sum.Results[0].Failure
	if f.Line != 4 || len(f.Differences) != 1 || f.Differences[0].Index != 8 {
		t.Fatalf("failure %+v", f)
	}
	wantReport(t, report,
		"FAIL "+filepath.Base(dir)+"/wrong",
		path+":4: E on connection 1: received message differs",
		"expected: 8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW|98=0|108=31|10=",
		"received: 8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=",
		"|108=30|10=",
		`field 9: tag 108 value differs (expected "108=31", received "108=30")`,
		"\n0 passed, 1 failed\n",
	)
}

func TestMissingMessageFailsByDeadline(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	path := writeScript(t, t.TempDir(), "never",
		"iCONNECT",
		"# QuickFIX/Go says nothing until it receives a Logon",
		"E8=FIX.4.4|9=49|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW|10=0|",
	)
	deadline := 300 * time.Millisecond
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}, Deadline: deadline})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":3: E on connection 1: no complete message within the 300ms deadline",
		"expected: 8=FIX.4.4|9=49|35=0|", "received: nothing", "0 passed, 1 failed")
}

func TestExpectDisconnectFailsWhenAcceptorStays(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	path := writeScript(t, t.TempDir(), "stays", "iCONNECT", logonIn, logonOut, "eDISCONNECT")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}, DisconnectTimeout: 300 * time.Millisecond})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":4: eDISCONNECT on connection 1: the acceptor did not close the connection within 300ms")
}

func TestExpectDisconnectFailsWhenAcceptorSendsFirst(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	path := writeScript(t, t.TempDir(), "talks",
		"iCONNECT", logonIn, logonOut,
		"# a logout is answered with a logout before the acceptor closes",
		"I8=FIX.4.4|35=5|34=2|49=TW|52=<TIME>|56=ISLD|",
		"eDISCONNECT")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":6: eDISCONNECT on connection 1: the acceptor sent bytes", "received: 8=FIX.4.4|9=49|35=5|34=2|")
}

// TestPassingScriptWithTwoConnections checks the happy path of the features
// the QuickFIX main suite uses least: numbered connections, <TIME±n>, an
// acceptor-initiated logout, and eDISCONNECT after it.
func TestPassingScriptWithTwoConnections(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	path := writeScript(t, t.TempDir(), "two",
		"i1,CONNECT",
		"I1,8=FIX.4.4|35=A|34=1|49=TW|52=<TIME-1>|56=ISLD|98=0|108=30|",
		"E1,"+logonOut[1:],
		"i2,CONNECT",
		"I2,8=FIX.4.4|35=A|34=1|49=TW|52=<TIME+1>|56=ISLD|98=0|108=30|",
		"e2,DISCONNECT",
		"I1,8=FIX.4.4|35=1|34=2|49=TW|52=<TIME>|56=ISLD|112=ping|",
		"E1,8=FIX.4.4|9=58|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW|112=ping|10=0|",
		"I1,8=FIX.4.4|35=5|34=3|49=TW|52=<TIME>|56=ISLD|",
		"E1,8=FIX.4.4|9=49|35=5|34=3|49=ISLD|52=00000000-00:00:00.000|56=TW|10=0|",
		"e1,DISCONNECT",
	)
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Passed != 1 || sum.Failed != 0 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
}

// TestSetSession runs the QuickFIX/Go-only nextexpectedseqnum scripts, which
// set the acceptor's sequence numbers through the hook, against the settings
// they were written for; and checks that without a hook they fail plainly.
func TestSetSession(t *testing.T) {
	dir := filepath.Join(quickfixDefs(t), "extra", "nextexpectedseqnum")
	acc := startAcceptor(t, "", "EnableNextExpectedMsgSeqNum=Y")
	addr := acc.addr
	sum, report := runOne(t, fixtests.Options{Addr: addr, Dirs: []string{dir}, Setter: acc.setter})
	t.Logf("report:\n%s", report)
	if sum.Passed != 4 || sum.Failed != 0 {
		t.Fatalf("with the hook: %d passed, %d failed; want 4 passed", sum.Passed, sum.Failed)
	}
	sum, report = runOne(t, fixtests.Options{Addr: addr, Dirs: []string{dir}, Filter: regexp.MustCompile("TooHigh")})
	if sum.Failed != 1 {
		t.Fatalf("without the hook: %+v\n%s", sum, report)
	}
	wantReport(t, report, ":4: iSET_SESSION: the script sets sequence numbers (FIX.4.4:ISLD->TW next sender 1", "no SessionSetter is configured")
}

// scriptedAcceptor is a fake acceptor for what QuickFIX/Go never does: on
// every connection that sends something it answers once with reply and then
// waits for the client to close.
func scriptedAcceptor(t *testing.T, reply []byte) string {
	return scriptedAcceptorNotifying(t, reply, nil)
}

// scriptedAcceptorNotifying is scriptedAcceptor that also sends the number
// of each accepted connection (1 = the probe) to accepted, when not nil.
func scriptedAcceptorNotifying(t *testing.T, reply []byte, accepted chan<- int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted != nil {
				accepted <- n
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 1024)
				if _, err := c.Read(buf); err != nil {
					return
				}
				if _, err := c.Write(reply); err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func TestReceivedChecksumIsVerified(t *testing.T) {
	head := "8=FIX.4.4\x019=5\x0135=0\x01"
	addr := scriptedAcceptor(t, []byte(head+"10=000\x01")) // the right sum is not 000
	path := writeScript(t, t.TempDir(), "sum", "iCONNECT", "I8=FIX.4.4|35=0|", "E8=FIX.4.4|9=5|35=0|10=0|")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":3: E on connection 1: CheckSum field says 000 but the bytes sum to ", "received: 8=FIX.4.4|9=5|35=0|10=000|")
}

// TestCheckRefusalFailsTheScript: a received message that Options.Check
// refuses fails the script with the check's reason, though it is the one
// expected; without a Check the same script passes.
func TestCheckRefusalFailsTheScript(t *testing.T) {
	addr := startAcceptor(t, "ResetOnLogon=Y", "").addr
	path := writeScript(t, t.TempDir(), "checked", "iCONNECT", logonIn, logonOut, "iDISCONNECT")
	refuse := func(msg []byte) error {
		if bytes.Contains(msg, []byte("\x0135=A\x01")) {
			return errors.New("no Logon today")
		}
		return nil
	}
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}, Check: refuse})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":3: E on connection 1: received message refused by the check: no Logon today", "received: 8=FIX.4.4|")
	// The acceptor may not yet have seen the refused run's connection
	// close, and turns a second logon of the same session away until it
	// has: the run is tried again for a while.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
		if sum.Passed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("without a Check: summary %+v\n%s", sum, report)
		}
	}
}

func TestGarbledReplyIsReported(t *testing.T) {
	addr := scriptedAcceptor(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	path := writeScript(t, t.TempDir(), "garbled", "iCONNECT", "I8=FIX.4.4|35=0|", "E8=FIX.4.4|9=5|35=0|10=0|")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, ":3: E on connection 1: received bytes are not a FIX frame: message does not start with", `received: HTTP/1.1 400 Bad Request\x0d\x0a`)
}

func TestRunDirSelection(t *testing.T) {
	addr := scriptedAcceptor(t, nil)
	dir := t.TempDir()
	writeScript(t, dir, "b_second", "iCONNECT", "iDISCONNECT")
	writeScript(t, dir, "a_first", "iCONNECT", "iDISCONNECT")
	writeScript(t, dir, "c_skipped", "iCONNECT", "iDISCONNECT")
	writeScript(t, dir, "d_filtered_out", "iCONNECT", "iDISCONNECT")
	writeScript(t, dir, "e_broken", "iCONNECT", "xDISCONNECT")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, filepath.Join(dir, "sub"), "not_entered", "iCONNECT")
	missing := filepath.Join(dir, "absent")
	sum, report := runOne(t, fixtests.Options{
		Addr:   addr,
		Dirs:   []string{missing, dir},
		Filter: regexp.MustCompile(`_(first|second|skipped|broken)$`),
		Skip: func(path string) string {
			if strings.Contains(path, "skipped") {
				return "because the test says so"
			}
			return ""
		},
	})
	if sum.Passed != 2 || sum.Failed != 1 || sum.Skipped != 1 || len(sum.Missing) != 1 || sum.Missing[0] != missing {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	base := filepath.Base(dir)
	wantReport(t, report,
		"MISSING "+missing+": not found; its scripts are skipped\n",
		"PASS "+base+"/a_first",
		"PASS "+base+"/b_second",
		"SKIP "+base+"/c_skipped: because the test says so\n",
		"FAIL "+base+"/e_broken",
		"line 2: line starts with 'x'",
		"\n2 passed, 1 failed\n")
	if strings.Contains(report, "not_entered") || strings.Contains(report, "filtered_out") {
		t.Fatalf("report mentions a script that was not selected:\n%s", report)
	}

	var out bytes.Buffer
	_, err := fixtests.RunDir(context.Background(), fixtests.Options{Addr: addr, Dirs: []string{missing}, Out: &out})
	if !errors.Is(err, fixtests.ErrNoScripts) || !strings.HasSuffix(out.String(), "0 passed, 0 failed\n") {
		t.Fatalf("nothing selected: err %v, report %q", err, out.String())
	}
}

func TestRunDirStopsWhenContextEnds(t *testing.T) {
	accepted := make(chan int, 8)
	addr := scriptedAcceptorNotifying(t, nil, accepted)
	path := writeScript(t, t.TempDir(), "waits", "iCONNECT", "E8=FIX.4.4|9=5|35=0|10=0|")
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan struct{})
	var sum fixtests.Summary
	var err error
	go func() {
		defer close(done)
		sum, err = fixtests.RunDir(ctx, fixtests.Options{Addr: addr, Files: []string{path, path}, Out: &out, Deadline: time.Hour})
	}()
	// Connection 1 is the probe, 2 the script's own: the script is running
	// and waits for a message the fake never sends; only cancelling ends it.
	for n := range accepted {
		if n == 2 {
			break
		}
	}
	cancel()
	<-done
	if !errors.Is(err, context.Canceled) || sum.Failed != 1 || len(sum.Results) != 1 {
		t.Fatalf("err %v, summary %+v\n%s", err, sum, out.String())
	}
	wantReport(t, out.String(), "interrupted", "0 passed, 1 failed (interrupted)")
}

func TestEmptyScriptFails(t *testing.T) {
	addr := scriptedAcceptor(t, nil)
	path := writeScript(t, t.TempDir(), "empty", "# nothing to do")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, "no steps")
}

func TestUnreachableAcceptorFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := writeScript(t, t.TempDir(), "nobody", "iCONNECT")
	sum, report := runOne(t, fixtests.Options{Addr: addr, Files: []string{path}})
	if sum.Failed != 1 {
		t.Fatalf("summary %+v\n%s", sum, report)
	}
	wantReport(t, report, "probe connection: cannot connect to "+addr)
}

// TestPauseAfterDisconnect checks that the runner waits at least
// PauseAfterDisconnect after each eDISCONNECT that succeeded. Only the lower
// bound is checked: a sleep never ends early, while an upper bound would
// depend on the machine.
func TestPauseAfterDisconnect(t *testing.T) {
	addr, _ := closingln.Listen(t)
	dir := t.TempDir()
	writeScript(t, dir, "twice", "iCONNECT", "eDISCONNECT", "iCONNECT", "eDISCONNECT")
	const pause = 150 * time.Millisecond
	sum, report := runOne(t, fixtests.Options{Addr: addr, Dirs: []string{dir}, PauseAfterDisconnect: pause})
	if sum.Passed != 1 {
		t.Fatalf("%+v\n%s", sum, report)
	}
	if got := sum.Results[0].Elapsed; got < 2*pause {
		t.Fatalf("the script took %v; two pauses of %v cannot take less", got, pause)
	}
}

// TestSettleAfterFailure checks that a failed script is followed by the
// settle pause before the next script starts (a lower bound again), and that
// both scripts still run and are counted.
func TestSettleAfterFailure(t *testing.T) {
	addr, accepted := closingln.Listen(t)
	dir := t.TempDir()
	// The listener closes every connection, so expecting a message fails at
	// once and expecting a disconnect passes.
	writeScript(t, dir, "a_fails", "iCONNECT", "E8=FIX.4.4|35=0|")
	writeScript(t, dir, "b_passes", "iCONNECT", "eDISCONNECT")
	const settle = 300 * time.Millisecond
	started := time.Now()
	sum, report := runOne(t, fixtests.Options{Addr: addr, Dirs: []string{dir}, SettleAfterFailure: settle})
	if sum.Passed != 1 || sum.Failed != 1 {
		t.Fatalf("%+v\n%s", sum, report)
	}
	if took := time.Since(started); took < settle {
		t.Fatalf("the run took %v, less than the %v pause after the failure", took, settle)
	}
	// Two scripts, each with a probe connection and one of its own.
	if n := accepted(); n != 4 {
		t.Fatalf("%d connections accepted, want 4", n)
	}
}
