package loadmix

import (
	"fmt"
	"strconv"
)

// Mix is the kind of order flow a load run sends.
type Mix uint8

const (
	// Passive: resting orders, each cancelled some orders later, so that
	// the book stays flat.
	Passive Mix = iota
	// Cross: a resting order and one on the other side that trades with it.
	Cross
	// Mixed alternates passive and crossing units.
	Mixed
)

var names = [...]string{Passive: "passive", Cross: "cross", Mixed: "mixed"}

// String is the name Parse reads: passive, cross or mixed.
func (m Mix) String() string {
	if int(m) < len(names) {
		return names[m]
	}
	return "mix(" + strconv.Itoa(int(m)) + ")"
}

// Parse reads a mix by its name.
func Parse(s string) (Mix, error) {
	for i, n := range names {
		if n == s {
			return Mix(i), nil
		}
	}
	return 0, fmt.Errorf("unknown mix %q (passive, cross or mixed)", s)
}
