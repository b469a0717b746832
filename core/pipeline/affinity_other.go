//go:build !linux

package pipeline

import "errors"

// pinThread is Linux-only; elsewhere the matcher's thread is left to the
// operating system.
func pinThread(cpu int) error {
	return errors.New("pinning a thread to a CPU is supported on Linux only")
}

// CheckCPU refuses every CPU: pinning is Linux-only.
func CheckCPU(cpu int) error {
	return pinThread(cpu)
}
