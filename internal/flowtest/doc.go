// Package flowtest holds what the tests that drive a seeded random order
// flow against a real matcher (market data's venue simulator, the server's
// standby views, the matcher's mixed-flow benchmarks, the pipeline
// harness's flow check) keep about that flow, so that each does not write
// its own:
// Live, the set of the flow's live orders, and Follow, which keeps it from
// the matcher's events as a client would.
//
// Contract: Live's order of orders depends only on the calls made (Drop
// moves the last order into the hole), so a flow drawn from a seeded
// generator picks the same orders on every run. Limits: none of its own;
// it holds what the caller adds, and the flows that use it are bounded in
// count.
package flowtest
