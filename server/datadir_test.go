package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirHeldByOneServer: a second server on a data directory in use is
// refused before it opens anything, with an error naming the holder; once
// the first closes, the directory can be served again.
func TestDataDirHeldByOneServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir, "")
	first, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	journalFiles := func() string {
		names, _ := filepath.Glob(filepath.Join(dir, "journal", "*"))
		return strings.Join(names, ",")
	}
	before := journalFiles()
	_, err = New(testConfig(t, dir, ""), Options{})
	want := fmt.Sprintf("data dir %s is in use by fixvenue pid %d", dir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second server on the same data dir: %v, want an error with %q", err, want)
	}
	if after := journalFiles(); after != before {
		t.Fatalf("the refused server touched the journal: %s, then %s", before, after)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := New(testConfig(t, dir, ""), Options{})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLockDataDirReleasedOnFailedStart: a server whose start-up fails after
// taking the lock gives it back.
func TestLockDataDirReleasedOnFailedStart(t *testing.T) {
	dir := t.TempDir()
	// A journal directory that is a file: opening the journal fails.
	if err := os.WriteFile(filepath.Join(dir, "journal"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(testConfig(t, dir, ""), Options{}); err == nil {
		t.Fatal("a server started on a journal that is a file")
	}
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("the failed start kept the lock: %v", err)
	}
	l.release()
	l.release() // a second release is a no-op
}
