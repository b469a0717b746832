package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fixvenue/fixvenue/config"
	"github.com/fixvenue/fixvenue/core/pipeline"
	"github.com/fixvenue/fixvenue/internal/regularfile"
	"github.com/fixvenue/fixvenue/ops"
)

// dataDirLockFile is the file in a data directory that its process holds an
// exclusive lock on (flock) while it runs.
const dataDirLockFile = "LOCK"

// dataDirLock is one process's hold on a data directory. Two venues, or two
// cluster nodes, on one directory would both append to its journal and FIX
// stores and corrupt them (docs/ARCHITECTURE.md, "One process per data
// directory"). The kernel drops the lock when the process dies, kill -9
// included, and at exec (the file is close-on-exec), so a restart never finds
// a stale lock; the file stays and says which process last held it.
type dataDirLock struct{ f *os.File }

// lockDataDir makes dir if it is missing and takes its lock without
// waiting: a directory another process holds is refused with an error that
// names it.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, dataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("data dir %s is in use by %s: one venue or cluster node per data directory", dir, who)
		}
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(fmt.Appendf(nil, "fixvenue pid %d\n", os.Getpid()), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release gives the directory up; nil and repeated calls are no-ops.
func (l *dataDirLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// dataDirFreeBytes is the space left to the venue's files on the data
// directory's file system (statfs: the blocks available to an unprivileged
// process), for fixvenue_data_dir_free_bytes: the alert to raise well
// before the disk refuses a write and the venue halts (docs/ARCHITECTURE.md,
// "A venue that failed"). -1 when it cannot be read.
func dataDirFreeBytes(dir string) float64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return float64(st.Bavail) * float64(st.Bsize)
}

// checkTLSFiles loads the certificates and keys the configuration names
// (FIX and admin listeners), so that a missing or bad one stops the start
// before anything is written.
func checkTLSFiles(cfg *config.Config) error {
	for _, l := range []struct{ key, cert, keyFile, ca string }{
		{"fix", cfg.FIX.TLSCertFile, cfg.FIX.TLSKeyFile, cfg.FIX.TLSClientCAFile},
		{"admin", cfg.Admin.TLSCertFile, cfg.Admin.TLSKeyFile, cfg.Admin.TLSClientCAFile},
	} {
		for _, f := range []struct{ key, path string }{{l.key + ".tls_cert_file", l.cert}, {l.key + ".tls_key_file", l.keyFile},
			{l.key + ".tls_client_ca_file", l.ca}} {
			if err := checkNamedFile(f.key, f.path); err != nil {
				return err
			}
		}
		if l.cert != "" {
			if _, err := tls.LoadX509KeyPair(l.cert, l.keyFile); err != nil {
				return fmt.Errorf("%s.tls_cert_file, %s.tls_key_file: %w", l.key, l.key, err)
			}
		}
		if l.ca != "" {
			b, err := os.ReadFile(l.ca)
			if err != nil {
				return fmt.Errorf("%s.tls_client_ca_file: %w", l.key, err)
			}
			// A file of no certificate (a key, say) was taken here and
			// refused only when the listener was made, after the replay,
			// as "fix.addr: edge: TLS client CA … no certificate".
			if !x509.NewCertPool().AppendCertsFromPEM(b) {
				return fmt.Errorf("%s.tls_client_ca_file: %s holds no PEM certificate", l.key, l.ca)
			}
		}
	}
	return checkExportFiles(&cfg.Export)
}

// checkDataDirFiles refuses a file of the data directory the start reads
// (the terms record, the schedule's progress and phases, the end-of-day
// mark, the disabled sessions) that is there but is not a regular file:
// reading a named pipe waits for a writer for ever, so the start hung
// without a word (journal/doc.go, "Segment files", says the same of the
// journal's files).
func checkDataDirFiles(dir string) error {
	for _, name := range []string{termsRecordFile, instrumentRecordFile, ops.ScheduleStateFile, ops.PhasesFile,
		ops.EndOfDayPendingFile, disabledSessionsFile} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if _, err := regularfile.Stat(path); err != nil {
			return err
		}
	}
	return nil
}

// checkMatcherCPU refuses an engine.matcher_cpu the process may not run
// on (a CPU the machine lacks, or one its cpuset leaves out): the pin then
// failed with a warning while the start-up line and
// fixvenue_matcher_thread_info said the matcher was pinned to it (README,
// "The matcher's thread").
func checkMatcherCPU(cfg *config.Config) error {
	mt := cfg.Engine.MatcherThread(config.UsableCPUs())
	if !mt.Pinned {
		return nil
	}
	if err := pipeline.CheckCPU(mt.CPU); err != nil {
		return fmt.Errorf("engine.matcher_cpu: %w", err)
	}
	return nil
}

// checkExportFiles checks the export's TLS and credentials files as the
// listeners' are: at the start, naming the key. The NATS client reads them
// at each connection, so a missing one showed only as an export paused
// for ever.
func checkExportFiles(e *config.Export) error {
	if !e.Enabled {
		return nil
	}
	for _, f := range []struct{ key, path string }{{"export.tls_cert_file", e.TLSCertFile}, {"export.tls_key_file", e.TLSKeyFile},
		{"export.tls_ca_file", e.TLSCAFile}, {"export.creds_file", e.CredsFile}} {
		if err := checkNamedFile(f.key, f.path); err != nil {
			return err
		}
	}
	if e.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(e.TLSCertFile, e.TLSKeyFile); err != nil {
			return fmt.Errorf("export.tls_cert_file, export.tls_key_file: %w", err)
		}
	}
	if e.TLSCAFile != "" {
		b, err := os.ReadFile(e.TLSCAFile)
		if err != nil {
			return fmt.Errorf("export.tls_ca_file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return fmt.Errorf("export.tls_ca_file: %s holds no PEM certificate", e.TLSCAFile)
		}
	}
	if e.CredsFile != "" {
		if _, err := os.ReadFile(e.CredsFile); err != nil {
			return fmt.Errorf("export.creds_file: %w", err)
		}
	}
	return nil
}

// namedFileBytesMax bounds a certificate, key, CA or credentials file the
// configuration names: a CA bundle of every public root is under 1 MiB.
const namedFileBytesMax = 16 << 20

// checkNamedFile refuses, naming key, a file the configuration names (path;
// "" for none) that is not a regular file or is larger than
// namedFileBytesMax, as the configuration file itself is (config/doc.go):
// each is read whole, so /dev/zero grew the process until it ran out of
// memory, and a named pipe no one wrote to hung the start without a word.
// A file that cannot be read is left to its reader, which names the error.
func checkNamedFile(key, path string) error {
	if path == "" {
		return nil
	}
	var notRegular *regularfile.NotRegularError
	var big *regularfile.TooLargeError
	switch _, err := regularfile.StatMax(path, namedFileBytesMax); {
	case errors.As(err, &notRegular):
		return fmt.Errorf("%s: %w", key, err)
	case errors.As(err, &big):
		return fmt.Errorf("%s: %s holds %d bytes, more than such a file may (%d)", key, path, big.Size, namedFileBytesMax)
	}
	return nil
}
