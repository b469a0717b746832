package regularfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Kind names what a file of mode m is, for an error refusing one that is
// not a regular file: "a directory", "a named pipe (FIFO)", "a socket",
// "a device", or "something else".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "something else"
}

// Check refuses, naming it and what it is, a file at path (of info st)
// that is not a regular file.
func Check(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file: move it out of %s", path, Kind(st.Mode()), filepath.Dir(path))
}

// Stat is os.Stat of path, refusing what is not a regular file (Check).
func Stat(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, st); err != nil {
		return nil, err
	}
	return st, nil
}
