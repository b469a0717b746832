package sbe_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wrapChecks are the generated methods allowed to test a length: the wraps
// (the one check of a buffer), group navigation, and the text form; so are
// package-level functions (Decode<M>, Overwrite<M>, the helpers). A field
// accessor is not among them.
var wrapChecks = map[string]bool{
	"Wrap": true, "WrapEncode": true, "WrapDecode": true,
	"EncodedLength": true, "Entry": true, "AppendText": true, "String": true,
}

// TestAccessorsHaveNoBoundsChecks compiles each generated package with the
// compiler's bounds-check report and fails when a field accessor keeps a
// bounds check: the flyweights check the buffer once, at Wrap, and every
// getter and setter must compile to the load or store alone. The one test
// allowed in an accessor is a char array getter's cut at its first NUL,
// whose position the compiler cannot know.
func TestAccessorsHaveNoBoundsChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	report := regexp.MustCompile(`^(.*_gen\.go):(\d+):\d+: Found Is(Slice)?InBounds$`)
	for _, g := range generated {
		t.Run(g.out, func(t *testing.T) {
			pkg := "github.com/fixvenue/fixvenue/sbe/" + g.out
			cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "out"),
				"-gcflags="+pkg+"=-d=ssa/check_bce/debug=1", "./"+g.out)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			var file string
			var lines []int
			for _, l := range strings.Split(string(out), "\n") {
				if m := report.FindStringSubmatch(l); m != nil {
					file = m[1]
					n, _ := strconv.Atoi(m[2])
					lines = append(lines, n)
				}
			}
			if len(lines) == 0 {
				t.Fatalf("no bounds check reported at all (not even in the wraps): is the report flag still right?\n%s", out)
			}
			funcs := enclosingFuncs(t, filepath.Join(g.out, filepath.Base(file)))
			for _, n := range lines {
				fn := funcs(n)
				if fn == nil {
					t.Errorf("line %d: bounds check outside any function", n)
					continue
				}
				if fn.Recv == nil || wrapChecks[fn.Name.Name] || returnsGroup(fn) || charGetter(fn) {
					continue
				}
				t.Errorf("line %d: accessor %s keeps a bounds check", n, fn.Name.Name)
			}
		})
	}
}

// enclosingFuncs parses a file and returns a lookup from a line to the
// function declared around it.
func enclosingFuncs(t *testing.T, path string) func(line int) *ast.FuncDecl {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return func(line int) *ast.FuncDecl {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok &&
				fset.Position(fn.Pos()).Line <= line && line <= fset.Position(fn.End()).Line {
				return fn
			}
		}
		return nil
	}
}

// returnsGroup reports whether fn returns a group view (M.G or M.GCount),
// which walks the groups before it.
func returnsGroup(fn *ast.FuncDecl) bool {
	if fn.Type.Results == nil {
		return false
	}
	id, ok := fn.Type.Results.List[0].Type.(*ast.Ident)
	return ok && strings.HasSuffix(id.Name, "Group")
}

// charGetter reports whether fn is a char array getter: no arguments, one
// []byte result.
func charGetter(fn *ast.FuncDecl) bool {
	if len(fn.Type.Params.List) != 0 || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
		return false
	}
	a, ok := fn.Type.Results.List[0].Type.(*ast.ArrayType)
	return ok && a.Len == nil && isIdent(a.Elt, "byte")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
