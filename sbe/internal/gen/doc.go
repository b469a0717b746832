// Package gen is the SBE code generator behind cmd/sbegen: Parse reads an
// XML schema into a validated model (every offset and size final, every
// refusal naming the element and the problem), Emit writes the Go source of
// its flyweight package and formats it with go/format, and Generate does
// both. The supported subset, the refusals and the generated API are
// documented in package github.com/fixvenue/fixvenue/sbe.
//
// The XML is read into a generic element tree rather than typed structs so
// that no element or attribute is silently ignored: anything the generator
// does not know is refused, and a schema that other SBE tools would read
// differently cannot slip through.
//
// Output is deterministic (document order, no maps iterated while
// emitting), which is what lets the repository check that the committed
// generated files are current.
package gen
