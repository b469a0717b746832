package spec

import (
	_ "embed"
	"os"
	"path/filepath"
)

//go:embed FIX44.xml
var fix44 []byte

// FIX44 returns the embedded FIX 4.4 data dictionary.
func FIX44() []byte { return fix44 }

// WriteFIX44 writes the dictionary to dir/FIX44.xml (creating dir) and returns the path.
func WriteFIX44(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "FIX44.xml")
	if old, err := os.ReadFile(p); err == nil && string(old) == string(fix44) {
		return p, nil
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, fix44, 0o644); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
}
