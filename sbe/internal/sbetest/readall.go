package sbetest

import (
	"reflect"
	"strings"
)

// ReadAll calls every getter of a wrapped message flyweight: every exported
// method without arguments that is not a setter or a Wrap (the text form
// included), recursing into the composites and groups they return and into
// every group entry. Fuzz targets call it on whatever a WrapDecode accepted
// to prove that no getter of a checked message can panic, whatever its
// bytes. It returns the number of getters called, so a caller can check
// that the walk reached something.
func ReadAll(fw any) int {
	return readAll(reflect.ValueOf(fw), 0)
}

// readDepthMax bounds the recursion: message → group → entry → composite.
const readDepthMax = 4

func readAll(v reflect.Value, depth int) int {
	if depth > readDepthMax {
		return 0
	}
	calls := 0
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		if strings.HasPrefix(m.Name, "Set") || strings.HasPrefix(m.Name, "Wrap") {
			continue
		}
		if m.Type.NumIn() != 1 { // only the receiver
			if m.Name == "Entry" {
				calls += readEntries(v, depth)
			}
			continue
		}
		out := v.Method(i).Call(nil)
		calls++
		for _, r := range out {
			if r.Kind() == reflect.Struct && r.NumMethod() > 0 {
				calls += readAll(r, depth+1)
			}
		}
	}
	return calls
}

// readEntries reads every entry of a group view.
func readEntries(group reflect.Value, depth int) int {
	n := int(group.MethodByName("Count").Call(nil)[0].Int())
	calls := 0
	entry := group.MethodByName("Entry")
	for i := 0; i < n; i++ {
		e := entry.Call([]reflect.Value{reflect.ValueOf(i)})[0]
		calls += readAll(e, depth+1)
	}
	return calls
}

// Panics reports whether f panics. Generated accessors index the bytes
// that Wrap checked without a test of their own, so using a flyweight that
// is not wrapped must panic rather than read zeros or drop a write.
func Panics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}
