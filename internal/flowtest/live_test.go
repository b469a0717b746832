package flowtest

import "testing"

func TestLive(t *testing.T) {
	var l Live[string]
	for id, o := range []string{"a", "b", "c", "d"} {
		l.Add(uint64(id+10), o)
	}
	l.Drop(11) // "b": the last, "d", takes its place
	l.Drop(99) // not in the set: nothing happens
	if l.Len() != 3 || l.At(0) != "a" || l.At(1) != "d" || l.At(2) != "c" {
		t.Fatalf("after dropping b: %v", l.orders)
	}
	if p := l.Find(13); p == nil || *p != "d" {
		t.Fatalf("Find(13) = %v", p)
	}
	*l.Find(13) = "D"
	l.Drop(10) // "a": "c" moves to the front, and is still found under its id
	if l.Len() != 2 || l.At(0) != "c" || l.At(1) != "D" || l.Find(10) != nil || *l.Find(12) != "c" {
		t.Fatalf("after dropping a: %v", l.orders)
	}
	l.Drop(12)
	l.Drop(13)
	if l.Len() != 0 || l.Find(12) != nil || len(l.at) != 0 {
		t.Fatalf("not empty: %v %v", l.orders, l.at)
	}
}
