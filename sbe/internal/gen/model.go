package gen

// Schema is a validated schema, ready to emit. Offsets and sizes are final.
type Schema struct {
	Package     string
	ID          uint16
	Version     uint16
	Source      string // base name of the schema file, written in the generated header
	Description string
	Types       []*Type // named types in document order
	Messages    []*Message
	HasGroups   bool
	// Commands is the id range declared by fixvenue:commandIds, or nil:
	// the messages whose template id is in it are commands (IsCommand).
	Commands *IDRange
}

// IDRange is an inclusive range of template ids.
type IDRange struct{ Low, High uint16 }

// Contains reports whether id is in the range.
func (r *IDRange) Contains(id uint16) bool { return r != nil && id >= r.Low && id <= r.High }

// Kind says how a type is encoded and which Go code represents it.
type Kind int

// The kinds of type the generator supports.
const (
	KindPrimitive Kind = iota // one primitive value
	KindCharArray             // fixed-length NUL-padded char array
	KindEnum                  // named values of a uint8, uint16 or char
	KindSet                   // bit set over a uint8, uint16 or uint32
	KindComposite             // fixed sequence of primitive members
)

// Type is a named schema type or a built-in primitive.
type Type struct {
	Kind        Kind
	Name        string // schema name; the primitive's name for a built-in
	GoName      string // Go type name for enums, sets and composites; Go prefix for char arrays
	Description string
	Prim        *Primitive // encoding of primitives, char arrays, enums and sets
	Length      int        // char array length
	Size        int        // encoded size in bytes
	Values      []*EnumValue
	Choices     []*Choice
	Members     []*Field // composite members
	Constant    string   // value when presence is constant (KindPrimitive only)
}

// IsConstant reports whether the type has presence="constant": it occupies
// no bytes and reads as a fixed value.
func (t *Type) IsConstant() bool { return t.Constant != "" }

// EnumValue is one validValue of an enum.
type EnumValue struct {
	Name, GoName string
	Literal      string // Go literal of the value, e.g. 7 or '7'
	Number       uint64
}

// Choice is one bit of a set.
type Choice struct {
	Name, GoName string
	Bit          int
}

// Field is a message, group or composite member at a fixed offset.
type Field struct {
	Name, GoName string
	ID           int
	Offset       int
	Type         *Type
	Description  string
	// TimeUnit is the field's timeUnit attribute when it has one: the text
	// form prints the field as a UTC time (see timeUnits).
	TimeUnit string
}

// Group is a repeating group at the end of a message, encoded with the
// standard dimension (blockLength uint16, numInGroup uint16).
type Group struct {
	Name, GoName string
	TypeName     string // prefix of the group's Go names: message name + group name
	ID           int
	BlockLength  int
	Fields       []*Field
	Description  string
}

// Message is one message template.
type Message struct {
	Name, GoName string
	ID           uint16
	BlockLength  int
	Fields       []*Field
	Groups       []*Group
	Description  string
	Command      bool // its id is in the schema's command range
}

// Primitive is an SBE primitive type and its Go representation.
type Primitive struct {
	Name   string
	Size   int
	GoType string
}

var primitives = map[string]*Primitive{
	"char":   {"char", 1, "byte"},
	"int8":   {"int8", 1, "int8"},
	"uint8":  {"uint8", 1, "uint8"},
	"int16":  {"int16", 2, "int16"},
	"uint16": {"uint16", 2, "uint16"},
	"int32":  {"int32", 4, "int32"},
	"uint32": {"uint32", 4, "uint32"},
	"int64":  {"int64", 8, "int64"},
	"uint64": {"uint64", 8, "uint64"},
	"float":  {"float", 4, "float32"},
	"double": {"double", 8, "float64"},
}
