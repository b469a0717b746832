//go:build !race

package marketdata

const raceEnabled = false
