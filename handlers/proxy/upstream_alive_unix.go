//go:build unix

package proxy

import (
	"syscall"
)

// alive reports whether an idle upstream connection is still open: the
// server has neither closed it (a FIN waits to be read) nor sent anything
// unasked. It peeks without blocking, one system call, and is asked only
// before a request that must not be retried (see lean.go).
func (c *upConn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := true
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		for {
			_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch rerr {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				// Nothing to read: open and quiet.
			default:
				open = false // EOF, unexpected bytes, or an error
			}
			return true // never wait for readability
		}
	})
	return err == nil && open
}
