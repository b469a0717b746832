//go:build invariants

package core

// invariantsEnabled makes Apply check every invariant after each command
// (after every few commands once the state is large: checkAfterApply) and
// panic on the first broken one. Build with -tags invariants in tests and
// soak runs; it costs up to invariantUnitsPerCommand units of state walked
// per command.
const invariantsEnabled = true
