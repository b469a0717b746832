package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts a CPU profile and an execution trace when their
// files are named (empty: not taken) and returns the function that stops
// both and closes the files. On failure it prints why, prefixed by cmd.
func startProfiles(cmd, cpuProfile, traceFile string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: --cpuprofile: %v\n", cmd, err)
			return stop, err
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: --trace: %v\n", cmd, err)
			stop()
			return func() {}, err
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	return stop, nil
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
