package sbetest

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/gen"
)

// These tests prove that RoundTrip can fail: hand-written flyweights with
// the bugs a generator could have must be caught, and a correct one must pass.

const twoFields = `<messageSchema package="two" id="5" version="0">
<types>
  <composite name="messageHeader">
    <type name="blockLength" primitiveType="uint16"/><type name="templateId" primitiveType="uint16"/>
    <type name="schemaId" primitiveType="uint16"/><type name="version" primitiveType="uint16"/>
  </composite>
</types>
<message name="M" id="1"><field name="a" id="1" type="uint32"/><field name="b" id="2" type="uint32"/></message>
</messageSchema>`

// flyweight is a hand-written codec for message M of twoFields, with the
// offset of b and the reported length as parameters so that tests can
// break them.
type flyweight struct {
	buf           []byte
	bAt           int
	lengthReports int
}

func (f *flyweight) WrapEncode(buf []byte, off int) error {
	f.buf = buf[off : off+16]
	binary.LittleEndian.PutUint16(f.buf[0:], 8)
	binary.LittleEndian.PutUint16(f.buf[2:], 1)
	binary.LittleEndian.PutUint16(f.buf[4:], 5)
	clear(f.buf[8:])
	return nil
}

func (f *flyweight) WrapDecode(buf []byte, off int) error {
	if len(buf)-off < 16 {
		return fmt.Errorf("short")
	}
	f.buf = buf[off : off+16]
	return nil
}

func (f *flyweight) EncodedLength() int { return f.lengthReports }
func (f *flyweight) A() uint32          { return binary.LittleEndian.Uint32(f.buf[8:]) }
func (f *flyweight) SetA(v uint32)      { binary.LittleEndian.PutUint32(f.buf[8:], v) }
func (f *flyweight) B() uint32          { return binary.LittleEndian.Uint32(f.buf[f.bAt:]) }
func (f *flyweight) SetB(v uint32)      { binary.LittleEndian.PutUint32(f.buf[f.bAt:], v) }

// recorder stands in for *testing.T and records whether RoundTrip failed.
type recorder struct {
	testing.TB
	failed bool
}

// RoundTrip only calls these; any other method would hit the nil TB and
// fail the test loudly.
func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true; runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }

func roundTripFails(t *testing.T, enc, dec Codec) bool {
	t.Helper()
	s, err := gen.Parse([]byte(twoFields), "two.xml")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	var wg sync.WaitGroup
	wg.Go(func() { RoundTrip(r, s.Messages[0], enc, dec) })
	wg.Wait()
	return r.failed
}

func TestRoundTripCatchesBugs(t *testing.T) {
	good := func() *flyweight { return &flyweight{bAt: 12, lengthReports: 16} }
	if roundTripFails(t, good(), good()) {
		t.Fatalf("a correct flyweight failed the round trip")
	}
	overlap := func() *flyweight { return &flyweight{bAt: 10, lengthReports: 16} }
	if !roundTripFails(t, overlap(), overlap()) {
		t.Errorf("overlapping fields passed the round trip")
	}
	encoder := good()
	decoder := &flyweight{bAt: 8, lengthReports: 16} // reads b where a is
	if !roundTripFails(t, encoder, decoder) {
		t.Errorf("a decoder reading the wrong offset passed the round trip")
	}
	wrongLength := func() *flyweight { return &flyweight{bAt: 12, lengthReports: 17} }
	if !roundTripFails(t, wrongLength(), wrongLength()) {
		t.Errorf("a wrong EncodedLength passed the round trip")
	}
}

func TestReadAllCallsGetters(t *testing.T) {
	f := &flyweight{bAt: 12, lengthReports: 16}
	buf := make([]byte, 16)
	if err := f.WrapEncode(buf, 0); err != nil {
		t.Fatal(err)
	}
	// A, B and EncodedLength; setters and wraps are skipped.
	if got := ReadAll(f); got != 3 {
		t.Errorf("ReadAll called %d getters, want 3", got)
	}
}
