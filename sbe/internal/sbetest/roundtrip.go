package sbetest

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/gen"
)

// Codec is the part of a generated message flyweight that the tests need.
type Codec interface {
	WrapEncode(buf []byte, off int) error
	WrapDecode(buf []byte, off int) error
	EncodedLength() int
}

// GroupEntriesMax is how many entries RoundTrip writes in each group; three
// is enough to catch a wrong entry stride.
const GroupEntriesMax = 3

// LoadSchema parses a schema file with the generator's reader.
func LoadSchema(t testing.TB, path string) *gen.Schema {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gen.Parse(src, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Codecs maps each message name of a schema to a constructor of its
// generated flyweight.
type Codecs map[string]func() Codec

// CheckCodecs fails t unless codecs lists every message of s and nothing
// else, and, when messageName (the generated MessageName) is not nil, it
// names every template ID of s: a message added to a schema must be added to
// its package's tests.
func CheckCodecs(t testing.TB, s *gen.Schema, codecs Codecs, messageName func(uint16) string) {
	t.Helper()
	if len(codecs) != len(s.Messages) {
		t.Errorf("codecs lists %d messages, the schema has %d", len(codecs), len(s.Messages))
	}
	for _, m := range s.Messages {
		if codecs[m.Name] == nil {
			t.Errorf("message %q is missing from codecs", m.Name)
		}
		if messageName == nil {
			continue
		}
		if got := messageName(m.ID); got != m.Name {
			t.Errorf("MessageName(%d) = %q, want %q", m.ID, got, m.Name)
		}
	}
}

// RoundTripAll runs RoundTrip on every message of s that codecs lists, each
// as a subtest (one that codecs lacks is skipped: CheckCodecs reports it).
func RoundTripAll(t *testing.T, s *gen.Schema, codecs Codecs) {
	for _, m := range s.Messages {
		t.Run(m.Name, func(t *testing.T) {
			newCodec := codecs[m.Name]
			if newCodec == nil {
				t.Skip("not in codecs; CheckCodecs reports it")
			}
			RoundTrip(t, m, newCodec(), newCodec())
		})
	}
}

// filler produces a value for each field that differs from every other
// field's: every byte of a field is a distinct function of a running counter.
type filler struct{ next uint64 }

func (f *filler) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		f.next++
		b[i] = byte(f.next%251) + 1 // never 0, so a NUL-padding bug shows
	}
	return b
}

// RoundTrip encodes msg at a non-zero offset of a buffer guarded by canary
// bytes, sets every field (and every entry of every group) to a distinct
// value, checks the getters on the encoder, decodes into dec and checks the
// getters again, then checks that no byte outside the message changed.
func RoundTrip(t testing.TB, m *gen.Message, enc, dec Codec) {
	t.Helper()
	const off, canary = 5, 0xA5
	size := messageHeaderSize + m.BlockLength
	for _, g := range m.Groups {
		size += groupHeaderSize + GroupEntriesMax*g.BlockLength
	}
	buf := bytes.Repeat([]byte{canary}, off+size+7)
	if err := enc.WrapEncode(buf, off); err != nil {
		t.Fatalf("%s: WrapEncode: %v", m.Name, err)
	}
	var want []check
	f := &filler{next: uint64(m.ID) * 7}
	for _, field := range m.Fields {
		want = append(want, set(t, reflect.ValueOf(enc), field, f)...)
	}
	for _, g := range m.Groups {
		want = append(want, setGroup(t, reflect.ValueOf(enc), g, f)...)
	}
	if got := enc.EncodedLength(); got != size {
		t.Fatalf("%s: EncodedLength %d, want %d", m.Name, got, size)
	}
	verify(t, m.Name+" (encoder)", reflect.ValueOf(enc), want)
	if err := dec.WrapDecode(buf[:off+size], off); err != nil {
		t.Fatalf("%s: WrapDecode: %v", m.Name, err)
	}
	verify(t, m.Name+" (decoder)", reflect.ValueOf(dec), want)
	if got := dec.EncodedLength(); got != size {
		t.Fatalf("%s: decoded EncodedLength %d, want %d", m.Name, got, size)
	}
	for i, b := range buf {
		if (i < off || i >= off+size) && b != canary {
			t.Fatalf("%s: byte %d outside the message was written", m.Name, i)
		}
	}
}

// check is one getter call and the value it must return. path leads from the
// message to the flyweight that owns the getter (composite or group entry).
type check struct {
	path   []step
	getter string
	want   any
}

type step struct {
	method string
	arg    int // -1: no argument
}

func setGroup(t testing.TB, msg reflect.Value, g *gen.Group, f *filler) []check {
	t.Helper()
	counter := msg.MethodByName(g.GoName + "Count")
	if !counter.IsValid() {
		t.Fatalf("group %q: no method %sCount", g.Name, g.GoName)
	}
	out := counter.Call([]reflect.Value{reflect.ValueOf(GroupEntriesMax)})
	if err, _ := out[1].Interface().(error); err != nil {
		t.Fatalf("group %q: %sCount: %v", g.Name, g.GoName, err)
	}
	group := out[0]
	var checks []check
	checks = append(checks, check{path: []step{{g.GoName, -1}}, getter: "Count", want: GroupEntriesMax})
	for i := 0; i < GroupEntriesMax; i++ {
		entry := group.MethodByName("Entry").Call([]reflect.Value{reflect.ValueOf(i)})[0]
		for _, field := range g.Fields {
			for _, c := range set(t, entry, field, f) {
				c.path = append([]step{{g.GoName, -1}, {"Entry", i}}, c.path...)
				checks = append(checks, c)
			}
		}
	}
	return checks
}

