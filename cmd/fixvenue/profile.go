package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts a CPU profile and an execution trace when their
// files are named (empty: not taken) and returns the function that stops
// both and closes the files. On failure it prints why, prefixed by cmd.
func startProfiles(cmd, cpuProfile, traceFile string) (stop func(), err error) {
	stopCPU, err := startProfile(cmd, "--cpuprofile", cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		return func() {}, err
	}
	stopTrace, err := startProfile(cmd, "--trace", traceFile, trace.Start, trace.Stop)
	if err != nil {
		stopCPU()
		return func() {}, err
	}
	return func() { stopTrace(); stopCPU() }, nil
}

// startProfile creates file and has start write a profile to it; the
// returned function stops the profile and closes the file. An empty file
// name takes no profile. On failure it prints why, prefixed by cmd and the
// flag that named the file.
func startProfile(cmd, flag, file string, start func(io.Writer) error, stop func()) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err == nil {
		if err = start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", cmd, flag, err)
		return nil, err
	}
	return func() { stop(); f.Close() }, nil
}

// writeAllocsProfile writes the allocations since start (the "allocs"
// profile, sampled every runtime.MemProfileRate bytes) to file; a failure is
// printed, prefixed by cmd.
func writeAllocsProfile(cmd, file string) {
	// The profile shows the heap as of the last collection; the venue's
	// preallocated heap makes collections rare, so force one.
	runtime.GC()
	f, err := os.Create(file)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --memprofile: %v\n", cmd, err)
	}
}
