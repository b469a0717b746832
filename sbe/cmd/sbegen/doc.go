// Command sbegen generates a Go package of flyweight codecs from an SBE XML
// schema. See package github.com/fixvenue/fixvenue/sbe for the supported
// subset and the generated API.
//
// Usage:
//
//	sbegen -schema schemas/venue.xml -out sbe/venue
//
// It writes <out>/<package>_gen.go, where package is the schema's package
// attribute, and exits with status 1 and a message naming the schema element
// at fault when the schema is refused.
package main
