// Package connset keeps the connections a TCP server is serving, each on
// its own goroutine, so that the server can bound them and, when it stops,
// close them all and wait for their goroutines.
//
// Contract: Serve either starts serving a connection (and closes it when
// the serving function returns) or refuses it, closing it at once: when
// Max connections are being served and none of them waits for a request
// (Waiting), or after Close; with one waiting, the one that has waited
// longest is closed to make room, so idle clients cannot lock others out. Close closes every
// connection being served (their serving functions see their reads and
// writes fail) and refuses new ones; Wait returns once every serving
// goroutine has returned. Limits: Max connections at once, the bound the
// owner gives New.
package connset
