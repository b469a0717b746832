package durable

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// writeFileChildEnv names the directory the child process of
// TestWriteFileRemovesItsTemporaryFile writes into, under a file
// size limit.
const writeFileChildEnv = "FIXVENUE_WRITEFILE_CHILD_DIR"

// TestWriteFileRemovesItsTemporaryFile: a write that fails leaves
// neither the temporary file nor a change of the file. Its write refused
// (a file size limit, in a child process: as root, permissions stop no
// write; the disk full the same way), then its rename (a directory where
// the file goes): the temporary file is gone each time, where a failed
// start on a full disk left terms.json.tmp in the data directory. A
// temporary path the writer could not open (a directory) is not its own
// and stays.
func TestWriteFileRemovesItsTemporaryFile(t *testing.T) {
	if dir := os.Getenv(writeFileChildEnv); dir != "" {
		// The child: every write past 16 bytes fails (EFBIG; the Go runtime
		// ignores SIGXFSZ).
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 16, Max: 16}); err != nil {
			t.Fatal(err)
		}
		err := WriteFile(filepath.Join(dir, "terms.json"), bytes.Repeat([]byte("x"), 4096), 0o640)
		if !errors.Is(err, syscall.EFBIG) {
			t.Fatalf("a write past the file size limit: %v, want EFBIG", err)
		}
		return
	}
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "terms.json")
	if err := WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileRemovesItsTemporaryFile$", "-test.count=1")
	cmd.Env = append(os.Environ(), writeFileChildEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child's write: %v\n%s", err, out)
	}
	wantOnly := func(what string, names ...string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if len(got) != len(names) {
			t.Fatalf("after %s the directory holds %v, want %v", what, got, names)
		}
		for i := range names {
			if got[i] != names[i] {
				t.Fatalf("after %s the directory holds %v, want %v", what, got, names)
			}
		}
	}
	wantOnly("a write refused", "terms.json")
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Fatalf("the file after a write refused: %q %v, want the old content", b, err)
	}

	// A directory where the file goes: the rename fails.
	target := filepath.Join(dir, "sessions.disabled")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("[]"), 0o640); err == nil {
		t.Fatal("a file written over a directory")
	}
	wantOnly("a rename refused", "sessions.disabled", "terms.json")

	// A directory where the temporary file goes (tests block a record's
	// writes so) is not the writer's: it stays.
	blocked := filepath.Join(dir, "terms.json.tmp")
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o640); err == nil {
		t.Fatal("a file written through a directory at its temporary path")
	}
	wantOnly("an open refused", "sessions.disabled", "terms.json", "terms.json.tmp")
}
