package durable

import (
	"os"
	"path/filepath"
)

// WriteFile replaces the small file at path with data (created with perm):
// temporary file, fsync, rename, directory fsync, so that a crash leaves
// the old or the new content. A
// write that fails (a full disk) removes the temporary file it created:
// left behind, it held the disk space a full disk lacked, and every failed
// start added a stale file to the data directory. One it could not open
// (a directory there) is not its own, and is left alone.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
