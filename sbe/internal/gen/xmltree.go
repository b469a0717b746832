package gen

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
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

// ExtensionNamespace is the XML namespace of the attributes fixvenue adds
// to SBE (fixvenue:commandIds). In an allowed list and in attr, the
// prefix "fixvenue:" stands for it, whatever prefix the schema binds.
const ExtensionNamespace = "urn:fixvenue:sbe"

const extensionPrefix = "fixvenue:"

// attrName is the name an attribute is allowed and looked up by: its
// local name, or "fixvenue:" and its local name in the extension
// namespace. ok is false for another namespace, which nothing here reads.
func attrName(a xml.Attr) (name string, ok bool) {
	switch a.Name.Space {
	case "":
		return a.Name.Local, true
	case ExtensionNamespace:
		return extensionPrefix + a.Name.Local, true
	}
	return a.Name.Space + ":" + a.Name.Local, false
}

// isNamespaceDecl reports whether a declares a namespace (xmlns or xmlns:p).
func isNamespaceDecl(a xml.Attr) bool { return a.Name.Space == "xmlns" || a.Name.Local == "xmlns" }

// attr returns the attribute's value and whether it is present.
func (n *node) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if got, ok := attrName(a); ok && got == name && !isNamespaceDecl(a) {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

// checkAttrs refuses any attribute outside allowed, and any attribute of a
// namespace other than SBE's (unprefixed) and ExtensionNamespace. Namespace
// declarations are always allowed.
func (n *node) checkAttrs(where string, allowed ...string) error {
	for _, a := range n.Attrs {
		if isNamespaceDecl(a) {
			continue
		}
		name, ok := attrName(a)
		if !ok {
			return fmt.Errorf("%s: unsupported attribute %q (namespace %q is neither SBE's nor %q)",
				where, a.Name.Local, a.Name.Space, ExtensionNamespace)
		}
		if !slices.Contains(allowed, name) {
			return fmt.Errorf("%s: unsupported attribute %q", where, name)
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
