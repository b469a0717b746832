package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunWritesPackage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nested", "example")
	if err := run("../../testdata/example.xml", out); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join(out, "example_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../internal/example/example_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(code, committed) {
		t.Errorf("sbegen output differs from the committed example package")
	}
}

func TestRunRefusesBadSchema(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "bad.xml")
	src := `<messageSchema package="bad" id="1" byteOrder="bigEndian"><types/></messageSchema>`
	if err := os.WriteFile(schema, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(schema, filepath.Join(dir, "out"))
	if err == nil || !strings.Contains(err.Error(), "bad.xml: messageSchema: byteOrder") {
		t.Fatalf("run = %v, want a refusal naming the file and the element", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(statErr) {
		t.Errorf("a refused schema created the output folder")
	}
	if err := run(filepath.Join(dir, "missing.xml"), dir); err == nil {
		t.Errorf("run on a missing schema succeeded")
	}
}
