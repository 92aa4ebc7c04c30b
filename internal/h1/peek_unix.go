//go:build unix

package h1

import "syscall"

// peek asks the kernel, without waiting, whether an idle connection has
// been closed by the server (a read would return end of file) or carries
// bytes nobody asked for. Either way it is not used again.
func (c *conn) peek(fd uintptr) bool {
	n, _, err := syscall.Recvfrom(int(fd), c.one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.open = n <= 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
	return true
}
