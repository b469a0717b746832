package gen

import "fmt"

func (w *writer) message(m *Message) {
	n := m.GoName
	w.f("")
	w.f("// The constants of message %q.", m.Name)
	w.f("const (")
	w.f("%sTemplateID uint16 = %d", n, m.ID)
	w.f("%sBlockLength int = %d", n, m.BlockLength)
	if len(m.Groups) == 0 {
		w.f("// %sEncodedLength is the header plus the block.", n)
		w.f("%sEncodedLength int = MessageHeaderSize + %sBlockLength", n, n)
	} else {
		w.f("// %sEncodedLength is the header plus the block plus the dimension of", n)
		w.f("// each group: the length of the message with every group empty.")
		w.f("%sEncodedLength int = MessageHeaderSize + %sBlockLength + %d*GroupHeaderSize", n, n, len(m.Groups))
	}
	w.f(")")
	w.fieldOffsets(n, m.Fields,
		fmt.Sprintf("The offsets of the fields of message %q, in bytes from the start", m.Name),
		"of its block: field F of a message wrapped at off starts at",
		fmt.Sprintf("off+MessageHeaderSize+%sFOffset.", n))
	w.f("")
	kind := ""
	if m.Command {
		kind = ", a command"
	}
	w.f("// %s is a flyweight over message %q (template %d%s).", n, m.Name, m.ID, kind)
	w.commentIf(m.Description)
	w.f("//")
	w.f("// Its accessors index the header and block that Wrap checked, without a")
	w.f("// test; on the zero value, or after a failed Wrap, they panic.")
	w.f("type %s struct {", n)
	w.f("buf *[MessageHeaderSize + %sBlockLength]byte // the header and our block, or nil when not wrapped", n)
	if len(m.Groups) > 0 {
		w.f("msg []byte // from the header to the end of the message (decoding) or of the buffer (encoding)")
	}
	w.f("}")
	w.wrapEncode(m)
	w.wrapDecode(m)
	if len(m.Groups) == 0 {
		w.valueWraps(m)
	}
	w.encodedLength(m)
	for _, f := range m.Fields {
		w.accessors("m "+n, "m", 8, f)
	}
	for k, g := range m.Groups {
		w.group(m, k, g)
	}
	w.messageText(m)
}

func (w *writer) wrapEncode(m *Message) {
	n := m.GoName
	w.f("")
	w.f("// WrapEncode points m at off in buf, writes the message header there,")
	if len(m.Groups) > 0 {
		w.f("// zeroes the block, and writes every group as empty.")
	} else {
		w.f("// and zeroes the block.")
	}
	w.f("// It fails with sbe.ErrShortBuffer when buf is shorter than")
	w.f("// off+%sEncodedLength, leaving m unwrapped and buf untouched.", n)
	w.f("func (m *%s) WrapEncode(buf []byte, off int) error {", n)
	w.f("if off < 0 || len(buf)-off < %sEncodedLength {", n)
	w.f("m.buf = nil")
	if len(m.Groups) > 0 {
		w.f("m.msg = nil")
	}
	w.f("return sbe.ErrShortBuffer")
	w.f("}")
	if len(m.Groups) == 0 {
		w.f("m.buf = (*[MessageHeaderSize + %sBlockLength]byte)(buf[off:])", n)
	} else {
		w.f("// Groups grow into the rest of the buffer.")
		w.f("m.msg = buf[off:len(buf):len(buf)]")
		w.f("m.buf = (*[MessageHeaderSize + %sBlockLength]byte)(m.msg)", n)
	}
	w.f("putHeader((*[MessageHeaderSize]byte)(m.buf[:]), %sTemplateID, %sBlockLength)", n, n)
	w.f("clear(m.buf[MessageHeaderSize:])")
	for k, g := range m.Groups {
		w.f("putGroupHeader(m.msg, MessageHeaderSize+%sBlockLength+%d*GroupHeaderSize, %sBlockLength, 0)", n, k, g.TypeName)
	}
	w.f("return nil")
	w.f("}")
}

