//go:build linux

package edge

import "golang.org/x/sys/unix"

// peerGone reports whether the client has closed (its FIN) or reset the
// connection, as the kernel knows it before anyone reads the socket: a
// poll that does not wait, and reads nothing.
func (c *Conn) peerGone() bool {
	rc, err := c.raw.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds[:], 0)
		gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	return gone
}
