//go:build race

package marketdata

// raceEnabled shortens single-goroutine property tests under the race
// detector, which slows them twentyfold and finds nothing in them; the full
// length runs without -race.
const raceEnabled = true
