//go:build !unix

package httpexec

// staleCheck is whether the idle check of kept connections runs here.
const staleCheck = false

// stale cannot look at the socket without consuming from it on this
// system, so it never finds a kept connection stale. A request on a
// connection the server closed while idle then fails (Closed or Reset) and
// is not sent again; and an unsolicited response the server sent on an
// idle connection (a 408 before closing) is read as the answer to the next
// request on it.
func (c *conn) stale() error { return nil }

func (c *conn) peek(uintptr) bool { return true }
