//go:build race

package server

// raceEnabled skips the allocation count and the load runs under the race
// detector, which allocates for its own bookkeeping and slows a load run
// past its pace.
const raceEnabled = true
