package gen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse reads and validates a schema. source is the schema file's base name,
// recorded in the generated code. Every error names the element at fault and
// the problem.
func Parse(src []byte, source string) (*Schema, error) {
	root, err := parseTree(src)
	if err != nil {
		return nil, err
	}
	b := &builder{types: map[string]*Type{}, s: &Schema{Source: source}}
	if err := b.schema(root); err != nil {
		return nil, err
	}
	if err := checkGoNames(b.s); err != nil {
		return nil, err
	}
	return b.s, nil
}

type builder struct {
	s          *Schema
	types      map[string]*Type
	headerName string
}

func (b *builder) schema(root *node) error {
	if root.name() != "messageSchema" {
		return fmt.Errorf("root element is <%s>, want <messageSchema>", root.name())
	}
	const where = "messageSchema"
	if err := root.checkAttrs(where, with("package", "id", "version", "semanticVersion", "byteOrder", "headerType",
		extensionPrefix+"commandIds")...); err != nil {
		return err
	}
	if err := b.schemaAttrs(root); err != nil {
		return err
	}
	var messages []*node
	for i := range root.Children {
		c := &root.Children[i]
		switch c.name() {
		case "types":
			if err := b.typesElement(c); err != nil {
				return err
			}
		case "message":
			messages = append(messages, c)
		default:
			return fmt.Errorf("%s: unsupported element <%s>", where, c.name())
		}
	}
	if err := b.checkHeader(); err != nil {
		return err
	}
	if len(messages) == 0 {
		return fmt.Errorf("%s: no <message> elements", where)
	}
	return b.messages(messages)
}

func (b *builder) schemaAttrs(root *node) error {
	const where = "messageSchema"
	pkg, _ := root.attr("package")
	if err := checkName(where+" package", pkg); err != nil {
		return err
	}
	if pkg != strings.ToLower(pkg) {
		return fmt.Errorf("%s: package %q must be lower case to be a Go package name", where, pkg)
	}
	b.s.Package = pkg
	id, err := uintAttr(root, where, "id", 0xFFFF, true)
	if err != nil {
		return err
	}
	b.s.ID = uint16(id)
	version, err := uintAttr(root, where, "version", 0xFFFF, false)
	if err != nil {
		return err
	}
	b.s.Version = uint16(version)
	b.s.Description, _ = root.attr("description")
	if order, ok := root.attr("byteOrder"); ok && order != "littleEndian" {
		return fmt.Errorf("%s: byteOrder %q is not supported: only littleEndian is generated", where, order)
	}
	b.headerName = "messageHeader"
	if h, ok := root.attr("headerType"); ok {
		b.headerName = h
	}
	if r, ok := root.attr(extensionPrefix + "commandIds"); ok {
		ids, err := parseIDRange(r)
		if err != nil {
			return fmt.Errorf("%s: attribute fixvenue:commandIds=%q: %w", where, r, err)
		}
		b.s.Commands = ids
	}
	return nil
}

// parseIDRange reads "low-high", two template ids with low <= high.
func parseIDRange(s string) (*IDRange, error) {
	lowText, highText, found := strings.Cut(s, "-")
	low, errLow := strconv.ParseUint(strings.TrimSpace(lowText), 10, 16)
	high, errHigh := strconv.ParseUint(strings.TrimSpace(highText), 10, 16)
	if !found || errLow != nil || errHigh != nil || low > high {
		return nil, errors.New("want low-high, two template ids in [0, 65535] with low <= high, e.g. 1-100")
	}
	return &IDRange{Low: uint16(low), High: uint16(high)}, nil
}

// uintAttr reads an unsigned decimal attribute no larger than max.
func uintAttr(n *node, where, name string, max uint64, required bool) (uint64, error) {
	s, ok := n.attr(name)
	if !ok {
		if required {
			return 0, fmt.Errorf("%s: missing attribute %q", where, name)
		}
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("%s: attribute %s=%q is not an integer in [0, %d]", where, name, s, max)
	}
	return v, nil
}

func (b *builder) typesElement(n *node) error {
	if err := n.checkAttrs("types"); err != nil {
		return err
	}
	for i := range n.Children {
		c := &n.Children[i]
		name, _ := c.attr("name")
		where := fmt.Sprintf("<%s name=%q>", c.name(), name)
		if err := checkName(where, name); err != nil {
			return err
		}
		if _, dup := b.types[name]; dup || primitives[name] != nil {
			return fmt.Errorf("%s: duplicate type name %q", where, name)
		}
		var t *Type
		var err error
		switch c.name() {
		case "type":
			t, err = b.typeElement(c, where)
		case "composite":
			t, err = b.composite(c, where)
		case "enum":
			t, err = b.enum(c, where)
		case "set":
			t, err = b.set(c, where)
		default:
			return fmt.Errorf("types: unsupported element <%s>", c.name())
		}
		if err != nil {
			return err
		}
		t.Name = name
		t.Description, _ = c.attr("description")
		b.types[name] = t
		b.s.Types = append(b.s.Types, t)
	}
	return nil
}

