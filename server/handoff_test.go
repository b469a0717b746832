package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestInheritedListenerLeavesOthersAlone: a descriptor this process opened
// (closed on exec, as Go opens every one) or one that does not listen is
// refused and left open, so that a FIXVENUE_CLUSTER_SOCKETS naming it
// closes nothing under the process; a listening socket handed across exec
// (close-on-exec off) is taken (docs/ARCHITECTURE.md, "Losing leadership").
func TestInheritedListenerLeavesOthersAlone(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "own"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File() // a duplicate, closed on exec
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	for _, fd := range []uintptr{f.Fd(), lf.Fd()} {
		if _, err := InheritedListener(fd, "admin"); err == nil {
			t.Fatalf("descriptor %d, opened by this process, taken as handed over", fd)
		}
		if _, err := unix.FcntlInt(fd, unix.F_GETFD, 0); err != nil {
			t.Fatalf("descriptor %d closed by the refusal: %v", fd, err)
		}
	}
	// The file does not listen, even with close-on-exec off.
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := InheritedListener(f.Fd(), "admin"); err == nil {
		t.Fatal("a file taken as a listening socket")
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); err != nil {
		t.Fatalf("the file closed by the refusal: %v", err)
	}
	// As a deposed node hands it over (sharedListener.execFile): dup
	// leaves close-on-exec off, and InheritedListener takes the copy.
	handed, err := unix.Dup(int(lf.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := InheritedListener(uintptr(handed), "admin")
	if err != nil {
		unix.Close(handed)
		t.Fatalf("a listening socket handed over refused: %v", err)
	}
	defer got.Close()
	if got.Addr().String() != ln.Addr().String() {
		t.Fatalf("took %v, want %v", got.Addr(), ln.Addr())
	}
}
