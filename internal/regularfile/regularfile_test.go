package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestStat(t *testing.T) {
	dir := t.TempDir()
	file, pipe, sub := filepath.Join(dir, "file"), filepath.Join(dir, "pipe"), filepath.Join(dir, "sub")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if st, err := Stat(file); err != nil || st.Size() != 1 {
		t.Fatalf("a regular file: %v, %v", st, err)
	}
	for path, kind := range map[string]string{pipe: "a named pipe (FIFO)", sub: "a directory"} {
		want := path + " is " + kind + ", not a regular file: move it out of " + dir
		if _, err := Stat(path); err == nil || err.Error() != want {
			t.Errorf("Stat(%s): %v, want %q", path, err, want)
		}
	}
	if _, err := Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
}

func TestReadMax(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	if err := os.WriteFile(small, []byte("four"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte("five!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadMax(small, 4); err != nil || string(b) != "four" {
		t.Fatalf("ReadMax of a file at its bound: %q, %v", b, err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadMax(big, 4); !errors.As(err, &tooLarge) || tooLarge.Size != 5 || tooLarge.Max != 4 ||
		err.Error() != big+" holds more than 4 bytes" {
		t.Fatalf("ReadMax of a file beyond its bound: %v", err)
	}
	var notRegular *NotRegularError
	if _, err := ReadMax(dir, 4); !errors.As(err, &notRegular) || err.Error() != dir+" is a directory, not a regular file" {
		t.Fatalf("ReadMax of a directory: %v", err)
	}
	if _, err := ReadMax(filepath.Join(dir, "missing"), 4); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadMax of a missing file: %v", err)
	}
}