// typeElement reads a <type>: a primitive, a fixed-length char array, or a
// constant primitive.
func (b *builder) typeElement(n *node, where string) (*Type, error) {
	err := n.checkAttrs(where, with("name", "primitiveType", "length", "presence", "nullValue",
		"minValue", "maxValue", "characterEncoding", "offset")...)
	if err != nil {
		return nil, err
	}
	if _, ok := n.attr("offset"); ok {
		return nil, fmt.Errorf("%s: attribute offset is not supported on types; members are laid out in order", where)
	}
	primName, _ := n.attr("primitiveType")
	prim := primitives[primName]
	if prim == nil {
		return nil, fmt.Errorf("%s: unknown primitiveType %q", where, primName)
	}
	length, err := uintAttr(n, where, "length", 1<<16, false)
	if err != nil {
		return nil, err
	}
	t := &Type{Kind: KindPrimitive, GoName: GoName(attrOr(n, "name")), Prim: prim, Size: prim.Size}
	if _, ok := n.attr("length"); ok && length != 1 {
		if prim.Name != "char" {
			return nil, fmt.Errorf("%s: arrays of %s (length %d) are not supported; only char arrays are", where, primName, length)
		}
		if length == 0 {
			return nil, fmt.Errorf("%s: length 0 is not supported", where)
		}
		t.Kind, t.Length, t.Size = KindCharArray, int(length), int(length)
	}
	switch presence, _ := n.attr("presence"); presence {
	case "", "required":
	case "constant":
		if t.Kind != KindPrimitive {
			return nil, fmt.Errorf("%s: presence=\"constant\" is supported on single primitives only", where)
		}
		if err := constantValue(t, strings.TrimSpace(n.Text), where); err != nil {
			return nil, err
		}
		t.Size = 0
	default:
		return nil, fmt.Errorf("%s: presence=%q is not supported (only required and constant)", where, presence)
	}
	return t, nil
}

// constantValue checks a constant's text against its primitive and stores it
// as a Go literal.
func constantValue(t *Type, text, where string) error {
	if text == "" {
		return fmt.Errorf("%s: constant without a value", where)
	}
	var err error
	switch t.Prim.Name {
	case "char":
		if len(text) != 1 || text[0] < 0x20 || text[0] > 0x7E {
			return fmt.Errorf("%s: char constant %q is not one printable ASCII character", where, text)
		}
		t.Constant = strconv.QuoteRune(rune(text[0]))
		return nil
	case "float", "double":
		_, err = strconv.ParseFloat(text, t.Prim.Size*8)
	case "int8", "int16", "int32", "int64":
		_, err = strconv.ParseInt(text, 10, t.Prim.Size*8)
	default:
		_, err = strconv.ParseUint(text, 10, t.Prim.Size*8)
	}
	if err != nil {
		return fmt.Errorf("%s: constant %q does not fit %s", where, text, t.Prim.Name)
	}
	t.Constant = text
	return nil
}

func attrOr(n *node, name string) string {
	v, _ := n.attr(name)
	return v
}

// composite reads a <composite> of <type> members.
func (b *builder) composite(n *node, where string) (*Type, error) {
	if err := n.checkAttrs(where, with("name")...); err != nil {
		return nil, err
	}
	t := &Type{Kind: KindComposite, GoName: GoName(attrOr(n, "name"))}
	seen := map[string]bool{}
	for i := range n.Children {
		c := &n.Children[i]
		name, _ := c.attr("name")
		cw := fmt.Sprintf("%s member <%s name=%q>", where, c.name(), name)
		if c.name() != "type" {
			return nil, fmt.Errorf("%s: unsupported composite member; only <type> members are supported", cw)
		}
		if err := checkName(cw, name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: duplicate member name %q", cw, name)
		}
		seen[name] = true
		mt, err := b.typeElement(c, cw)
		if err != nil {
			return nil, err
		}
		mt.Name = name
		t.Members = append(t.Members, &Field{Name: name, GoName: GoName(name), Offset: t.Size, Type: mt,
			Description: attrOr(c, "description")})
		t.Size += mt.Size
	}
	if len(t.Members) == 0 {
		return nil, fmt.Errorf("%s: composite has no members", where)
	}
	return t, nil
}

// enumEncodings are the encodings an enum may use.
var enumEncodings = map[string]bool{"uint8": true, "uint16": true, "char": true}

