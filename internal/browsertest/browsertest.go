// Package browsertest drives headless Chromium (Debian's chromium package;
// .ci/run installs it) with chromedp for the console's tests in a real
// browser: a fresh profile per test, and every step bounded in time.
// Without a browser installed, New skips the test and says why.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Wait bounds every wait for the page. The pages update at their
// updates_per_second; the bound is generous because the test machines are
// shared, and speed is not what these tests assert.
const Wait = 15 * time.Second

// StartMax bounds Chromium's start and stop.
const StartMax = 60 * time.Second

// pollInterval is how often WaitFor evaluates its predicate.
const pollInterval = 50 * time.Millisecond

// chromiumPath finds the browser, or "" when none is installed.
func chromiumPath() string {
	if p := os.Getenv("FIXVENUE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts headless Chromium with a fresh profile and no network
// beyond what the page asks for (loopback), and returns its tab's context.
func New(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (apt-get install chromium, as .ci/run does): the console's browser tests are skipped")
	}
	profile, err := os.MkdirTemp("", "fixvenue-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		stopped := make(chan struct{})
		go func() {
			cancel()
			cancelAlloc()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(StartMax):
			t.Errorf("chromium did not stop within %s", StartMax)
			return
		}
		// Chromium's helpers may still write in the profile for a moment.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The first run starts the browser; its context must not carry a
	// deadline (it would end the browser), so the wait is bounded here.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("chromium %s: %v", path, err)
		}
	case <-time.After(StartMax):
		t.Fatalf("chromium %s did not start within %s", path, StartMax)
	}
	return ctx
}

// Open navigates the tab and returns the page's HTTP status.
func Open(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	resp, err := chromedp.Run(tctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return resp.Status
}

// WaitFor polls a JavaScript predicate in the page until it is true.
func WaitFor(t *testing.T, ctx context.Context, what, predicate string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, Wait+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(tctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(Wait), chromedp.WithPollingInterval(pollInterval)))
	if err != nil {
		body, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector("main") ? document.querySelector("main").innerText : ""`))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
	}
}

// Eval evaluates an expression in the page.
func Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Text is the innerText of the first element matching a CSS selector.
func Text(sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q) ? document.querySelector(%q).innerText : "")`, sel, sel)
}
