//go:build race

package server

// raceEnabled skips the allocation count under the race detector, which
// allocates for its own bookkeeping and slows the load run past its pace.
const raceEnabled = true
