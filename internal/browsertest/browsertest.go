package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
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

// browser is the test binary's one Chromium, started by the first New
// and stopped by Close: a start costs seconds on a busy machine, a tab in a
// browser context of its own a fraction of that.
var browser struct {
	once    sync.Once
	ctx     context.Context // the browser's first tab, which keeps it running
	stop    func()
	profile string
	err     error
}

// Host is a name that is not loopback's, which the browser resolves to
// 127.0.0.1 (and only it): a page called by it is one a venue listening on
// loopback serves as if called from beyond loopback, where reads need a
// token.
const Host = "venue.test"

// start runs Chromium with a fresh profile and no network beyond what the
// pages ask for (loopback).
func start(path string) {
	profile, err := os.MkdirTemp("", "fixvenue-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("host-resolver-rules", "MAP "+Host+" 127.0.0.1")}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	browser.ctx, browser.profile = ctx, profile
	browser.stop = func() {
		cancel()
		cancelAlloc()
	}
	// The first run starts the browser; its context must not carry a
	// deadline (it would end the browser), so the wait is bounded here.
	if err := bounded(func() error { return chromedp.Do(ctx) }); err != nil {
		browser.err = fmt.Errorf("chromium %s: %w", path, err)
	}
}

// bounded runs f and waits for it at most StartMax.
func bounded(f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(StartMax):
		return fmt.Errorf("not done within %s", StartMax)
	}
}

// New returns a new tab of the test binary's headless Chromium (started
// by the first call), in a browser context of its own: the test's cookies
// and storage are its own, and go with the tab when the test ends.
func New(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (apt-get install chromium, as .ci/run does): the console's browser tests are skipped")
	}
	browser.once.Do(func() { start(path) })
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	return opened(t, ctx, cancel)
}

// Tab returns another tab in the browser context of ctx (a tab New
// returned): a user's further tab, with the same cookies, workers and
// connections per host; it closes with the test.
func Tab(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	return opened(t, tab, cancel)
}

// opened opens the tab of ctx, which cancel closes when the test ends.
func opened(t *testing.T, ctx context.Context, cancel context.CancelFunc) context.Context {
	t.Helper()
	t.Cleanup(func() {
		if err := bounded(func() error { cancel(); return nil }); err != nil {
			t.Errorf("the tab did not close: %v", err)
		}
	})
	if err := bounded(func() error { return chromedp.Do(ctx) }); err != nil {
		t.Fatalf("a new tab: %v", err)
	}
	return ctx
}

// Close stops the browser, if one was started; a TestMain calls it after
// the tests. (Without it the browser still ends with the test binary:
// chromedp starts it with a parent-death signal on Linux.)
func Close() {
	if browser.stop == nil {
		return
	}
	if err := bounded(func() error { browser.stop(); return nil }); err != nil {
		fmt.Fprintf(os.Stderr, "browsertest: chromium did not stop: %v\n", err)
		return
	}
	// Chromium's helpers may still write in the profile for a moment.
	for range 50 {
		if os.RemoveAll(browser.profile) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
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
