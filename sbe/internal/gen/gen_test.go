package gen

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// schema wraps types and messages in a messageSchema with the standard
// header and group dimension composites, so each test case shows only what
// it is about.
func schema(attrs, types, messages string) string {
	if attrs == "" {
		attrs = `package="t" id="9" version="1" byteOrder="littleEndian"`
	}
	return `<?xml version="1.0"?>
<sbe:messageSchema xmlns:sbe="http://fixprotocol.io/2016/sbe" ` + attrs + `>
<types>
  <composite name="messageHeader">
    <type name="blockLength" primitiveType="uint16"/>
    <type name="templateId" primitiveType="uint16"/>
    <type name="schemaId" primitiveType="uint16"/>
    <type name="version" primitiveType="uint16"/>
  </composite>
  <composite name="groupSizeEncoding">
    <type name="blockLength" primitiveType="uint16"/>
    <type name="numInGroup" primitiveType="uint16"/>
  </composite>
  <enum name="Side" encodingType="uint8"><validValue name="Buy">1</validValue></enum>
` + types + `
</types>
` + messages + `
</sbe:messageSchema>`
}

// ext declares the fixvenue extension namespace on a messageSchema, for
// the attrs argument of schema.
const ext = `package="t" id="9" xmlns:fixvenue="urn:fixvenue:sbe" `

