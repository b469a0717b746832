//go:build race

package main

// raceEnabled shortens the kill loops under the race detector
// (cyclesAndSeed): it instruments this test process, not the venues the
// tests run as child processes, so more cycles there check nothing the
// pass without it did not.
const raceEnabled = true
