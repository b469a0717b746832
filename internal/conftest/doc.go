// Package conftest holds the configuration tables that the tests which run
// a real venue (server, cmd/fixvenue) share, so that each does not write
// its own copy of an instrument they all trade.
//
// Contract: each constant is TOML text that config.Parse takes, ending in a
// line end, with no % (it may sit inside a fmt format). Limits: none.
package conftest