func (b *builder) enum(n *node, where string) (*Type, error) {
	p, err := primitiveOf(n, where, enumEncodings, "enums (uint8, uint16 or char)")
	if err != nil {
		return nil, err
	}
	t := &Type{Kind: KindEnum, GoName: GoName(attrOr(n, "name")), Prim: p, Size: p.Size}
	numbers := map[uint64]string{}
	err = members(n, where, "validValue", "enum", "value", func(vw, name, text string) error {
		v, err := enumValue(t.Prim, text, vw)
		if err != nil {
			return err
		}
		if other, dup := numbers[v.Number]; dup {
			return fmt.Errorf("%s: value %s is already used by %q", vw, v.Literal, other)
		}
		numbers[v.Number] = name
		v.Name, v.GoName = name, GoName(name)
		t.Values = append(t.Values, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Values) == 0 {
		return nil, fmt.Errorf("%s: enum has no validValue", where)
	}
	return t, nil
}

// primitiveOf checks the attributes of an enum or a set and returns its
// encodingType, which must be one of allowed (listed in the error as supported).
func primitiveOf(n *node, where string, allowed map[string]bool, supported string) (*Primitive, error) {
	if err := n.checkAttrs(where, with("name", "encodingType")...); err != nil {
		return nil, err
	}
	enc, _ := n.attr("encodingType")
	if !allowed[enc] {
		return nil, fmt.Errorf("%s: encodingType %q is not supported for %s", where, enc, supported)
	}
	return primitives[enc], nil
}

// members walks the members of an enum or a set: each must be an element
// named elem with only a name attribute, a valid name not used before in
// the type (a duplicate is reported as a duplicate noun name). add gets
// each member's place for errors, its name and its trimmed text.
func members(n *node, where, elem, what, noun string, add func(at, name, text string) error) error {
	names := map[string]bool{}
	for i := range n.Children {
		c := &n.Children[i]
		name, _ := c.attr("name")
		at := fmt.Sprintf("%s <%s name=%q>", where, c.name(), name)
		if c.name() != elem {
			return fmt.Errorf("%s: unsupported element in %s", at, what)
		}
		if err := c.checkAttrs(at, with("name")...); err != nil {
			return err
		}
		if err := checkName(at, name); err != nil {
			return err
		}
		if names[name] {
			return fmt.Errorf("%s: duplicate %s name %q", at, noun, name)
		}
		names[name] = true
		if err := add(at, name, strings.TrimSpace(c.Text)); err != nil {
			return err
		}
	}
	return nil
}

func enumValue(p *Primitive, text, where string) (*EnumValue, error) {
	if p.Name == "char" {
		if len(text) != 1 || text[0] < 0x20 || text[0] > 0x7E {
			return nil, fmt.Errorf("%s: char value %q is not one printable ASCII character", where, text)
		}
		return &EnumValue{Literal: strconv.QuoteRune(rune(text[0])), Number: uint64(text[0])}, nil
	}
	v, err := strconv.ParseUint(text, 10, p.Size*8)
	if err != nil {
		return nil, fmt.Errorf("%s: value %q does not fit %s", where, text, p.Name)
	}
	return &EnumValue{Literal: text, Number: v}, nil
}

// setEncodings are the encodings a set may use.
var setEncodings = map[string]bool{"uint8": true, "uint16": true, "uint32": true}

func (b *builder) set(n *node, where string) (*Type, error) {
	p, err := primitiveOf(n, where, setEncodings, "sets (uint8, uint16 or uint32)")
	if err != nil {
		return nil, err
	}
	t := &Type{Kind: KindSet, GoName: GoName(attrOr(n, "name")), Prim: p, Size: p.Size}
	bits := map[int]string{}
	err = members(n, where, "choice", "set", "choice", func(cw, name, text string) error {
		bit, err := strconv.Atoi(text)
		if err != nil || bit < 0 || bit >= p.Size*8 {
			return fmt.Errorf("%s: bit %q is not in [0, %d]", cw, text, p.Size*8-1)
		}
		if other, dup := bits[bit]; dup {
			return fmt.Errorf("%s: bit %d is already used by %q", cw, bit, other)
		}
		bits[bit] = name
		t.Choices = append(t.Choices, &Choice{Name: name, GoName: GoName(name), Bit: bit})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Choices) == 0 {
		return nil, fmt.Errorf("%s: set has no choice", where)
	}
	return t, nil
}

// checkHeader insists on the standard 8-byte message header, because the
// generated decoders read it at fixed offsets.
func (b *builder) checkHeader() error {
	return b.checkLayout(b.headerName, "message header", []string{"blockLength", "templateId", "schemaId", "version"})
}

// checkLayout checks that the named composite is exactly the given uint16
// members in order.
func (b *builder) checkLayout(name, role string, members []string) error {
	t := b.types[name]
	if t == nil {
		return fmt.Errorf("%s composite %q is not defined in <types>", role, name)
	}
	where := fmt.Sprintf("<composite name=%q> (%s)", name, role)
	if t.Kind != KindComposite || len(t.Members) != len(members) {
		return fmt.Errorf("%s: must be a composite of %d uint16 members %v", where, len(members), members)
	}
	for i, m := range t.Members {
		if m.Name != members[i] || m.Type.Kind != KindPrimitive || m.Type.Prim.Name != "uint16" || m.Type.IsConstant() {
			return fmt.Errorf("%s: member %d is %q %s, want %q uint16 (standard layout %v)",
				where, i, m.Name, m.Type.Prim.Name, members[i], members)
		}
	}
	return nil
}