// set writes field through its setter on fw and returns the checks that
// read it back.
func set(t testing.TB, fw reflect.Value, field *gen.Field, f *filler) []check {
	t.Helper()
	typ := field.Type
	getter := fw.MethodByName(field.GoName)
	if !getter.IsValid() {
		t.Fatalf("field %q: no getter %s on %s", field.Name, field.GoName, fw.Type())
	}
	switch {
	case typ.IsConstant():
		want := constant(t, typ, getter.Type().Out(0))
		return []check{{getter: field.GoName, want: want}}
	case typ.Kind == gen.KindComposite:
		composite := getter.Call(nil)[0]
		var checks []check
		for _, member := range typ.Members {
			for _, c := range set(t, composite, member, f) {
				c.path = append([]step{{field.GoName, -1}}, c.path...)
				checks = append(checks, c)
			}
		}
		return checks
	case typ.Kind == gen.KindCharArray:
		return setChars(t, fw, field, f)
	}
	setter := fw.MethodByName("Set" + field.GoName)
	if !setter.IsValid() {
		t.Fatalf("field %q: no setter Set%s on %s", field.Name, field.GoName, fw.Type())
	}
	v := scalarValue(typ, setter.Type().In(0), f)
	setter.Call([]reflect.Value{v})
	return []check{{getter: field.GoName, want: v.Interface()}}
}

func setChars(t testing.TB, fw reflect.Value, field *gen.Field, f *filler) []check {
	t.Helper()
	// Alternate between a full-length value and a shorter, NUL-padded one.
	n := field.Type.Length
	if f.next%2 == 1 && n > 1 {
		n--
	}
	v := f.bytes(n)
	for i := range v {
		v[i] = 'a' + v[i]%26
	}
	setter := fw.MethodByName("Set" + field.GoName)
	if !setter.IsValid() {
		t.Fatalf("field %q: no setter Set%s", field.Name, field.GoName)
	}
	if err, _ := setter.Call([]reflect.Value{reflect.ValueOf(v)})[0].Interface().(error); err != nil {
		t.Fatalf("field %q: Set%s(%d bytes): %v", field.Name, field.GoName, n, err)
	}
	return []check{{getter: field.GoName, want: v}}
}

// scalarValue makes a distinct value of the setter's parameter type: a
// defined value for enums, defined bits for sets, every byte distinct for
// integers.
func scalarValue(typ *gen.Type, param reflect.Type, f *filler) reflect.Value {
	switch typ.Kind {
	case gen.KindEnum:
		f.next++
		v := typ.Values[int(f.next)%len(typ.Values)]
		return reflect.ValueOf(v.Number).Convert(param)
	case gen.KindSet:
		f.next++
		var bits uint64
		for i, c := range typ.Choices {
			if (f.next>>uint(i%8))&1 == 1 || i == 0 {
				bits |= 1 << uint(c.Bit)
			}
		}
		return reflect.ValueOf(bits).Convert(param)
	}
	switch param.Kind() {
	case reflect.Float32, reflect.Float64:
		f.next++
		return reflect.ValueOf(float64(f.next) + 0.25).Convert(param)
	}
	var raw uint64
	for i, b := range f.bytes(typ.Prim.Size) {
		raw |= uint64(b) << (8 * i)
	}
	return reflect.ValueOf(raw).Convert(param)
}

// constant parses a constant type's literal into the getter's result type.
func constant(t testing.TB, typ *gen.Type, out reflect.Type) any {
	t.Helper()
	if typ.Prim.Name == "char" {
		r, err := strconv.Unquote(typ.Constant)
		if err != nil {
			t.Fatal(err)
		}
		return reflect.ValueOf(r[0]).Convert(out).Interface()
	}
	switch out.Kind() {
	case reflect.Float32, reflect.Float64:
		v, err := strconv.ParseFloat(typ.Constant, 64)
		if err != nil {
			t.Fatal(err)
		}
		return reflect.ValueOf(v).Convert(out).Interface()
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v, err := strconv.ParseInt(typ.Constant, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return reflect.ValueOf(v).Convert(out).Interface()
	}
	v, err := strconv.ParseUint(typ.Constant, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return reflect.ValueOf(v).Convert(out).Interface()
}

func verify(t testing.TB, what string, msg reflect.Value, checks []check) {
	t.Helper()
	for _, c := range checks {
		fw, where := msg, ""
		for _, s := range c.path {
			var args []reflect.Value
			where += "." + s.method + "("
			if s.arg >= 0 {
				args = []reflect.Value{reflect.ValueOf(s.arg)}
				where += strconv.Itoa(s.arg)
			}
			where += ")"
			fw = fw.MethodByName(s.method).Call(args)[0]
		}
		got := fw.MethodByName(c.getter).Call(nil)[0].Interface()
		if !equal(got, c.want) {
			t.Errorf("%s%s.%s() = %v, want %v", what, where, c.getter, got, c.want)
		}
	}
}

func equal(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ab, bb)
	}
	if af, ok := a.(float32); ok {
		bf, ok := b.(float32)
		return ok && math.Float32bits(af) == math.Float32bits(bf)
	}
	return reflect.DeepEqual(a, b) && fmt.Sprint(a) == fmt.Sprint(b)
}

// The standard header and group dimension sizes; the generator refuses any
// other layout.
const (
	messageHeaderSize = 8
	groupHeaderSize   = 4
)
