//go:build !race

package cluster

// raceEnabled: the race detector is on (tests size their load to it).
const raceEnabled = false
