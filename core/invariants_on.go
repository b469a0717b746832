//go:build invariants

package core

// invariantsEnabled makes Apply check every invariant after every command
// and panic on the first broken one. Build with -tags invariants in tests and
// soak runs; it costs O(book) per command.
const invariantsEnabled = true
