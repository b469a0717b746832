package fixtests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// DefaultDeadline is how long an expectation waits for its message. The
// slowest legitimate gap in the QuickFIX scripts is about 7.2 s (a test
// request after 1.2 heartbeat intervals of 6 s).
const DefaultDeadline = 20 * time.Second

// DefaultDisconnectTimeout is how long eDISCONNECT waits for the acceptor to
// close, as the format prescribes.
const DefaultDisconnectTimeout = 10 * time.Second

// DefaultSettleAfterFailure is how long the runner waits after a failed
// script before it starts the next one. A failed script stops half-way with
// its connections still logged on; the runner closes them, but the acceptor
// notices the close a little later, and until then it refuses a Logon for
// the same session. The pause keeps one failure from failing the next
// script too. Passing scripts need no pause: they end with the acceptor
// closing the connection (eDISCONNECT), so it already knows.
const DefaultSettleAfterFailure = 500 * time.Millisecond

// scriptExt is the extension of script files.
const scriptExt = ".def"

// ErrNoScripts is returned when the options select no script at all, so that
// a run that tested nothing is never mistaken for a green one.
var ErrNoScripts = errors.New("no scripts selected")

// Options configures RunDir.
type Options struct {
	// Addr is the acceptor's host:port.
	Addr string
	// Dirs are folders whose *.def files run, each folder's files in name
	// order. Sub-folders are not entered: the QuickFIX folder keeps scripts
	// that need other acceptor settings in extra/, which must be asked for
	// on their own. A folder that does not exist is reported and skipped.
	Dirs []string
	// Files are single scripts that run after the folders'.
	Files []string
	// Deadline bounds each expectation, connection and send;
	// 0 means DefaultDeadline.
	Deadline time.Duration
	// DisconnectTimeout bounds eDISCONNECT; 0 means
	// DefaultDisconnectTimeout.
	DisconnectTimeout time.Duration
	// Filter, when set, selects scripts whose Name it matches.
	Filter *regexp.Regexp
	// Out receives the report; nil discards it.
	Out io.Writer
	// Setter carries out iSET_SESSION lines; nil makes them fail.
	Setter SessionSetter
	// PauseAfterDisconnect, when positive, is a pause after each
	// eDISCONNECT step that succeeded, before the next step. The reference
	// runner has none; it is for acceptors that release a session a moment
	// after they close its connection, and would otherwise refuse the next
	// Logon. Leave it 0 to test that an acceptor does not.
	PauseAfterDisconnect time.Duration
	// SettleAfterFailure is the pause after a failed script (see
	// DefaultSettleAfterFailure); 0 means the default, a negative value
	// no pause.
	SettleAfterFailure time.Duration
	// Skip, when set, is asked about every selected script file; a
	// non-empty answer is the reason the script is skipped (reported, not
	// counted as passed or failed).
	Skip func(path string) (reason string)
	// Check, when set, is given every message an expectation receives; an
	// error it returns fails the script, as a message that differs does
	// (the venue's tests refuse what a validating client would:
	// internal/fixcheck).
	Check func(msg []byte) error
}

// Summary is the outcome of a run.
type Summary struct {
	Passed  int
	Failed  int
	Skipped int
	// Missing lists folders and files that do not exist; their scripts
	// were skipped.
	Missing []string
	// Results holds one entry per script that ran, in run order.
	Results []ScriptResult
}

// OK reports whether at least one script ran and none failed.
func (s Summary) OK() bool { return s.Failed == 0 && s.Passed > 0 }

// scriptFile is a script selected to run.
type scriptFile struct {
	name, path string
}

