//go:build linux

package httpload

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// econn is one connection slot of an event loop: a non-blocking socket
// (or none), and the request it carries. Owned by its loop's goroutine.
type econn struct {
	slot       int32 // index in the loop's conns, in its epoll events
	gen        int32 // bumped for each socket: events of an old one are dropped
	fd         int   // -1 without a socket
	connecting bool
	used       bool // the socket carried a whole exchange
	busy       bool // a request is in flight
	attempt    int  // 1 when sent again on a new connection

	at, start, deadline int64 // intended, sent, timeout instants, since the start
	key                 string
	out                 []byte // the request's bytes a short write left
	in                  []byte // bytes read and not consumed: a partial line
	parser              respParser
}

// errTimedOut fails a request past its deadline.
var errTimedOut = os.ErrDeadlineExceeded

// Epoll event sets of a socket.
const (
	evRead    = syscall.EPOLLIN | syscall.EPOLLRDHUP
	evConnect = evRead | syscall.EPOLLOUT
)

func (l *evLoop) newConn() *econn {
	c := &econn{slot: int32(len(l.conns)), fd: -1}
	l.conns = append(l.conns, c)
	return c
}

// send sends a request for key, due at at (-1: now, the closed loop), on
// c, which is idle.
func (l *evLoop) send(c *econn, at int64, key string) {
	now := l.clock()
	c.key, c.start, c.attempt = key, now, 0
	c.at = at
	if at < 0 {
		c.at = now
	}
	c.deadline = now + int64(l.p.cfg.Timeout)
	c.busy = true
	l.busy++
	l.transmit(c)
}

// transmit dials if c has no socket and writes c's request.
func (l *evLoop) transmit(c *econn) {
	c.parser.reset(l.p.t.noBody, l.p.wantPolicy.Load())
	if c.fd < 0 {
		if err := l.dial(c); err != nil {
			l.fail(c, err)
			return
		}
		if c.connecting {
			return // written once connected
		}
	}
	l.write(c)
}

