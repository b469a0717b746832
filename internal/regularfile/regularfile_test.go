package regularfile

import (
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
