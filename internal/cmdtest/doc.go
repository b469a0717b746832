// Package cmdtest encodes the matcher's order and status commands for the
// tests of the packages that drive a real matcher (market data, the FIX
// market-data handler, the operator monitor), so that each of them does
// not write its own encoder; Encode writes any other venue message a test
// needs (a command, or an event for a consumer of events).
//
// Contract: each function writes one command at the start of buf and
// returns the encoded bytes (a slice of buf, valid until buf is reused).
// The flyweight clears the block first, so a field left zero in Order is
// zero on the wire. A buffer too short or a ClOrdID or Account longer than
// the schema allows fails the test (t.Fatal). Limits: none of its own; buf
// is the caller's (256 bytes hold any of these commands).
package cmdtest