func (w *writer) wrapDecode(m *Message) {
	n := m.GoName
	w.f("")
	w.f("// WrapDecode points m at the message whose header is at off in buf, after")
	w.f("// checking the schema id, the template id, that the block is at least")
	if len(m.Groups) > 0 {
		w.f("// %sBlockLength bytes, and that buf holds it and every group (each", n)
		w.f("// entry at least as long as ours). On error m is left unwrapped.")
	} else {
		w.f("// %sBlockLength bytes and that buf holds it. On error m is left unwrapped.", n)
	}
	w.f("func (m *%s) WrapDecode(buf []byte, off int) error {", n)
	w.f("m.buf = nil")
	if len(m.Groups) == 0 {
		w.f("// The common case in one test, small enough to be inlined.")
		w.f("if b := checkedBlock(buf, off, %sTemplateID, %sBlockLength); b != nil {", n, n)
		w.f("m.buf = (*[MessageHeaderSize + %sBlockLength]byte)(b)", n)
		w.f("return nil")
		w.f("}")
		w.f("return decodeError(buf, off, %sTemplateID, %sBlockLength)", n, n)
		w.f("}")
		return
	}
	w.f("m.msg = nil")
	w.f("acting, err := decodeHeader(buf, off, %sTemplateID, %sBlockLength)", n, n)
	w.f("if err != nil {")
	w.f("return err")
	w.f("}")
	w.f("msg := buf[off:]")
	w.f("end := MessageHeaderSize + acting")
	for _, g := range m.Groups {
		w.f("if end, err = checkGroup(msg, end, %sBlockLength); err != nil {", g.TypeName)
		w.f("return err")
		w.f("}")
	}
	w.f("m.msg = msg[:end:end]")
	w.f("m.buf = (*[MessageHeaderSize + %sBlockLength]byte)(m.msg)", n)
	w.f("return nil")
	w.f("}")
}

// valueWraps writes Decode<M> and Overwrite<M>, the wraps of hot paths:
// at offset 0, returning the flyweight by value. They are inlined, and the
// flyweight then lives in a register, where a WrapDecode that is not
// inlined (it is not: its error path is a call) stores it through a
// pointer, behind a write barrier, and its accessors load it back.
func (w *writer) valueWraps(m *Message) {
	n := m.GoName
	w.f("")
	w.f("// Decode%s returns a flyweight over the message at the start of buf when", n)
	w.f("// WrapDecode(buf, 0) would accept it, and ok false otherwise (WrapDecode")
	w.f("// then says why). It is WrapDecode for hot paths: small enough to be")
	w.f("// inlined, and its result, a value, stays in a register.")
	w.f("func Decode%s(buf []byte) (m %s, ok bool) {", n, n)
	w.f("if !validMessage(buf, %sTemplateID, %sBlockLength) {", n, n)
	w.f("return %s{}, false", n)
	w.f("}")
	w.f("return %s{buf: (*[MessageHeaderSize + %sBlockLength]byte)(buf)}, true", n, n)
	w.f("}")
	w.f("")
	w.f("// Overwrite%s writes the header of a %s at the start of buf and returns", n, n)
	w.f("// a flyweight over it, like WrapEncode(buf, 0) but without zeroing the")
	w.f("// block: the block keeps the bytes buf held, so it is for an encoder that")
	w.f("// sets every field, reserved ones included, and saves the zeroing. ok is")
	w.f("// false, and nothing written, when buf is shorter than %sEncodedLength.", n)
	w.f("// Like Decode%s it is inlined and its result stays in a register.", n)
	w.f("func Overwrite%s(buf []byte) (m %s, ok bool) {", n, n)
	w.f("if len(buf) < %sEncodedLength {", n)
	w.f("return %s{}, false", n)
	w.f("}")
	w.f("m.buf = (*[MessageHeaderSize + %sBlockLength]byte)(buf)", n)
	w.f("// The header as one word: blockLength %d, templateId %d, schemaId %d, version %d.",
		m.BlockLength, m.ID, w.s.ID, w.s.Version)
	w.f("binary.LittleEndian.PutUint64(m.buf[:MessageHeaderSize], %#x)", headerWord(w.s, m))
	w.f("return m, true")
	w.f("}")
}

