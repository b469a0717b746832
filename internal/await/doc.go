// Package await matches answers to the commands that wait for them: a
// caller registers a wait for a command's sequence number before the
// command is published, and the goroutine that reads the command's result
// event delivers it.
//
// Contract: at most one wait per sequence number (a second Expect for the
// same number replaces the first); each wait's channel holds one answer, so
// Deliver never blocks; a wait given up is dropped with Forget, and an
// answer nobody waits for is dropped. Bound: one entry per command in
// flight, which the callers bound (an API call waits for its own command).
package await
