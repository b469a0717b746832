// Package fixclient is a small raw FIX 4.4 client for tests and tools: it builds
// messages with correct BodyLength and CheckSum, frames what the venue sends,
// answers TestRequests, and keeps its own sequence numbers. It is deliberately
// not QuickFIX: tests that use it see the venue's bytes exactly, and can send
// bytes no well-behaved engine would. Framing, CheckSum and fields are
// internal/fixwire's. Check, when a test sets it (internal/fixcheck), is
// given every message read, and its refusal fails the read: the tests that
// run the venue read with a client that validates as a stock one does.
//
// Limits: one message is at most MessageBytesMax; reads honour a deadline on
// every call; nothing is retried.
package fixclient
