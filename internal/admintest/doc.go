// Package admintest makes admin API calls over HTTP for the tests that run
// a real venue (server, cmd/fixvenue), so that each does not write its own
// client: one request with an operator's bearer token (Call) or with the
// caller's headers (Do), and the answer's status, headers and body.
//
// Contract: Call fails the test (t.Fatal) when the request cannot be built
// or sent; an HTTP error status is the caller's to judge. Limits: a call
// waits at most CallTimeout and reads at most BodyBytesMax of the answer.
package admintest
