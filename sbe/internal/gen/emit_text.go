package gen

import (
	"fmt"
	"strconv"
)

// The text form: every message, group entry and composite has an
// AppendText method that writes its fields as name=value pairs in schema
// order, with the schema's own names, so that a tool (the journal dump) can
// print any message without a switch over the templates. Values are written
// as follows: integers in decimal; floats in the shortest form that reads
// back exactly; enums and sets by their String (the schema names); char
// arrays and chars in double quotes, up to the first NUL, escaped as
// appendQuoted does; fields with a timeUnit as a UTC time in RFC 3339 with
// nanoseconds; composites and group entries in braces; groups as a
// bracketed, space-separated list of entries; constants as their value.

// messageText writes the AppendText and String methods of message m.
func (w *writer) messageText(m *Message) {
	n := m.GoName
	w.f("")
	w.f("// AppendText appends m as one line of text: %q, then name=value for", m.Name)
	w.f("// every field in schema order (the schema's names; see the package doc")
	w.f("// for how each kind of value is written).")
	w.f("func (m *%s) AppendText(dst []byte) []byte {", n)
	w.f("dst = append(dst, %q...)", m.Name)
	for _, f := range m.Fields {
		w.appendField("m", f, false)
	}
	for _, g := range m.Groups {
		w.f("dst = append(dst, %q...)", " "+g.Name+"=[")
		w.f("if g := m.%s(); g.Count() > 0 {", g.GoName)
		w.f("dst = g.Entry(0).AppendText(dst)")
		w.f("for i := 1; i < g.Count(); i++ {")
		w.f("dst = g.Entry(i).AppendText(append(dst, ' '))")
		w.f("}")
		w.f("}")
		w.f("dst = append(dst, ']')")
	}
	w.f("return dst")
	w.f("}")
	w.f("")
	w.f("// String returns the text form of m (AppendText).")
	w.f("func (m *%s) String() string { return string(m.AppendText(nil)) }", n)
}

// appendField writes the statements that append " name=value" for field f
// of the flyweight in variable v (without the space when first).
func (w *writer) appendField(v string, f *Field, first bool) {
	label := " " + f.Name + "="
	if first {
		label = f.Name + "="
	}
	t := f.Type
	get := fmt.Sprintf("%s.%s()", v, f.GoName)
	if t.IsConstant() {
		w.f("dst = append(dst, %q...)", label+constantText(t))
		return
	}
	w.f("dst = append(dst, %q...)", label)
	switch {
	case t.Kind == KindComposite:
		w.f("dst = %s.AppendText(dst)", get)
	case t.Kind == KindCharArray:
		w.f("dst = appendQuoted(dst, %s)", get)
	case t.Kind == KindEnum || t.Kind == KindSet:
		w.f("dst = append(dst, %s.String()...)", get)
	case f.TimeUnit != "":
		at := fmt.Sprintf(timeUnits[f.TimeUnit], "int64("+get+")")
		w.f("dst = %s.UTC().AppendFormat(dst, time.RFC3339Nano)", at)
	case t.Prim.Name == "char":
		w.f("dst = appendQuoted(dst, []byte{%s})", get)
	case t.Prim.Name == "float" || t.Prim.Name == "double":
		w.f("dst = strconv.AppendFloat(dst, float64(%s), 'g', -1, %d)", get, t.Prim.Size*8)
	case t.Prim.GoType[0] == 'i':
		w.f("dst = strconv.AppendInt(dst, int64(%s), 10)", get)
	default:
		w.f("dst = strconv.AppendUint(dst, uint64(%s), 10)", get)
	}
}

// constantText is how the text form writes a constant: a char in double
// quotes, a number as the schema wrote it.
func constantText(t *Type) string {
	if t.Prim.Name != "char" {
		return t.Constant
	}
	r, _, _, err := strconv.UnquoteChar(t.Constant[1:len(t.Constant)-1], '\'')
	if err != nil {
		panic("gen: char constant " + t.Constant + " is not a Go rune literal") // Parse wrote it with QuoteRune
	}
	return strconv.Quote(string(r))
}
