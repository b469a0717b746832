// Package closingln is a TCP listener for tests that accepts every
// connection and closes it at once: a peer that disconnects, for a client
// (a conformance script, a FIX initiator) that must see a disconnect.
//
// Contract: Listen binds 127.0.0.1 on a port the OS chooses, serves until
// the test ends (t.Cleanup closes the listener and waits for its
// goroutine) and counts the connections it accepted. Limits: one goroutine
// per listener; a connection is closed as soon as it is accepted, so none
// is ever held open.
package closingln