func msg(body string) string { return `<sbe:message name="M" id="1">` + body + `</sbe:message>` }

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // every substring must appear in the error
	}{
		{"not XML", "<messageSchema", []string{"not well-formed XML"}},
		{"wrong root", `<schema/>`, []string{"root element is <schema>"}},
		{"big endian", schema(`package="t" id="9" byteOrder="bigEndian"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"messageSchema", `byteOrder "bigEndian" is not supported`}},
		{"package not an identifier", schema(`package="my.pkg" id="9"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"package", `"my.pkg" is not an ASCII identifier`}},
		{"schema id too large", schema(`package="t" id="70000"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"messageSchema", `id="70000"`}},
		{"unknown type", schema("", "", msg(`<field name="price" id="1" type="Price"/>`)),
			[]string{`<message name="M">`, `<field name="price">`, `unknown type "Price"`}},
		{"duplicate message id", schema("", "", msg(`<field name="a" id="1" type="uint8"/>`)+
			`<sbe:message name="N" id="1"><field name="a" id="1" type="uint8"/></sbe:message>`),
			[]string{`<message name="N">`, "duplicate message id 1", `"M"`}},
		{"duplicate message name", schema("", "", msg(`<field name="a" id="1" type="uint8"/>`)+
			`<sbe:message name="M" id="2"><field name="a" id="1" type="uint8"/></sbe:message>`),
			[]string{`<message name="M">`, `duplicate message name "M"`}},
		{"duplicate field id", schema("", "", msg(`<field name="a" id="1" type="uint8"/><field name="b" id="1" type="uint8"/>`)),
			[]string{`<message name="M">`, `field "b" reuses id 1 of field "a"`}},
		{"duplicate field name", schema("", "", msg(`<field name="a" id="1" type="uint8"/><field name="a" id="2" type="uint8"/>`)),
			[]string{`<message name="M">`, `duplicate field name "a"`}},
		{"group reuses a field name", schema("", "", msg(`<field name="a" id="1" type="uint8"/>
			<group name="a" id="2"><field name="x" id="1" type="uint8"/></group>`)),
			[]string{`<message name="M">`, `duplicate field name "a"`}},
		{"overlapping offset", schema("", "", msg(`<field name="a" id="1" type="uint64"/><field name="b" id="2" type="uint8" offset="7"/>`)),
			[]string{`<field name="b">`, `offset 7 overlaps field "a" (bytes 0 to 7)`}},
		{"offset past blockLength", schema("", "", `<sbe:message name="M" id="1" blockLength="8">
			<field name="a" id="1" type="uint32"/><field name="b" id="2" type="uint32" offset="6"/></sbe:message>`),
			[]string{`<message name="M">`, `<field name="b">`, "ends at offset 10, past blockLength 8"}},
		{"group entry past blockLength", schema("", "", msg(`<group name="g" id="1" blockLength="4">
			<field name="a" id="1" type="uint64"/></group>`)),
			[]string{`<group name="g">`, `<field name="a">`, "past blockLength 4"}},
		{"var data", schema("", "", msg(`<field name="a" id="1" type="uint8"/><data name="text" id="2" type="varDataEncoding"/>`)),
			[]string{`<message name="M">`, `<data name="text">`, "variable-length data is not supported"}},
		{"nested group", schema("", "", msg(`<group name="g" id="1"><field name="a" id="1" type="uint8"/>
			<group name="h" id="2"><field name="b" id="1" type="uint8"/></group></group>`)),
			[]string{`<group name="g">`, `<group name="h">`, "nested groups are not supported"}},
		{"field after group", schema("", "", msg(`<group name="g" id="1"><field name="a" id="1" type="uint8"/></group>
			<field name="b" id="2" type="uint8"/>`)),
			[]string{`<field name="b">`, "fields must come before the first group"}},
		{"unknown element", schema("", "", msg(`<field name="a" id="1" type="uint8"/><widget/>`)),
			[]string{`<message name="M">`, "unsupported element <widget>"}},
		{"unknown attribute", schema("", "", msg(`<field name="a" id="1" type="uint8" align="8"/>`)),
			[]string{`<field name="a">`, `unsupported attribute "align"`}},
		{"optional presence", schema("", `<type name="Px" primitiveType="int64" presence="optional"/>`, msg(`<field name="a" id="1" type="Px"/>`)),
			[]string{`<type name="Px">`, `presence="optional" is not supported`}},
		{"optional field", schema("", "", msg(`<field name="a" id="1" type="uint8" presence="optional"/>`)),
			[]string{`<field name="a">`, `presence="optional" on a field is not supported`}},
		{"int array", schema("", `<type name="Arr" primitiveType="uint32" length="4"/>`, msg(`<field name="a" id="1" type="Arr"/>`)),
			[]string{`<type name="Arr">`, "arrays of uint32 (length 4) are not supported"}},
		{"unknown primitive", schema("", `<type name="Q" primitiveType="int128"/>`, msg(`<field name="a" id="1" type="Q"/>`)),
			[]string{`<type name="Q">`, `unknown primitiveType "int128"`}},
		{"ref in composite", schema("", `<composite name="C"><ref name="s" type="Side"/></composite>`, msg(`<field name="a" id="1" type="C"/>`)),
			[]string{`<composite name="C">`, `<ref name="s">`, "only <type> members are supported"}},
		{"enum encoding", schema("", `<enum name="E" encodingType="int32"><validValue name="A">1</validValue></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<enum name="E">`, `encodingType "int32" is not supported`}},
		{"enum duplicate value", schema("", `<enum name="E" encodingType="uint8"><validValue name="A">1</validValue><validValue name="B">1</validValue></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<validValue name="B">`, `value 1 is already used by "A"`}},
		{"enum value too large", schema("", `<enum name="E" encodingType="uint8"><validValue name="A">256</validValue></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<validValue name="A">`, `value "256" does not fit uint8`}},
		{"char enum value", schema("", `<enum name="E" encodingType="char"><validValue name="A">AB</validValue></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<validValue name="A">`, "not one printable ASCII character"}},
		{"set bit out of range", schema("", `<set name="S" encodingType="uint8"><choice name="A">8</choice></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<set name="S">`, `<choice name="A">`, `bit "8" is not in [0, 7]`}},
		{"set encoding", schema("", `<set name="S" encodingType="uint64"><choice name="A">1</choice></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<set name="S">`, `encodingType "uint64" is not supported`}},
		{"enum duplicate name", schema("", `<enum name="E" encodingType="uint8"><validValue name="A">1</validValue><validValue name="A">2</validValue></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<enum name="E">`, `<validValue name="A">`, `duplicate value name "A"`}},
		{"enum member element", schema("", `<enum name="E" encodingType="uint8"><choice name="A">1</choice></enum>`, msg(`<field name="a" id="1" type="E"/>`)),
			[]string{`<choice name="A">`, "unsupported element in enum"}},
		{"set duplicate name", schema("", `<set name="S" encodingType="uint8"><choice name="A">1</choice><choice name="A">2</choice></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<set name="S">`, `<choice name="A">`, `duplicate choice name "A"`}},
		{"set duplicate bit", schema("", `<set name="S" encodingType="uint8"><choice name="A">1</choice><choice name="B">1</choice></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<choice name="B">`, `bit 1 is already used by "A"`}},
		{"set member element", schema("", `<set name="S" encodingType="uint8"><validValue name="A">1</validValue></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<validValue name="A">`, "unsupported element in set"}},
		{"set member attribute", schema("", `<set name="S" encodingType="uint8"><choice name="A" since="2">1</choice></set>`, msg(`<field name="a" id="1" type="S"/>`)),
			[]string{`<choice name="A">`, `unsupported attribute "since"`}},
		{"duplicate type", schema("", `<enum name="Side" encodingType="uint8"><validValue name="Sell">2</validValue></enum>`, msg(`<field name="a" id="1" type="Side"/>`)),
			[]string{`<enum name="Side">`, `duplicate type name "Side"`}},
		{"non-standard header", strings.Replace(schema("", "", msg(`<field name="a" id="1" type="uint8"/>`)),
			`<type name="version" primitiveType="uint16"/>`, `<type name="version" primitiveType="uint8"/>`, 1),
			[]string{`<composite name="messageHeader">`, `member 3 is "version" uint8`}},
		{"missing header", schema(`package="t" id="9" headerType="hdr"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{`message header composite "hdr" is not defined`}},
		{"non-standard group dimension", schema("", `<composite name="smallGroup"><type name="blockLength" primitiveType="uint16"/>
			<type name="numInGroup" primitiveType="uint8"/></composite>`,
			msg(`<group name="g" id="1" dimensionType="smallGroup"><field name="a" id="1" type="uint8"/></group>`)),
			[]string{`<group name="g">`, `<composite name="smallGroup">`, `"numInGroup" uint8`}},
		{"no messages", schema("", "", ""), []string{"no <message> elements"}},
		{"bad field name", schema("", "", msg(`<field name="a-b" id="1" type="uint8"/>`)),
			[]string{`<field name="a-b">`, "not an ASCII identifier"}},
		{"method collision", schema("", "", msg(`<field name="encodedLength" id="1" type="uint8"/>`)),
			[]string{`<field name="encodedLength">`, "generated method EncodedLength collides"}},
		{"setter collision", schema("", "", msg(`<field name="x" id="1" type="uint8"/><field name="setX" id="2" type="uint8"/>`)),
			[]string{`<field name="setX">`, "generated method SetX collides"}},
		{"Go name collision", schema("", `<enum name="Trade" encodingType="uint8"><validValue name="Report">1</validValue></enum>`,
			msg(`<field name="a" id="1" type="uint8"/>`)+`<sbe:message name="TradeReport" id="2"/>`),
			[]string{`message "TradeReport"`, "TradeReport collides with type \"Trade\""}},
		{"offset constant collision", schema("", `<enum name="MA" encodingType="uint8"><validValue name="Offset">1</validValue></enum>`,
			msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{`<message name="M"> <field name="a">`, `generated Go name MAOffset collides with type "MA"`}},
		{"constant without value", schema("", `<type name="K" primitiveType="int8" presence="constant"></type>`, msg(`<field name="a" id="1" type="K"/>`)),
			[]string{`<type name="K">`, "constant without a value"}},
		{"commandIds not a range", schema(ext+`fixvenue:commandIds="1..5"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"messageSchema", `fixvenue:commandIds="1..5"`, "want low-high"}},
		{"commandIds reversed", schema(ext+`fixvenue:commandIds="5-1"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{`fixvenue:commandIds="5-1"`, "low <= high"}},
		{"commandIds holding no message", schema(ext+`fixvenue:commandIds="50-60"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{`fixvenue:commandIds="50-60" holds no message id`}},
		{"commandIds outside its namespace", schema(`package="t" id="9" commandIds="1-5"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"messageSchema", `unsupported attribute "commandIds"`}},
		{"attribute of another namespace", schema(`package="t" id="9" xmlns:x="urn:other" x:commandIds="1-5"`, "", msg(`<field name="a" id="1" type="uint8"/>`)),
			[]string{"messageSchema", `namespace "urn:other"`}},
		{"unknown timeUnit", schema("", "", msg(`<field name="t" id="1" type="int64" timeUnit="fortnight"/>`)),
			[]string{`<field name="t">`, `timeUnit="fortnight" is not supported`}},
		{"epoch not unix", schema("", "", msg(`<field name="t" id="1" type="int64" epoch="gps" timeUnit="second"/>`)),
			[]string{`<field name="t">`, `epoch="gps" is not supported`}},
		{"epoch without timeUnit", schema("", "", msg(`<field name="t" id="1" type="int64" epoch="unix"/>`)),
			[]string{`<field name="t">`, "epoch without timeUnit"}},
		{"timeUnit on a float", schema("", "", msg(`<field name="t" id="1" type="double" timeUnit="second"/>`)),
			[]string{`<field name="t">`, `timeUnit on a field of type "double" is not supported`}},
		{"text method collision", schema("", "", msg(`<field name="string" id="1" type="uint8"/>`)),
			[]string{`<field name="string">`, "generated method String collides"}},
		{"array method collision", schema("", `<type name="Code" primitiveType="char" length="4"/>`,
			msg(`<field name="code" id="1" type="Code"/><field name="codeArray" id="2" type="uint8"/>`)),
			[]string{`<field name="codeArray">`, "generated method CodeArray collides"}},
		{"constant out of range", schema("", `<type name="K" primitiveType="int8" presence="constant">200</type>`, msg(`<field name="a" id="1" type="K"/>`)),
			[]string{`<type name="K">`, `constant "200" does not fit int8`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "test.xml")
			if err == nil {
				t.Fatalf("schema accepted, want an error with %q", tt.want)
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestGoName(t *testing.T) {
	tests := map[string]string{
		"seq":              "Seq",
		"clOrdId":          "ClOrdID",
		"origClOrdId":      "OrigClOrdID",
		"instrumentId":     "InstrumentID",
		"sessionIdx":       "SessionIdx",
		"OrderIdMismatch":  "OrderIDMismatch",
		"DuplicateClOrdId": "DuplicateClOrdID",
		"id":               "ID",
		"idx":              "Idx",
		"orderId2":         "OrderID2",
		"order_id":         "Order_id",
		"valid":            "Valid",
		"Identity":         "Identity",
		"IOC":              "IOC",
	}
	for in, want := range tests {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLayout checks the offsets the generator computes for the example
// schema against offsets worked out by hand from its XML.
func TestLayout(t *testing.T) {
	s, err := Parse(readExample(t), "example.xml")
	if err != nil {
		t.Fatal(err)
	}
	offsets := func(fields []*Field) map[string]int {
		m := map[string]int{}
		for _, f := range fields {
			m[f.Name] = f.Offset
		}
		return m
	}
	quote, book := s.Messages[0], s.Messages[1]
	want := map[string]int{
		"quoteId": 0, "bid": 8, "action": 17, "flags": 20, "venue16": 21, "caps": 24, "symbol": 28,
		"ask": 36, "venue": 44, "code": 44, "i8": 45, "i16": 46, "i32": 48, "u16": 52, "u32": 54,
		"f32": 58, "f64": 62,
	}
	got := offsets(quote.Fields)
	for name, off := range want {
		if got[name] != off {
			t.Errorf("Quote.%s at %d, want %d", name, got[name], off)
		}
	}
	if quote.BlockLength != 70 {
		t.Errorf("Quote block %d, want 70", quote.BlockLength)
	}
	if book.BlockLength != 16 || offsets(book.Fields)["seq"] != 8 {
		t.Errorf("Book block %d seq at %d, want 16 and 8", book.BlockLength, offsets(book.Fields)["seq"])
	}
	if len(book.Groups) != 2 || book.Groups[0].BlockLength != 13 || book.Groups[1].BlockLength != 24 ||
		offsets(book.Groups[1].Fields)["qty"] != 12 || offsets(book.Groups[1].Fields)["flags"] != 16 {
		t.Errorf("Book groups laid out wrong")
	}
}

// readExample returns the schema of the example package.
func readExample(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("../../testdata/example.xml")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// generateExample generates the example package's code from its schema.
func generateExample(t *testing.T) (pkg string, code []byte) {
	t.Helper()
	pkg, code, err := Generate(readExample(t), "example.xml")
	if err != nil {
		t.Fatal(err)
	}
	return pkg, code
}

func TestEmitIsDeterministicAndMarked(t *testing.T) {
	pkg, first := generateExample(t)
	_, second := generateExample(t)
	if pkg != "example" || !bytes.Equal(first, second) {
		t.Errorf("package %q; two runs equal: %v", pkg, bytes.Equal(first, second))
	}
	if !bytes.HasPrefix(first, []byte(Header+"\n")) {
		t.Errorf("generated code does not start with %q", Header)
	}
	if _, _, err := Generate([]byte("<x"), "bad.xml"); err == nil || !strings.HasPrefix(err.Error(), "bad.xml: ") {
		t.Errorf("Generate error %v does not name the file", err)
	}
}

// TestOffsetConstants checks the generated offset constants of a small
// schema against offsets worked out by hand: block-relative for message
// fields (explicit offsets and blockLength padding respected), entry-relative
// for group fields, one per char array, enum, set, composite and primitive
// field, and none for a constant field, which occupies no bytes.
func TestOffsetConstants(t *testing.T) {
	src := schema("", `<type name="Code" primitiveType="char" length="6"/>
  <type name="One" primitiveType="uint8" presence="constant">1</type>
  <set name="Flags" encodingType="uint16"><choice name="A">0</choice></set>
  <composite name="Px"><type name="mantissa" primitiveType="int64"/><type name="exponent" primitiveType="int8"/></composite>`,
		`<sbe:message name="Order" id="1" blockLength="48">
    <field name="seq" id="1" type="uint64"/>
    <field name="side" id="2" type="Side"/>
    <field name="one" id="3" type="One"/>
    <field name="clOrdId" id="4" type="Code"/>
    <field name="flags" id="5" type="Flags" offset="16"/>
    <field name="price" id="6" type="Px"/>
    <field name="qty" id="7" type="int32" offset="40"/>
    <group name="fills" id="8" blockLength="16">
      <field name="tradeId" id="1" type="uint32"/>
      <field name="venue" id="2" type="Code" offset="8"/>
    </group>
  </sbe:message>
  <sbe:message name="Ping" id="2"><field name="one" id="1" type="One"/></sbe:message>`)
	_, code, err := Generate([]byte(src), "offsets.xml")
	if err != nil {
		t.Fatal(err)
	}
	got := offsetConstants(t, code)
	want := map[string]int{
		"OrderSeqOffset": 0, "OrderSideOffset": 8, "OrderClOrdIDOffset": 9, "OrderFlagsOffset": 16,
		"OrderPriceOffset": 18, "OrderQtyOffset": 40,
		"OrderFillsTradeIDOffset": 0, "OrderFillsVenueOffset": 8,
	}
	if !maps.Equal(got, want) {
		t.Errorf("offset constants\n got %v\nwant %v", got, want)
	}
}

// offsetConstants returns every package-level constant of code whose name
// ends in "Offset", with its value, and fails unless each is an int literal
// of type int (a constant, not a variable, so that code using it compiles
// to fixed offsets).
func offsetConstants(t *testing.T, code []byte) map[string]int {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "gen.go", code, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			v, ok := spec.(*ast.ValueSpec)
			if !ok || len(v.Names) != 1 || !strings.HasSuffix(v.Names[0].Name, "Offset") {
				continue
			}
			name := v.Names[0].Name
			typ, _ := v.Type.(*ast.Ident)
			lit, _ := v.Values[0].(*ast.BasicLit)
			if g.Tok != token.CONST || typ == nil || typ.Name != "int" || lit == nil || lit.Kind != token.INT {
				t.Fatalf("%s is not an int constant with a literal value", name)
			}
			n, err := strconv.Atoi(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got[name] = n
		}
	}
	return got
}

// TestIsCommandGenerated checks that IsCommand lists exactly the messages
// whose id is in fixvenue:commandIds, and that a schema without the
// attribute gets no IsCommand.
func TestIsCommandGenerated(t *testing.T) {
	messages := `<sbe:message name="Place" id="1"><field name="a" id="1" type="uint8"/></sbe:message>
  <sbe:message name="Placed" id="101"><field name="a" id="1" type="uint8"/></sbe:message>
  <sbe:message name="Pull" id="2"><field name="a" id="1" type="uint8"/></sbe:message>`
	for _, tt := range []struct {
		name, attrs string
		want        []string // nil: no IsCommand
	}{
		{"range", ext + `fixvenue:commandIds="1-100"`, []string{"PlaceTemplateID", "PullTemplateID"}},
		{"range of one", ext + `fixvenue:commandIds="2-2"`, []string{"PullTemplateID"}},
		{"no range", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, code, err := Generate([]byte(schema(tt.attrs, "", messages)), "commands.xml")
			if err != nil {
				t.Fatal(err)
			}
			got, found := isCommandCases(t, code)
			if found != (tt.want != nil) || !slices.Equal(got, tt.want) {
				t.Errorf("IsCommand generated %v with cases %v, want %v", found, got, tt.want)
			}
		})
	}
}

// isCommandCases returns the case expressions of IsCommand's switch, and
// whether the function exists.
func isCommandCases(t *testing.T, code []byte) ([]string, bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "gen.go", code, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "IsCommand" || fn.Recv != nil {
			continue
		}
		var cases []string
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CaseClause); ok {
				for _, e := range c.List {
					cases = append(cases, e.(*ast.Ident).Name)
				}
			}
			return true
		})
		return cases, true
	}
	return nil, false
}

// TestValueWrapsGenerated checks which messages get the by-value hot-path
// wraps Decode<M> and Overwrite<M>: those without groups (a message with
// groups needs its whole length, which they do not track).
func TestValueWrapsGenerated(t *testing.T) {
	_, code := generateExample(t)
	f, err := parser.ParseFile(token.NewFileSet(), "gen.go", code, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil &&
			(strings.HasPrefix(fn.Name.Name, "Decode") || strings.HasPrefix(fn.Name.Name, "Overwrite")) {
			got = append(got, fn.Name.Name)
		}
	}
	want := []string{"DecodeQuote", "OverwriteQuote", "DecodeEmpty", "OverwriteEmpty"}
	if !slices.Equal(got, want) {
		t.Errorf("value wraps %v, want %v (none for Book, which has groups)", got, want)
	}
}
