package gen

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// node is one XML element read without a fixed shape, so that the schema
// reader sees every element and attribute and can refuse those it does not
// support instead of silently ignoring them (encoding/xml drops unknown
// elements when unmarshalling into typed structs).
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []node     `xml:",any"`
}

// parseTree reads a whole XML document into a node tree.
func parseTree(src []byte) (*node, error) {
	var root node
	dec := xml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("schema is not well-formed XML: %w", err)
	}
	return &root, nil
}

// name is the element's local name; the sbe: namespace prefix is optional on
// every element, as in the SBE specification's own examples.
func (n *node) name() string { return n.XMLName.Local }

// attr returns the attribute's value and whether it is present.
func (n *node) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name && a.Name.Space != "xmlns" {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

// checkAttrs refuses any attribute outside allowed. Namespace declarations
// are always allowed.
func (n *node) checkAttrs(where string, allowed ...string) error {
	for _, a := range n.Attrs {
		if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
			continue
		}
		ok := false
		for _, name := range allowed {
			if a.Name.Local == name {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%s: unsupported attribute %q", where, a.Name.Local)
		}
	}
	return nil
}

// metadataAttrs are attributes that document a schema element without
// changing its layout; the generator accepts and ignores them.
var metadataAttrs = []string{"description", "semanticType", "sinceVersion", "deprecated"}

func with(extra ...string) []string {
	return append(append([]string(nil), metadataAttrs...), extra...)
}
