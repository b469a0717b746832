//go:build race

package main

// raceEnabled skips, under the race detector, the tests whose subject runs
// only in child processes (skipUnderRace).
const raceEnabled = true
