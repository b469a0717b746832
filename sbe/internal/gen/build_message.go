package gen

import (
	"fmt"
	"slices"
)

func (b *builder) messages(nodes []*node) error {
	ids, names := map[uint64]string{}, map[string]bool{}
	for _, n := range nodes {
		name, where, err := element(n, "", "message", "id", "blockLength")
		if err != nil {
			return err
		}
		if names[name] {
			return fmt.Errorf("%s: duplicate message name %q", where, name)
		}
		names[name] = true
		id, err := uintAttr(n, where, "id", 0xFFFF, true)
		if err != nil {
			return err
		}
		if other, dup := ids[id]; dup {
			return fmt.Errorf("%s: duplicate message id %d (also used by %q)", where, id, other)
		}
		ids[id] = name
		m := &Message{Name: name, GoName: GoName(name), ID: uint16(id), Description: attrOr(n, "description"),
			Command: b.s.Commands.Contains(uint16(id))}
		if err := b.message(n, m, where); err != nil {
			return err
		}
		b.s.Messages = append(b.s.Messages, m)
	}
	if r := b.s.Commands; r != nil && !slices.ContainsFunc(b.s.Messages, func(m *Message) bool { return m.Command }) {
		return fmt.Errorf("messageSchema: fixvenue:commandIds=\"%d-%d\" holds no message id", r.Low, r.High)
	}
	return nil
}

// message reads the fields, then the groups, of one message. SBE puts every
// fixed field before the first group; a field after a group is refused.
func (b *builder) message(n *node, m *Message, where string) error {
	sc := newScope(where)
	var fieldNodes []*node
	for i := range n.Children {
		c := &n.Children[i]
		switch c.name() {
		case "field":
			if len(m.Groups) > 0 {
				return fmt.Errorf("%s <field name=%q>: fields must come before the first group", where, attrOr(c, "name"))
			}
			fieldNodes = append(fieldNodes, c)
		case "group":
			if len(m.Groups) == 0 {
				fields, block, err := b.block(fieldNodes, n, where, sc)
				if err != nil {
					return err
				}
				m.Fields, m.BlockLength = fields, block
			}
			g, err := b.group(c, m, where, sc)
			if err != nil {
				return err
			}
			m.Groups = append(m.Groups, g)
			b.s.HasGroups = true
		case "data":
			return fmt.Errorf("%s <data name=%q>: variable-length data is not supported", where, attrOr(c, "name"))
		default:
			return fmt.Errorf("%s: unsupported element <%s>", where, c.name())
		}
	}
	if len(m.Groups) == 0 {
		fields, block, err := b.block(fieldNodes, n, where, sc)
		if err != nil {
			return err
		}
		m.Fields, m.BlockLength = fields, block
	}
	return nil
}

func (b *builder) group(n *node, m *Message, msgWhere string, outer *scope) (*Group, error) {
	name, where, id, err := member(n, msgWhere, "group", outer, "dimensionType", "blockLength")
	if err != nil {
		return nil, err
	}
	dim := "groupSizeEncoding"
	if d, ok := n.attr("dimensionType"); ok {
		dim = d
	}
	if err := b.checkLayout(dim, "group dimension", []string{"blockLength", "numInGroup"}); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	g := &Group{Name: name, GoName: GoName(name), TypeName: m.GoName + GoName(name), ID: int(id),
		Description: attrOr(n, "description")}
	var fieldNodes []*node
	for i := range n.Children {
		c := &n.Children[i]
		switch c.name() {
		case "field":
			fieldNodes = append(fieldNodes, c)
		case "group":
			return nil, fmt.Errorf("%s <group name=%q>: nested groups are not supported", where, attrOr(c, "name"))
		case "data":
			return nil, fmt.Errorf("%s <data name=%q>: variable-length data is not supported", where, attrOr(c, "name"))
		default:
			return nil, fmt.Errorf("%s: unsupported element <%s>", where, c.name())
		}
	}
	if len(fieldNodes) == 0 {
		return nil, fmt.Errorf("%s: group has no fields", where)
	}
	g.Fields, g.BlockLength, err = b.block(fieldNodes, n, where, newScope(where))
	return g, err
}

// block lays out fields in order: a field without an offset starts where the
// previous one ends; an explicit offset is honoured when it does not overlap
// the previous field. owner's blockLength attribute, when present, must hold
// every field and may add padding.
func (b *builder) block(nodes []*node, owner *node, where string, sc *scope) ([]*Field, int, error) {
	var fields []*Field
	end := 0
	for _, n := range nodes {
		f, err := b.field(n, where, sc)
		if err != nil {
			return nil, 0, err
		}
		fw := fmt.Sprintf("%s <field name=%q>", where, f.Name)
		off, err := uintAttr(n, fw, "offset", 0xFFFF, false)
		if err != nil {
			return nil, 0, err
		}
		if _, explicit := n.attr("offset"); explicit {
			if int(off) < end {
				prev := fields[len(fields)-1]
				return nil, 0, fmt.Errorf("%s: offset %d overlaps field %q (bytes %d to %d)",
					fw, off, prev.Name, prev.Offset, prev.Offset+prev.Type.Size-1)
			}
			end = int(off)
		}
		f.Offset = end
		end += f.Type.Size
		fields = append(fields, f)
	}
	block := end
	if _, ok := owner.attr("blockLength"); ok {
		bl, err := uintAttr(owner, where, "blockLength", 0xFFFF, false)
		if err != nil {
			return nil, 0, err
		}
		if int(bl) < end {
			last := fields[len(fields)-1]
			return nil, 0, fmt.Errorf("%s <field name=%q>: ends at offset %d, past blockLength %d",
				where, last.Name, end, bl)
		}
		block = int(bl)
	}
	if block > 0xFFFF {
		return nil, 0, fmt.Errorf("%s: block of %d bytes does not fit the uint16 blockLength", where, block)
	}
	return fields, block, nil
}

