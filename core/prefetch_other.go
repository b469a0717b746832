//go:build !amd64

package core

import "unsafe"

// prefetch does nothing on this architecture: Matcher.Prefetch then only
// costs the hashing.
func prefetch(unsafe.Pointer) {}
