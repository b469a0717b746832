package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/internal/closingln"
)

func writeDef(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "|", "\x01")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunExitStatus(t *testing.T) {
	addr, _ := closingln.Listen(t)
	dir := t.TempDir()
	pass := writeDef(t, dir, "closed.def", "iCONNECT\r\neDISCONNECT\r\n")
	writeDef(t, dir, "answer.def", "iCONNECT\r\nI8=FIX.4.4|35=0|\r\nE8=FIX.4.4|9=5|35=0|10=0|\r\n")
	tests := []struct {
		name     string
		args     []string
		want     int
		lastLine string
	}{
		{"all pass", []string{"-addr", addr, "-scripts", pass}, exitPassed, "1 passed, 0 failed"},
		{"one fails", []string{"-addr", addr, "-scripts", dir}, exitFailed, "1 passed, 1 failed"},
		{"filter", []string{"-addr", addr, "-scripts", dir, "-run", "answer$"}, exitFailed, "0 passed, 1 failed"},
		{"nothing selected", []string{"-addr", addr, "-scripts", dir, "-run", "nomatch"}, exitUsage, "0 passed, 0 failed"},
		{"bad regexp", []string{"-addr", addr, "-scripts", dir, "-run", "("}, exitUsage, ""},
		{"stray argument", []string{"-addr", addr, "x"}, exitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := run(context.Background(), tt.args, &out, &errOut)
			if got != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, out.String(), errOut.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if tt.lastLine != "" && lines[len(lines)-1] != tt.lastLine {
				t.Fatalf("last line %q, want %q\n%s", lines[len(lines)-1], tt.lastLine, out.String())
			}
		})
	}
}

func TestRunSaysWhenQuickFIXScriptsAreMissing(t *testing.T) {
	addr, _ := closingln.Listen(t)
	missing := filepath.Join(t.TempDir(), "no-such-folder")
	t.Setenv("FIXVENUE_QUICKFIX_DEFS", missing)
	other := writeDef(t, t.TempDir(), "closed.def", "iCONNECT\r\neDISCONNECT\r\n")
	var out, errOut bytes.Buffer
	got := run(context.Background(), []string{"-addr", addr, "-scripts", missing + "," + other}, &out, &errOut)
	if got != exitPassed {
		t.Fatalf("exit %d\n%s%s", got, out.String(), errOut.String())
	}
	for _, want := range []string{"The QuickFIX scripts are missing from " + missing, "FIXVENUE_QUICKFIX_DEFS", "MISSING " + missing, "1 passed, 0 failed\n"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunHookAddr checks that -hook-addr carries out iSET_SESSION through the
// venue's test hook, and that without it such a script fails.
func TestRunHookAddr(t *testing.T) {
	addr, _ := closingln.Listen(t)
	var mu sync.Mutex
	var queries []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	script := writeDef(t, t.TempDir(), "set.def", "iSET_SESSION FIX.4.4:ISLD->TW NEXTSENDERSEQNUM=5\r\niCONNECT\r\neDISCONNECT\r\n")

	var out, errOut bytes.Buffer
	if got := run(context.Background(), []string{"-addr", addr, "-scripts", script, "-hook-addr", strings.TrimPrefix(hook.URL, "http://")}, &out, &errOut); got != exitPassed {
		t.Fatalf("with -hook-addr: exit %d\n%s%s", got, out.String(), errOut.String())
	}
	mu.Lock()
	got := strings.Join(queries, "\n")
	mu.Unlock()
	if want := "POST /test/seqnums?next_sender=5&session=FIX.4.4%3AISLD-%3ETW"; got != want {
		t.Fatalf("hook saw %q, want %q", got, want)
	}

	out.Reset()
	if got := run(context.Background(), []string{"-addr", addr, "-scripts", script}, &out, &errOut); got != exitFailed {
		t.Fatalf("without -hook-addr: exit %d, want %d\n%s", got, exitFailed, out.String())
	}
	if !strings.Contains(out.String(), "no SessionSetter is configured") {
		t.Fatalf("the failure does not say why:\n%s", out.String())
	}
}