func (b *builder) field(n *node, where string, sc *scope) (*Field, error) {
	name, fw, id, err := member(n, where, "field", sc, "type", "offset", "presence", "epoch", "timeUnit")
	if err != nil {
		return nil, err
	}
	if p, ok := n.attr("presence"); ok && p != "required" {
		return nil, fmt.Errorf("%s: presence=%q on a field is not supported; declare a constant <type> instead", fw, p)
	}
	typeName, _ := n.attr("type")
	t := b.types[typeName]
	if t == nil {
		if p := primitives[typeName]; p != nil {
			t = &Type{Kind: KindPrimitive, Name: p.Name, Prim: p, Size: p.Size}
		}
	}
	if t == nil {
		return nil, fmt.Errorf("%s: unknown type %q", fw, typeName)
	}
	unit, err := timeUnit(n, fw, t)
	if err != nil {
		return nil, err
	}
	return &Field{Name: name, GoName: GoName(name), ID: int(id), Type: t, Description: attrOr(n, "description"),
		TimeUnit: unit}, nil
}

// timeUnits are the timeUnit values SBE defines, with the Go expression
// that turns a field's value (an int64, in place of %s) into a time.Time.
var timeUnits = map[string]string{
	"second":      "time.Unix(%s, 0)",
	"millisecond": "time.UnixMilli(%s)",
	"microsecond": "time.UnixMicro(%s)",
	"nanosecond":  "time.Unix(0, %s)",
}

// timeUnit reads a field's epoch and timeUnit, which say that an integer
// field is a time (the text form prints it as one): epoch must be "unix"
// (SBE's default) and timeUnit one of timeUnits. An epoch alone is refused,
// since it says nothing without a unit.
func timeUnit(n *node, where string, t *Type) (string, error) {
	unit, hasUnit := n.attr("timeUnit")
	epoch, hasEpoch := n.attr("epoch")
	if !hasUnit {
		if hasEpoch {
			return "", fmt.Errorf("%s: epoch without timeUnit", where)
		}
		return "", nil
	}
	if hasEpoch && epoch != "unix" {
		return "", fmt.Errorf("%s: epoch=%q is not supported (only unix)", where, epoch)
	}
	if timeUnits[unit] == "" {
		return "", fmt.Errorf("%s: timeUnit=%q is not supported (second, millisecond, microsecond or nanosecond)", where, unit)
	}
	if t.Kind != KindPrimitive || t.IsConstant() || t.Prim.Name == "char" || t.Prim.GoType[0] == 'f' {
		return "", fmt.Errorf("%s: timeUnit on a field of type %q is not supported (only integer primitives)", where, t.Name)
	}
	return unit, nil
}

// scope holds the names and ids already used by a message's fields and groups
// (or a group's fields), to refuse duplicates.
type scope struct {
	where string
	names map[string]bool
	ids   map[int]string
}

func newScope(where string) *scope {
	return &scope{where: where, names: map[string]bool{}, ids: map[int]string{}}
}

// element checks that n has only the attributes name, id and extra (and
// the metadata ones) and a valid name; it returns the name and n's place for
// errors, an <elem name=...> within where ("" at the top).
func element(n *node, where, elem string, extra ...string) (name, at string, err error) {
	name, _ = n.attr("name")
	at = fmt.Sprintf("<%s name=%q>", elem, name)
	if where != "" {
		at = where + " " + at
	}
	if err := n.checkAttrs(at, with(append([]string{"name", "id"}, extra...)...)...); err != nil {
		return "", "", err
	}
	if err := checkName(at, name); err != nil {
		return "", "", err
	}
	return name, at, nil
}

// member is element for a field or a group, whose required 16-bit id and
// name must be new in scope sc; it returns the id too.
func member(n *node, where, elem string, sc *scope, extra ...string) (name, at string, id uint64, err error) {
	if name, at, err = element(n, where, elem, extra...); err != nil {
		return "", "", 0, err
	}
	if id, err = uintAttr(n, at, "id", 0xFFFF, true); err != nil {
		return "", "", 0, err
	}
	if err := sc.add(name, int(id)); err != nil {
		return "", "", 0, err
	}
	return name, at, id, nil
}

func (s *scope) add(name string, id int) error {
	if s.names[name] {
		return fmt.Errorf("%s: duplicate field name %q", s.where, name)
	}
	if other, dup := s.ids[id]; dup {
		return fmt.Errorf("%s: field %q reuses id %d of field %q", s.where, name, id, other)
	}
	s.names[name], s.ids[id] = true, name
	return nil
}