// dial opens c's socket and starts connecting it.
func (l *evLoop) dial(c *econn) error {
	fd, err := syscall.Socket(l.e.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	c.fd, c.used, c.gen = fd, false, c.gen+1
	events := uint32(evRead)
	switch err := syscall.Connect(fd, l.sa); err {
	case nil:
		l.dials.Add(1)
	case syscall.EINPROGRESS, syscall.EINTR:
		c.connecting, events = true, evConnect
	default:
		l.closeConn(c)
		return os.NewSyscallError("connect", err)
	}
	if err := l.ctl(c, syscall.EPOLL_CTL_ADD, events); err != nil {
		l.closeConn(c)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// ctl adds c's socket to the loop's epoll set or changes its events.
func (l *evLoop) ctl(c *econn, op int, events uint32) error {
	ev := syscall.EpollEvent{Events: events, Fd: c.slot, Pad: c.gen}
	return syscall.EpollCtl(l.epfd, op, c.fd, &ev)
}

// event handles one epoll event.
func (l *evLoop) event(ev syscall.EpollEvent) {
	if ev.Fd == evfdTag {
		var b [8]byte
		_, _ = rawRead(l.evfd, b[:])
		return
	}
	c := l.conns[ev.Fd]
	if c.gen != ev.Pad || c.fd < 0 {
		return // a closed socket's
	}
	if c.connecting {
		l.connected(c, ev.Events)
		return
	}
	if ev.Events&syscall.EPOLLOUT != 0 && len(c.out) > 0 && !l.writeMore(c) {
		return
	}
	if ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		l.readable(c)
	}
}

// connected ends c's connect: the request is written, or fails.
func (l *evLoop) connected(c *econn, events uint32) {
	soErr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	switch {
	case err != nil:
		l.fail(c, os.NewSyscallError("getsockopt", err))
		return
	case soErr != 0:
		l.fail(c, os.NewSyscallError("connect", syscall.Errno(soErr)))
		return
	case events&syscall.EPOLLOUT == 0 && events&(syscall.EPOLLHUP|syscall.EPOLLERR) != 0:
		l.fail(c, os.NewSyscallError("connect", syscall.ECONNRESET))
		return
	case events&syscall.EPOLLOUT == 0:
		return // not yet
	}
	c.connecting = false
	l.dials.Add(1)
	if err := l.ctl(c, syscall.EPOLL_CTL_MOD, evRead); err != nil {
		l.fail(c, os.NewSyscallError("epoll_ctl", err))
		return
	}
	l.write(c)
}

// write writes c's request in one write; what a short write leaves is
// written when the socket is writable again.
func (l *evLoop) write(c *econn) {
	l.wbuf = l.p.fast.build(l.wbuf[:0], c.key)
	n, errno := rawWrite(c.fd, l.wbuf)
	switch errno {
	case 0:
	case syscall.EAGAIN, syscall.EINTR:
		n = 0
	default:
		l.fail(c, os.NewSyscallError("write", errno))
		return
	}
	if n < len(l.wbuf) {
		c.out = append(c.out[:0], l.wbuf[n:]...)
		if err := l.ctl(c, syscall.EPOLL_CTL_MOD, evConnect); err != nil {
			l.fail(c, os.NewSyscallError("epoll_ctl", err))
		}
	}
}

// writeMore writes what a short write left; false when c failed.
func (l *evLoop) writeMore(c *econn) bool {
	n, errno := rawWrite(c.fd, c.out)
	switch errno {
	case 0:
	case syscall.EAGAIN, syscall.EINTR:
		return true
	default:
		l.fail(c, os.NewSyscallError("write", errno))
		return false
	}
	c.out = c.out[:copy(c.out, c.out[n:])]
	if len(c.out) == 0 {
		if err := l.ctl(c, syscall.EPOLL_CTL_MOD, evRead); err != nil {
			l.fail(c, os.NewSyscallError("epoll_ctl", err))
			return false
		}
	}
	return true
}

// readable reads what arrived on c and parses it. On an idle connection
// it can only be the server closing it (or bytes nobody asked for): the
// connection is closed, to be dialed again when next needed.
func (l *evLoop) readable(c *econn) {
	if !c.busy {
		l.closeConn(c)
		return
	}
	k := copy(l.rbuf, c.in)
	m, errno := rawRead(c.fd, l.rbuf[k:])
	switch {
	case errno == syscall.EAGAIN || errno == syscall.EINTR:
		return
	case errno != 0:
		l.fail(c, os.NewSyscallError("read", errno))
		return
	case m == 0: // the end of the connection
		if done, err := c.parser.eof(); !done {
			l.fail(c, err)
			return
		}
		l.answered(c)
		return
	}
	data := l.rbuf[:k+m]
	n, done, err := c.parser.feed(data)
	if err != nil {
		l.fail(c, err)
		return
	}
	c.in = append(c.in[:0], data[n:]...)
	if done {
		l.answered(c)
	}
}

// answered records c's response. The connection stays open if the
// response says so, nothing followed it, and the request was written
// whole: a server may answer early (a 429 after the headers of a large
// POST), and the next request written behind the rest of this one's body
// would be read as that body.
func (l *evLoop) answered(c *econn) {
	c.used = true
	if !c.parser.keepAlive || len(c.in) > 0 || len(c.out) > 0 {
		l.closeConn(c)
	}
	l.finish(c, c.parser.resp, nil)
}

// fail ends c's request with err, and closes c. A request that fails on
// a reused connection before any byte of its response came back is sent
// once more on a new connection: the server had closed the idle
// connection (as the workers do).
func (l *evLoop) fail(c *econn, err error) {
	retry := c.used && !c.parser.started && c.attempt == 0 && !l.p.stopping.Load() && classify(err) != errTimeout
	l.closeConn(c)
	if retry {
		c.attempt = 1
		l.transmit(c)
		return
	}
	l.finish(c, response{}, err)
}

// finish records c's request, answered with resp or failed with err, and
// puts c on the idle stack.
func (l *evLoop) finish(c *econn, resp response, err error) {
	done := l.clock()
	r := l.p.outcome(time.Duration(c.at), time.Duration(c.start), time.Duration(done), c.key, resp, err)
	l.recs = append(l.recs, r)
	l.n++
	c.busy, c.key = false, ""
	l.busy--
	l.idle = append(l.idle, c)
}

// closeConn closes c's socket, if any.
func (l *evLoop) closeConn(c *econn) {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd) // which takes it out of the epoll set
		c.fd = -1
	}
	c.used, c.connecting = false, false
	c.in, c.out = c.in[:0], c.out[:0]
}

// rawRead and rawWrite are read(2) and write(2) on a non-blocking
// descriptor, which never block: without the runtime's system call
// bookkeeping.
func rawRead(fd int, b []byte) (int, syscall.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), errno
}

func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), errno
}

// epollWait is epoll_wait on epfd for at most ms milliseconds (-1:
// until an event). With ms 0 it does not block, and skips the runtime's
// system call bookkeeping.
func epollWait(epfd int, events []syscall.EpollEvent, ms int) (int, error) {
	p := uintptr(unsafe.Pointer(&events[0]))
	var n uintptr
	var errno syscall.Errno
	if ms == 0 {
		n, _, errno = syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), p, uintptr(len(events)), 0, 0, 0)
	} else {
		n, _, errno = syscall.Syscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), p, uintptr(len(events)), uintptr(ms), 0, 0)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
