// Package sbe holds the runtime error values of the generated SBE codecs
// and, under it, the generator (cmd/sbegen, internal/gen) and the generated
// packages (venue). The full contract is being written; see the generated
// code's comments meanwhile.
package sbe
