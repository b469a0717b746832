// Package periodic runs a function at a fixed interval until told to stop:
// the one ticker loop of the venue's periodic work (snapshots, risk
// reports, the auction timer, the FIX store syncer, latency windows, the
// event tap's poll, a benchmark's progress lines).
//
// Contract: Run calls do from the caller's goroutine, once per tick of a
// time.Ticker, with the tick's time, and returns as soon as stop is closed;
// no call starts after that, and the ticker is stopped. Ticks the function
// is too slow for are dropped by the ticker (a late call is not followed by
// a burst of calls). Limits: one goroutine (the caller's), one ticker; an
// interval must be positive (time.NewTicker panics otherwise).
package periodic
