// Package sbetest drives generated flyweights from their schema, for the
// tests of every generated package: it sets every field of a message to a
// value distinct from every other field's, reads them back through the
// getters, and walks every getter of a decoded message for fuzzing.
//
// It uses reflection, which generated code never does: the point is that the
// schema (parsed by the generator's own reader) says which accessors must
// exist and with which types, so a field the generator forgot, or gave the
// wrong type, fails the test instead of going unnoticed. Layout mistakes that
// a round trip cannot see (two fields swapped consistently, say) are caught
// by the hand-written golden byte tests in each generated package instead.
package sbetest
