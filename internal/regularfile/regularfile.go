package regularfile

import (
	"fmt"
	"io"
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

// NotRegularError refuses a file named by the configuration (StatMax,
// ReadMax) that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// TooLargeError refuses a file larger than its bound (StatMax, ReadMax).
// Size is its size, or -1 when it grew past Max after its Stat.
type TooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s holds more than %d bytes", e.Path, e.Max)
}

// StatMax is os.Stat of path, refusing a file that is not a regular file
// (*NotRegularError) or holds more than max bytes (*TooLargeError).
func StatMax(path string, max int64) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	case st.Size() > max:
		return nil, &TooLargeError{Path: path, Size: st.Size(), Max: max}
	}
	return st, nil
}

// ReadMax reads the file at path whole, refusing it as StatMax does before
// it is opened (opening a named pipe waits for a writer, and a device such
// as /dev/zero never ends), and refusing one that grew past max since.
func ReadMax(path string, max int64) ([]byte, error) {
	if _, err := StatMax(path, max); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: path, Size: -1, Max: max}
	}
	return b, nil
}
