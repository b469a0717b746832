// Package browsertest drives headless Chromium (Debian's chromium package;
// .ci/run installs it) with chromedp for the console's tests in a real
// browser: one browser per test binary with a fresh profile, a tab in a
// browser context of its own per test, and every step bounded in time.
// Without a browser installed, New skips the test and says why.
//
// Contract: each wait for a page is bounded by Wait, the browser's start
// and stop by StartMax; a TestMain calls Close, which stops the browser and
// removes its profile (without it the browser still ends with the test
// binary).
// Limits: one browser process per test binary, started by the first New;
// tabs share it, each in a browser context of its own.
package browsertest
