//go:build unix

package httpexec

import (
	"errors"
	"fmt"
	"syscall"
)

// staleCheck is whether the idle check of kept connections runs here.
const staleCheck = true

// stale reports, without blocking, whether the server closed the idle
// connection or wrote to it (an unsolicited response, such as the 408 a
// server sends before closing an idle connection): errStale then, or the
// error the connection already has (a deadline passed, closed by abort).
// It looks with a non-consuming recvfrom(MSG_PEEK) on the socket, and so
// costs one system call. Go's sockets are non-blocking, so the call
// returns EAGAIN at once when nothing came. The owner of the connection
// calls it before writing a request.
func (c *conn) stale() error {
	if c.raw == nil {
		return nil
	}
	if err := c.raw.Read(c.peekFn); err != nil {
		return err
	}
	switch {
	case c.peekErr == nil && c.peekN > 0:
		return fmt.Errorf("%w: it sent data", errStale)
	case c.peekErr == nil:
		return fmt.Errorf("%w: it closed it", errStale)
	case errors.Is(c.peekErr, syscall.EAGAIN), errors.Is(c.peekErr, syscall.EWOULDBLOCK), errors.Is(c.peekErr, syscall.EINTR):
		return nil
	}
	return fmt.Errorf("%w: %w", errStale, c.peekErr) // ECONNRESET and the like
}

// peek is the callback of stale's RawConn.Read: it is done at once,
// whatever the peek found.
func (c *conn) peek(fd uintptr) bool {
	c.peekN, _, c.peekErr = syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK)
	return true
}