func (w *writer) encodedLength(m *Message) {
	n := m.GoName
	w.f("")
	if len(m.Groups) == 0 {
		w.f("// EncodedLength is the header plus the block length in the header (the")
		w.f("// acting one when decoding, which may exceed ours for a newer sender),")
		w.f("// or 0 when m is not wrapped.")
		w.f("func (m *%s) EncodedLength() int {", n)
		w.f("if m.buf == nil {")
		w.f("return 0")
		w.f("}")
		w.f("return MessageHeaderSize + int(binary.LittleEndian.Uint16(m.buf[0:2]))")
		w.f("}")
		return
	}
	w.f("// EncodedLength is the header, the acting block and every group as")
	w.f("// currently written, or 0 when m is not wrapped.")
	w.f("func (m *%s) EncodedLength() int {", n)
	w.f("return max(groupOffset(m.msg, %d), 0)", len(m.Groups))
	w.f("}")
}

func (w *writer) group(m *Message, k int, g *Group) {
	t, entry, bl := g.TypeName+"Group", g.TypeName+"Entry", g.TypeName+"BlockLength"
	later := len(m.Groups) - k - 1
	w.f("")
	w.f("// %s is the length of one entry of group %q of %s.", bl, g.Name, m.GoName)
	w.f("const %s = %d", bl, g.BlockLength)
	w.f("")
	w.f("// %s is a view of the repeating group %q (id %d) of %s: a count of", t, g.Name, g.ID, m.GoName)
	w.f("// entries of at least %s bytes each. The zero value is empty.", bl)
	w.commentIf(g.Description)
	w.f("type %s struct {", t)
	w.f("buf []byte // the entries, count*blockLength bytes")
	w.f("blockLength int // acting entry length")
	w.f("count int")
	w.f("}")
	w.f("")
	w.f("// Count is the number of entries.")
	w.f("func (g %s) Count() int { return g.count }", t)
	w.f("")
	w.f("// Entry returns entry i (0-based). Like a slice index, an index outside")
	w.f("// [0, Count()) panics.")
	w.f("func (g %s) Entry(i int) %s {", t, entry)
	w.f("if uint(i) >= uint(g.count) {")
	w.f("panic(%q)", m.GoName+"."+g.GoName+": entry index out of range")
	w.f("}")
	w.f("return %s{buf: (*[%s]byte)(g.buf[i*g.blockLength:])}", entry, bl)
	w.f("}")
	w.f("")
	w.f("// EncodedLength is the dimension plus every entry.")
	w.f("func (g %s) EncodedLength() int { return GroupHeaderSize + len(g.buf) }", t)
	w.f("")
	w.f("// %s returns the group %q as found in the buffer. After a successful", g.GoName, g.Name)
	w.f("// WrapDecode or %sCount it is always in range; otherwise it is empty.", g.GoName)
	w.f("func (m *%s) %s() %s {", m.GoName, g.GoName, t)
	w.f("p := groupOffset(m.msg, %d)", k)
	w.f("if p < 0 {")
	w.f("return %s{}", t)
	w.f("}")
	w.f("end, err := checkGroup(m.msg, p, %s)", bl)
	w.f("if err != nil {")
	w.f("return %s{}", t)
	w.f("}")
	w.f("d := m.msg[p : p+GroupHeaderSize]")
	w.f("return %s{buf: m.msg[p+GroupHeaderSize : end : end],", t)
	w.f("blockLength: int(binary.LittleEndian.Uint16(d[0:2])),")
	w.f("count: int(binary.LittleEndian.Uint16(d[2:4]))}")
	w.f("}")
	w.f("")
	w.f("// %sCount sizes group %q to n zeroed entries of %s bytes", g.GoName, g.Name, bl)
	w.f("// and returns it for filling.")
	if later > 0 {
		w.f("// Groups are written in schema order: every later group is reset to empty.")
	}
	w.f("// It fails with sbe.ErrGroupCount when n is outside [0, sbe.GroupCountMax]")
	w.f("// and with sbe.ErrShortBuffer when the buffer cannot hold the entries; in")
	w.f("// both cases nothing is written.")
	w.f("func (m *%s) %sCount(n int) (%s, error) {", m.GoName, g.GoName, t)
	w.f("if n < 0 || n > sbe.GroupCountMax {")
	w.f("return %s{}, sbe.ErrGroupCount", t)
	w.f("}")
	w.f("p := groupOffset(m.msg, %d)", k)
	w.f("end := p + GroupHeaderSize + n*%s", bl)
	if later > 0 {
		w.f("// Room for the entries and for the later groups' empty dimensions.")
		w.f("if p < 0 || window(m.msg, p, end-p+%d*GroupHeaderSize) == nil {", later)
	} else {
		w.f("if p < 0 || window(m.msg, p, end-p) == nil {")
	}
	w.f("return %s{}, sbe.ErrShortBuffer", t)
	w.f("}")
	w.f("putGroupHeader(m.msg, p, %s, n)", bl)
	w.f("entries := m.msg[p+GroupHeaderSize : end : end]")
	w.f("clear(entries)")
	for j := k + 1; j < len(m.Groups); j++ {
		w.f("putGroupHeader(m.msg, end+%d*GroupHeaderSize, %sBlockLength, 0)", j-k-1, m.Groups[j].TypeName)
	}
	w.f("return %s{buf: entries, blockLength: %s, count: n}, nil", t, bl)
	w.f("}")
	w.fieldOffsets(g.TypeName, g.Fields,
		fmt.Sprintf("The offsets of the fields of an entry of group %q of %s,", g.Name, m.GoName),
		"in bytes from the start of the entry.")
	w.f("")
	w.f("// %s is a flyweight over one entry of group %q of %s.", entry, g.Name, m.GoName)
	w.f("// Its accessors have value receivers so that g.Entry(i).SetX(v) works;")
	w.f("// they index the entry without a test, and panic on the zero value.")
	w.f("type %s struct {", entry)
	w.f("buf *[%s]byte // the entry, or nil", bl)
	w.f("}")
	for _, f := range g.Fields {
		w.accessors("e "+entry, "e", 0, f)
	}
	w.f("")
	w.f("// AppendText appends e's fields as name=value pairs in braces, in schema order.")
	w.f("func (e %s) AppendText(dst []byte) []byte {", entry)
	w.f("dst = append(dst, '{')")
	for i, f := range g.Fields {
		w.appendField("e", f, i == 0)
	}
	w.f("return append(dst, '}')")
	w.f("}")
}

