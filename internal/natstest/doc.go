// Package natstest connects the tests that run a real venue (server,
// cmd/fixvenue) to a NATS server's JetStream, so that each does not write
// its own connection: JetStream dials the server and hands back its
// JetStream context.
//
// Contract: JetStream fails the test (t.Fatal) when the server cannot be
// reached; the connection closes when the test ends. Limits: one
// connection per call, with nats.go's default reconnect settings.
package natstest
