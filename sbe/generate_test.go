package sbe_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fixvenue/fixvenue/sbe/internal/gen"
)

// generated lists every schema and the folder of its committed package, as
// the //go:generate lines in generate.go do.
var generated = []struct{ schema, out string }{
	{"../schemas/venue.xml", "venue"},
	{"../schemas/marketdata.xml", "marketdata"},
	{"testdata/example.xml", "internal/example"},
}

// TestGeneratedIsCurrent runs the generator on every schema, into a
// temporary folder, and fails when the committed file differs: a schema or
// generator change must be followed by `go generate ./sbe/...`.
func TestGeneratedIsCurrent(t *testing.T) {
	for _, g := range generated {
		t.Run(g.out, func(t *testing.T) {
			src, err := os.ReadFile(g.schema)
			if err != nil {
				t.Fatal(err)
			}
			pkg, code, err := gen.Generate(src, filepath.Base(g.schema))
			if err != nil {
				t.Fatal(err)
			}
			// Write and read back through a temporary folder, as sbegen does.
			tmp := filepath.Join(t.TempDir(), gen.FileName(pkg))
			if err := os.WriteFile(tmp, code, 0o644); err != nil {
				t.Fatal(err)
			}
			fresh, err := os.ReadFile(tmp)
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(filepath.Join(g.out, gen.FileName(pkg)))
			if err != nil {
				t.Fatalf("%v (run go generate ./sbe/...)", err)
			}
			if !bytes.Equal(fresh, committed) {
				t.Errorf("%s/%s is stale: run go generate ./sbe/...", g.out, gen.FileName(pkg))
			}
		})
	}
}

// TestGenerateDirectivesMatch keeps generate.go and the table above in step.
func TestGenerateDirectivesMatch(t *testing.T) {
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^//go:generate go run \./cmd/sbegen -schema (\S+) -out (\S+)$`)
	found := re.FindAllStringSubmatch(string(src), -1)
	if len(found) != len(generated) {
		t.Fatalf("generate.go has %d sbegen directives, the test lists %d", len(found), len(generated))
	}
	for i, m := range found {
		if m[1] != generated[i].schema || m[2] != generated[i].out {
			t.Errorf("directive %d generates %s into %s, the test expects %s into %s",
				i, m[1], m[2], generated[i].schema, generated[i].out)
		}
	}
}
