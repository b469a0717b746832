package journal

import (
	"fmt"
	"os"
	"syscall"
)

// Policy says when appended records become durable.
type Policy uint8

const (
	// PolicyBatch (the default) calls fdatasync once per flush and
	// advances the durable sequence only after it returns.
	PolicyBatch Policy = iota
	// PolicyNone never calls fdatasync for records: the durable sequence
	// advances once the write reaches the page cache. It survives kill -9
	// but not a power cut, and exists for benchmarks only; every report
	// that uses it must say so. Segment creation and rolls still sync, so
	// the journal's structure stays recoverable.
	PolicyNone
)

// policyNames maps each policy to its configuration spelling.
var policyNames = [...]string{PolicyBatch: "batch", PolicyNone: "none"}

// UnmarshalText reads the configuration spelling of a policy ("batch" or
// "none"), so that a configuration file or a flag holds a Policy directly.
func (p *Policy) UnmarshalText(b []byte) error {
	for v, name := range policyNames {
		if string(b) == name {
			*p = Policy(v)
			return nil
		}
	}
	return fmt.Errorf("journal: fsync policy %q is not batch or none", b)
}

// MarshalText returns the configuration spelling; an undefined policy is an error.
func (p Policy) MarshalText() ([]byte, error) {
	if int(p) >= len(policyNames) {
		return nil, fmt.Errorf("journal: undefined fsync policy %d", uint8(p))
	}
	return []byte(policyNames[p]), nil
}

// String returns the configuration spelling.
func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// SyncKind says what a sync call is for.
type SyncKind uint8

const (
	// SyncData makes the records of a flush durable (fdatasync).
	SyncData SyncKind = iota
	// SyncFile makes a new file durable, size and metadata included
	// (fsync): a new segment before its rename, a snapshot file.
	SyncFile
	// SyncDir makes a directory entry durable (fsync of the directory).
	SyncDir
)

// String names the kind for logs and test failures.
func (k SyncKind) String() string {
	switch k {
	case SyncData:
		return "fdatasync"
	case SyncFile:
		return "fsync"
	case SyncDir:
		return "fsync-dir"
	}
	return fmt.Sprintf("SyncKind(%d)", uint8(k))
}

// SyncFunc makes f durable. The journal calls it for every sync it needs;
// tests replace it to count, slow down or fail syncs. It must not retry a
// failed sync: after an fsync error Linux may already have dropped the
// dirty pages, so a retry that succeeds proves nothing.
type SyncFunc func(f *os.File, kind SyncKind) error

// DefaultSync is fdatasync for SyncData and fsync otherwise.
func DefaultSync(f *os.File, kind SyncKind) error {
	if kind == SyncData {
		fd := int(f.Fd())
		for {
			err := syscall.Fdatasync(fd)
			if err != syscall.EINTR {
				return err
			}
		}
	}
	return f.Sync()
}