// RunDir runs the selected scripts one after another against the acceptor
// at o.Addr, writes a report to o.Out and ends it with "N passed, M failed".
// Failed scripts are not errors: they are counted in the Summary. RunDir
// returns an error when the options are unusable, a folder cannot be read,
// no script is selected (ErrNoScripts), or ctx ends (with the summary so
// far).
func RunDir(ctx context.Context, o Options) (Summary, error) {
	if o.Addr == "" {
		return Summary{}, errors.New("fixtests: Options.Addr is empty")
	}
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.DisconnectTimeout <= 0 {
		o.DisconnectTimeout = DefaultDisconnectTimeout
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.SettleAfterFailure == 0 {
		o.SettleAfterFailure = DefaultSettleAfterFailure
	}
	var sum Summary
	files, missing, err := selectScripts(o)
	sum.Missing = missing
	for _, m := range missing {
		fmt.Fprintf(o.Out, "MISSING %s: not found; its scripts are skipped\n", m)
	}
	if err != nil {
		return sum, err
	}
	if len(files) == 0 {
		fmt.Fprintf(o.Out, "0 passed, 0 failed\n")
		return sum, ErrNoScripts
	}
	for i, f := range files {
		if i > 0 && sum.Failed > 0 && !sum.Results[len(sum.Results)-1].Passed {
			settle(ctx, o.SettleAfterFailure)
		}
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(o.Out, "%d passed, %d failed (interrupted)\n", sum.Passed, sum.Failed)
			return sum, err
		}
		if reason := skipReason(o.Skip, f.path); reason != "" {
			sum.Skipped++
			fmt.Fprintf(o.Out, "SKIP %s: %s\n", f.name, reason)
			continue
		}
		res := runFile(ctx, f, &o)
		sum.Results = append(sum.Results, res)
		if res.Passed {
			sum.Passed++
		} else {
			sum.Failed++
		}
		writeResult(o.Out, &res)
	}
	fmt.Fprintf(o.Out, "%d passed, %d failed\n", sum.Passed, sum.Failed)
	return sum, ctx.Err()
}

// settle waits d, or until ctx ends.
func settle(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func skipReason(skip func(string) string, path string) string {
	if skip == nil {
		return ""
	}
	return skip(path)
}

// runFile reads, parses and runs one script; a file that cannot be read or
// parsed is a failed script, not an aborted run.
func runFile(ctx context.Context, f scriptFile, o *Options) ScriptResult {
	data, err := readScript(f.path)
	if err != nil {
		return ScriptResult{Name: f.name, Path: f.path, Failure: &Failure{Reason: err.Error()}}
	}
	s, err := ParseScript(f.name, data)
	if err != nil {
		return ScriptResult{Name: f.name, Path: f.path, Failure: &Failure{Reason: err.Error()}}
	}
	s.Path = f.path
	return runScript(ctx, s, o)
}

// readScript reads a whole script file as bytes, refusing files over
// MaxScriptBytes.
func readScript(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxScriptBytes {
		return nil, fmt.Errorf("%s: %d bytes is over the %d byte limit", path, fi.Size(), MaxScriptBytes)
	}
	return os.ReadFile(path)
}

// selectScripts lists the scripts the options select, and the folders and
// files that do not exist.
func selectScripts(o Options) (files []scriptFile, missing []string, err error) {
	for _, dir := range o.Dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, dir)
			continue
		}
		if err != nil {
			return nil, missing, err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), scriptExt) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			files = appendSelected(files, o.Filter, filepath.Join(dir, n))
		}
	}
	for _, path := range o.Files {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, path)
			continue
		}
		files = appendSelected(files, o.Filter, path)
	}
	return files, missing, nil
}

func appendSelected(files []scriptFile, filter *regexp.Regexp, path string) []scriptFile {
	name := ScriptName(path)
	if filter != nil && !filter.MatchString(name) {
		return files
	}
	return append(files, scriptFile{name: name, path: path})
}

// ScriptName is the name a script file runs under: its folder's name, '/',
// and its file name without ".def" (e.g. "quickfix-fix44/2a_MsgSeqNumCorrect").
func ScriptName(path string) string {
	dir := filepath.Base(filepath.Dir(path))
	return dir + "/" + strings.TrimSuffix(filepath.Base(path), scriptExt)
}

// writeResult writes one script's outcome: a PASS line, or a FAIL line
// followed by where and why.
func writeResult(w io.Writer, r *ScriptResult) {
	secs := r.Elapsed.Seconds()
	if r.Passed {
		fmt.Fprintf(w, "PASS %s (%.2fs)\n", r.Name, secs)
		return
	}
	fmt.Fprintf(w, "FAIL %s (%.2fs)\n", r.Name, secs)
	f := r.Failure
	if f == nil {
		return
	}
	where := r.Path
	if f.Line > 0 {
		where = fmt.Sprintf("%s:%d", r.Path, f.Line)
	}
	if f.Step != "" {
		where += ": " + f.Step
	}
	fmt.Fprintf(w, "    %s: %s\n", where, f.Reason)
	if f.Expected != nil {
		fmt.Fprintf(w, "    expected: %s\n", showMessage(f.Expected))
	}
	if f.Received != nil {
		fmt.Fprintf(w, "    received: %s\n", showMessage(f.Received))
	} else if f.Expected != nil {
		fmt.Fprintf(w, "    received: nothing\n")
	}
	for _, d := range f.Differences {
		fmt.Fprintf(w, "    %s\n", d)
	}
}
