//go:build !linux

package edge

// peerGone is known only on Linux: elsewhere a connection ends when its
// read or a write fails.
func (c *Conn) peerGone() bool { return false }
