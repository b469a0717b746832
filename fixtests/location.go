package fixtests

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// QuickFIXDefsEnv names the environment variable that locates the QuickFIX
// FIX 4.4 server scripts. They are QuickFIX's files, read where they lie and
// never copied into this repository, so someone outside can point the suite
// at a QuickFIX checkout (…/_test/definitions/server/fix44).
const QuickFIXDefsEnv = "FIXVENUE_QUICKFIX_DEFS"

// QuickFIXDefsDefault is where the scripts are when the variable is unset,
// relative to the module root (the folder holding go.mod).
const QuickFIXDefsDefault = "../shared/conformance/quickfix-fix44"

// moduleRootDepthMax bounds the walk up from the working directory.
const moduleRootDepthMax = 64

// QuickFIXDefsDir returns the folder of the QuickFIX scripts: the value of
// FIXVENUE_QUICKFIX_DEFS when set, else QuickFIXDefsDefault resolved against
// the module root found above the working directory. It does not check that
// the folder exists; RunDir reports a missing folder and skips it.
func QuickFIXDefsDir() (string, error) {
	if v := os.Getenv(QuickFIXDefsEnv); v != "" {
		return v, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("%w; set %s to the scripts' folder", err, QuickFIXDefsEnv)
	}
	return filepath.Clean(filepath.Join(root, QuickFIXDefsDefault)), nil
}

// ModuleRoot returns the nearest folder at or above dir that holds a go.mod.
func ModuleRoot(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	dir = start
	for range moduleRootDepthMax {
		_, err := os.Stat(filepath.Join(dir, "go.mod"))
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("no go.mod at or above %s", start)
}
