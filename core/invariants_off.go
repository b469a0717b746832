//go:build !invariants

package core

// invariantsEnabled is off in production builds: CheckInvariants is O(book)
// and the hot path must stay O(1). Tests call CheckInvariants themselves.
const invariantsEnabled = false
