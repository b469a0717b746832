package core

import "unsafe"

// prefetch asks the CPU to bring the cache line at p into its caches
// (PREFETCHT0) and returns at once. It never faults and changes nothing a
// program can observe.
//
//go:noescape
func prefetch(p unsafe.Pointer)
