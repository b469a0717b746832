package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fixvenue/fixvenue/sbe/internal/gen"
)

func main() {
	schema := flag.String("schema", "", "SBE XML schema to read")
	out := flag.String("out", "", "directory of the generated package")
	flag.Parse()
	if *schema == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: sbegen -schema file.xml -out dir")
		os.Exit(2)
	}
	if err := run(*schema, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sbegen:", err)
		os.Exit(1)
	}
}

func run(schema, out string) error {
	src, err := os.ReadFile(schema)
	if err != nil {
		return err
	}
	pkg, code, err := gen.Generate(src, filepath.Base(schema))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, gen.FileName(pkg)), code, 0o644)
}
