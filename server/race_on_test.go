//go:build race

package server

// raceEnabled: the race detector is on. Tests skip themselves under it
// through skipUnderRace (unracedTests), never on this constant alone.
const raceEnabled = true
