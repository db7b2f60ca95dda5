package httpexec

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// dialer opens the connections of one Client and keeps track of every
// one still open, so that abort can end them all at once. Safe for
// concurrent use.
type dialer struct {
	d       net.Dialer
	timeout time.Duration // a dial's bound when the caller gives none
	ctx     context.Context
	cancel  context.CancelFunc // cancels ctx: in abort
	dials   atomic.Int64       // connections opened
	aborted atomic.Bool

	mu    sync.Mutex // guards conns and, with aborted, the adding to it
	conns map[*conn]struct{}
}

func newDialer(timeout time.Duration) *dialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &dialer{
		d:       net.Dialer{KeepAlive: 30 * time.Second},
		timeout: timeout,
		ctx:     ctx,
		cancel:  cancel,
		conns:   make(map[*conn]struct{}),
	}
}

// dial opens a TCP connection to addr from local (nil: the system
// chooses) within timeout (d.timeout when 0) and ctx. It fails with
// ErrAborted once abort was called.
func (d *dialer) dial(ctx context.Context, local *net.TCPAddr, addr string, timeout time.Duration) (*conn, error) {
	if d.aborted.Load() {
		return nil, ErrAborted
	}
	if timeout <= 0 {
		timeout = d.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	nd := d.d
	if local != nil { // a nil *TCPAddr in the interface would not be nil
		nd.LocalAddr = local
	}
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, d: d, dialed: start}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
			c.peekFn = c.peek // bound once: a method value made per check would allocate
		}
	}
	d.mu.Lock()
	if d.aborted.Load() {
		d.mu.Unlock()
		_ = nc.Close()
		return nil, ErrAborted
	}
	d.conns[c] = struct{}{}
	d.mu.Unlock()
	d.dials.Add(1)
	return c, nil
}

// abort closes every connection open and makes later dials fail: the
// requests in flight on them fail at once.
func (d *dialer) abort() {
	d.mu.Lock()
	d.aborted.Store(true)
	conns := make([]*conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	d.cancel()
	for _, c := range conns {
		_ = c.Close()
	}
}

// conn is a connection dialer opened. Read keeps its last error for the
// fasthttp transport, which owns the connection while it carries a
// request; exchanges and readErr belong to that owner.
type conn struct {
	net.Conn
	d      *dialer
	dialed time.Time // when its dial began
	// exchanges counts the whole request-response exchanges it carried.
	exchanges int
	// readErr is the last error Read returned: fasthttp reports any error
	// before a response's first byte as io.EOF, and the transport wants
	// to tell a reset from a close.
	readErr error

	raw     syscall.RawConn // nil where the stale check is not possible
	peekFn  func(fd uintptr) bool
	peekN   int
	peekErr error
	peekBuf [1]byte
	closed  atomic.Bool
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.readErr = err
	}
	return n, err
}

// Close closes the connection and forgets it; safe to call more than
// once and concurrently (abort may close it under its owner).
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