// fieldOffsets writes the constant <prefix><Field>Offset of every field that
// occupies bytes (a constant field has no offset): the same block-relative
// offsets the accessors use, and the offset attribute of the SBE schema
// means, for code that reads or writes a field with plain loads and stores.
// They are constants, so such code compiles to the same instructions as with
// literal offsets. The comment lines say what the offsets are relative to.
func (w *writer) fieldOffsets(prefix string, fields []*Field, comment ...string) {
	var n int
	for _, f := range fields {
		if !f.Type.IsConstant() {
			n++
		}
	}
	if n == 0 {
		return
	}
	w.f("")
	for _, line := range comment {
		w.f("// %s", line)
	}
	w.f("const (")
	for _, f := range fields {
		if f.Type.IsConstant() {
			continue
		}
		w.f("%s int = %d // %s", offsetName(prefix, f), f.Offset, encodingOf(f.Type))
	}
	w.f(")")
}

// offsetName is the name of the offset constant of field f of the message
// or group entry whose Go names start with prefix.
func offsetName(prefix string, f *Field) string { return prefix + f.GoName + "Offset" }

// encodingOf describes how a field of type t is encoded, for the comment of
// its offset constant.
func encodingOf(t *Type) string {
	switch t.Kind {
	case KindCharArray:
		return fmt.Sprintf("char[%d]", t.Length)
	case KindEnum, KindSet:
		return fmt.Sprintf("%s (%s)", t.GoName, t.Prim.Name)
	case KindComposite:
		return fmt.Sprintf("%s (%d bytes)", t.GoName, t.Size)
	}
	return t.Prim.Name
}

// headerWord is the message header of m as one little-endian word, the
// value putHeader computes, written as a literal where one store must do
// (an inlined call to putHeader would add a marker instruction).
func headerWord(s *Schema, m *Message) uint64 {
	return uint64(m.BlockLength) | uint64(m.ID)<<16 | uint64(s.ID)<<32 | uint64(s.Version)<<48
}
