//go:build linux

package httpload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// epollSupported: the epoll engine is Linux's.
const epollSupported = true

// Sizes and periods of the event loops.
const (
	// loopBufSize is a loop's read buffer: a partial line of up to
	// readBufSize bytes carried over, and room to read after it.
	loopBufSize = 64 << 10
	// maxEvents bounds the events one epoll_wait returns.
	maxEvents = 256
	// keyBatch is how many keys a closed loop takes from the stream at
	// once.
	keyBatch = 32
	// evfdTag marks the eventfd's events (connections are numbered from 0).
	evfdTag = -1
	// scanMin and scanMax bound how often a loop looks for requests past
	// their timeout: Timeout/20 in between.
	scanMin = time.Millisecond
	scanMax = 100 * time.Millisecond
)

// epollEngine drives the fast client's connections from a few event
// loops, as wrk does: each loop (a goroutine) owns a share of the
// connections as non-blocking sockets and waits for all of them in one
// epoll_wait, so that a request costs a write, a read and a share of an
// epoll_wait, and no goroutine switch. The scheduler hands each arrival
// to the loop with the fewest requests outstanding, through that loop's
// queue, and writes the loop's eventfd only when the loop sleeps. Within
// a loop, arrivals wait in order for a connection: the one that went idle
// last, or a new one while the loop may open more (the pool's rule:
// minWorkers at once, then one per spawnEvery, across the loops).
//
// The measures are the workers': latency from the intended instant,
// service time from the send, a request sent once more on a new
// connection when a kept-alive one fails before any byte of its response,
// Timeout from the send (checked every Timeout/20, within [scanMin,
// scanMax]: a request times out between 1 and 1.05 Timeout). Each loop
// leaves its records in its recBuf, with the floor protocol: a loop's
// floor is the clock read at the start of each round of work, which every
// record of the round comes after, and idleFloor while it waits.
//
// dispatch, wakeAll, close and connections are safe for concurrent use;
// dispatch is the scheduler's only.
type epollEngine struct {
	p         *pass
	sa        syscall.Sockaddr
	family    int
	scanEvery int64 // ns
	loops     []*evLoop
	handed    []int64      // per loop: arrivals dispatch gave it; the scheduler's
	slots     atomic.Int64 // connections (slots) made, across the loops
	lastSpawn atomic.Int64 // when the last slot was made, since the start
	closing   atomic.Bool
}

// newEpollEngine resolves the target's address and makes the loops'
// epoll and eventfd descriptors; it starts nothing. An error (the address
// does not resolve, no descriptors left) leaves the workers to dial.
func newEpollEngine(p *pass) (*epollEngine, error) {
	ip, port, err := pickAddr(p.ctx, p.t.addr, p.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	e := &epollEngine{p: p}
	switch {
	case ip.IP == nil || ip.IP.Equal(net.IPv4zero):
		e.sa, e.family = &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}, syscall.AF_INET
	case ip.IP.To4() != nil:
		sa := &syscall.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip.IP.To4())
		e.sa, e.family = sa, syscall.AF_INET
	default:
		if ip.IP.IsUnspecified() {
			ip.IP = net.IPv6loopback
		}
		sa := &syscall.SockaddrInet6{Port: port}
		copy(sa.Addr[:], ip.IP.To16())
		if ip.Zone != "" {
			if ifi, err := net.InterfaceByName(ip.Zone); err == nil {
				sa.ZoneId = uint32(ifi.Index)
			}
		}
		e.sa, e.family = sa, syscall.AF_INET6
	}
	timeout := p.cfg.Timeout
	e.scanEvery = int64(min(max(timeout/20, scanMin), scanMax))
	n := min(loopsFor(runtime.GOMAXPROCS(0)), p.cfg.Connections)
	if loopsOverride > 0 {
		n = min(loopsOverride, p.cfg.Connections)
	}
	for i := range n {
		l, err := newEvLoop(e, p.cfg.Connections/n+b2i(i < p.cfg.Connections%n))
		if err != nil {
			for _, l := range e.loops {
				l.closeFDs()
			}
			return nil, err
		}
		e.loops = append(e.loops, l)
	}
	e.handed = make([]int64, n)
	return e, nil
}

// lookupIP resolves a host name to its addresses (a variable for tests).
var lookupIP = net.DefaultResolver.LookupIPAddr

// pickAddr resolves addr (host:port) to the address the loops connect
// to. A host with several addresses is narrowed to the first of them, in
// the resolver's order, that accepts a TCP connection within timeout (at
// most a second), as wrk does; when none does, the first, whose failures
// are then counted. The goroutine engine's dialer instead tries the
// addresses in turn for each connection. An IP or a host with one address
// is used as it is, without a connection.
func pickAddr(ctx context.Context, addr string, timeout time.Duration) (net.IPAddr, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return net.IPAddr{}, 0, err
	}
	port, err := net.LookupPort("tcp", portStr)
	if err != nil {
		return net.IPAddr{}, 0, err
	}
	if host == "" {
		return net.IPAddr{}, port, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return net.IPAddr{IP: ip.AsSlice(), Zone: ip.Zone()}, port, nil
	}
	ips, err := lookupIP(ctx, host)
	if err != nil {
		return net.IPAddr{}, 0, err
	}
	if len(ips) == 0 {
		return net.IPAddr{}, 0, fmt.Errorf("httpload: %s has no address", host)
	}
	if len(ips) > 1 {
		d := net.Dialer{Timeout: min(timeout, time.Second)}
		for _, ip := range ips {
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), portStr))
			if err == nil {
				_ = c.Close()
				return ip, port, nil
			}
		}
	}
	return ips[0], port, nil
}

// loopsOverride, when positive, sets the number of loops (tests).
var loopsOverride int

// loopsFor is the number of loops for procs Ps: half of them, rounded up.
// A loop keeps a core busy only at hundreds of thousands of requests per
// second; below that, more loops only split the batches. With the server
// on the same 2 cores, one loop took 8-10us of CPU per request, two
// 10-13us, for about the same rate.
func loopsFor(procs int) int { return max((procs+1)/2, 1) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// start starts the loops: open (keys nil), fed by dispatch; or closed,
// each connection sending keys' keys one after the other until end.
func (e *epollEngine) start(keys *keySource, end time.Time) {
	p := e.p
	p.mu.Lock()
	for _, l := range e.loops {
		p.bufs = append(p.bufs, &l.recBuf)
	}
	p.mu.Unlock()
	for _, l := range e.loops {
		if keys != nil {
			l.keys, l.end = keys, int64(end.Sub(p.start))
		}
		p.wg.Add(1)
		go l.run()
	}
}

// dispatch hands the arrival j to the loop with the fewest requests
// outstanding (the first of them on a tie, so that a light load keeps one
// loop busy and the others asleep). Only the scheduler calls it.
func (e *epollEngine) dispatch(j job) {
	best, low := 0, int64(math.MaxInt64)
	for i, l := range e.loops {
		if o := e.handed[i] - l.completed.Load(); o < low {
			best, low = i, o
		}
	}
	e.handed[best]++
	e.loops[best].push(j)
}

// wakeAll wakes every loop, to see the pass stopping or closing.
func (e *epollEngine) wakeAll() {
	for _, l := range e.loops {
		l.wake()
	}
}

// close tells the loops to end once they have nothing in flight.
func (e *epollEngine) close() {
	e.closing.Store(true)
	e.wakeAll()
}

// connections is how many connection slots the loops made.
func (e *epollEngine) connections() int { return int(e.slots.Load()) }

// mayGrow reports whether a loop with n connections, cap at most, may
// open one more at now (since the start): the pool's rule across the
// loops, and always a loop's first.
func (e *epollEngine) mayGrow(n, cap int, now int64) bool {
	if n >= cap {
		return false
	}
	for {
		s := e.slots.Load()
		if s >= int64(e.p.cfg.Connections) {
			return false
		}
		if n > 0 && s >= minWorkers && now-e.lastSpawn.Load() < int64(spawnEvery) {
			return false
		}
		if e.slots.CompareAndSwap(s, s+1) {
			e.lastSpawn.Store(now)
			return true
		}
	}
}

// evLoop is one event loop: its connections, its queue of arrivals from
// the scheduler and its records. push and wake are safe for concurrent
// use; the rest is the loop goroutine's.
type evLoop struct {
	recBuf
	e    *epollEngine
	p    *pass
	sa   syscall.Sockaddr // the loop's copy: Connect writes into it
	epfd int

	qmu      sync.Mutex // guards q
	q        []job
	qn       atomic.Int64 // len(q), read without the lock
	sleeping atomic.Bool  // in (or about to enter) a blocking epoll_wait
	evMu     sync.Mutex   // guards evfd against the loop closing it
	evfd     int          // -1 once closed

	// The loop goroutine's own:
	cap      int      // connections it may open
	conns    []*econn // by slot
	idle     []*econn // a stack: the last to go idle is reused first
	backlog  []job    // arrivals waiting for a connection, from backHead
	backHead int      //
	busy     int      // connections with a request in flight
	taken    []job    // the queue, swapped out
	recs     []record // this round's, for buf
	rbuf     []byte   // loopBufSize
	wbuf     []byte   // the request being written
	events   []syscall.EpollEvent
	nextScan int64      // when to look for timeouts, since the start
	stopped  bool       // the pass's stop was seen: all aborted
	keys     *keySource // closed loop, or nil
	end      int64      // closed loop: when to stop sending
	keyBuf   []string
	keyHead  int
	keysDone bool
}

func newEvLoop(e *epollEngine, cap int) (*evLoop, error) {
	l := &evLoop{e: e, p: e.p, epfd: -1, evfd: -1, cap: cap,
		rbuf: make([]byte, loopBufSize), events: make([]syscall.EpollEvent, maxEvents)}
	l.floor.Store(idleFloor)
	switch sa := e.sa.(type) {
	case *syscall.SockaddrInet4:
		c := *sa
		l.sa = &c
	case *syscall.SockaddrInet6:
		c := *sa
		l.sa = &c
	}
	var err error
	if l.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return nil, err
	}
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		l.closeFDs()
		return nil, errno
	}
	l.evfd = int(fd)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: evfdTag}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, l.evfd, &ev); err != nil {
		l.closeFDs()
		return nil, err
	}
	return l, nil
}

// push queues j for the loop and wakes it if it sleeps.
func (l *evLoop) push(j job) {
	l.qmu.Lock()
	l.q = append(l.q, j)
	l.qn.Store(int64(len(l.q)))
	l.qmu.Unlock()
	// The loop stores sleeping then loads qn; this stores qn then loads
	// sleeping: one of the two sees the other.
	if l.sleeping.Load() && l.sleeping.CompareAndSwap(true, false) {
		l.wake()
	}
}

// wake makes the loop's epoll_wait return.
func (l *evLoop) wake() {
	one := [8]byte{1}
	l.evMu.Lock()
	if l.evfd >= 0 {
		_, _ = rawWrite(l.evfd, one[:]) // EAGAIN: the counter is full, the loop is woken anyway
	}
	l.evMu.Unlock()
}

func (l *evLoop) closeFDs() {
	if l.epfd >= 0 {
		_ = syscall.Close(l.epfd)
		l.epfd = -1
	}
	l.evMu.Lock()
	if l.evfd >= 0 {
		_ = syscall.Close(l.evfd)
		l.evfd = -1
	}
	l.evMu.Unlock()
}

// clock is the time since the pass's start, in nanoseconds.
func (l *evLoop) clock() int64 { return int64(time.Since(l.p.start)) }

// run is the loop: a round of work on what is ready (events, arrivals,
// the stop, timeouts), then a wait for more, until it is over.
func (l *evLoop) run() {
	defer l.p.wg.Done()
	defer l.finished.Store(true)
	defer l.shutdown()
	if l.keys != nil {
		for range l.cap {
			l.idle = append(l.idle, l.newConn())
		}
		l.e.slots.Add(int64(l.cap))
	}
	n := 0
	for {
		now := l.clock()
		l.floor.Store(now) // every record of this round is done after now
		for i := range n {
			l.event(l.events[i])
			l.pump(now) // the next request on the connection just answered
		}
		l.takeQueue(now)
		if !l.stopped && l.p.stopping.Load() {
			l.abort()
		}
		if now >= l.nextScan {
			l.expire(now)
		}
		l.pump(now)
		l.flush()
		if l.over(now) {
			return
		}
		// Open, a look without sleeping first: the scheduler writes the
		// eventfd only for a loop that sleeps. Closed, nobody writes it.
		n = 0
		if l.keys == nil {
			if n = l.wait(0); n > 0 {
				continue
			}
		}
		switch ms := l.sleepFor(now); {
		case ms != 0:
			l.sleeping.Store(true)
			if l.qn.Load() == 0 {
				n = l.wait(ms)
			}
			l.sleeping.Store(false)
		case l.keys != nil:
			n = l.wait(0)
		}
	}
}

// wait is epoll_wait for at most ms milliseconds (-1: until an event),
// without the scheduler's attention when ms is 0.
func (l *evLoop) wait(ms int) int {
	n, err := epollWait(l.epfd, l.events, ms)
	if err != nil {
		if err != syscall.EINTR {
			// Only a bug gets here (EBADF, EINVAL): do not spin on it;
			// the requests in flight time out.
			time.Sleep(time.Millisecond)
		}
		return 0
	}
	return n
}

// sleepFor is how long the loop may sleep in epoll_wait, in ms: -1 for
// as long as nothing happens, 0 not at all.
func (l *evLoop) sleepFor(now int64) int {
	var d int64
	switch {
	case l.keys != nil && len(l.idle) > 0 && l.mayStartClosed(now):
		return 0 // connections that failed at once: send again
	case l.busy == 0 && l.keys == nil:
		return -1
	case l.busy == 0:
		d = l.end - now
	default:
		d = l.nextScan - now
		if l.keys != nil && now < l.end {
			d = min(d, l.end-now)
		}
	}
	if d <= 0 {
		return 0
	}
	return int(min((d+999_999)/1_000_000, math.MaxInt32))
}

// over reports whether the loop is done: nothing in flight and, closed,
// past its end or stopped; open, the pass closing with nothing queued.
func (l *evLoop) over(now int64) bool {
	if l.busy > 0 {
		return false
	}
	if l.keys != nil {
		return l.stopped || now >= l.end || l.keysDone
	}
	return l.e.closing.Load() && l.qn.Load() == 0 && l.backHead == len(l.backlog)
}

// takeQueue takes the arrivals the scheduler queued into the backlog,
// where pump opens connections for them (grow) and sends them.
func (l *evLoop) takeQueue(now int64) {
	if l.qn.Load() == 0 {
		return
	}
	l.qmu.Lock()
	l.taken, l.q = l.q, l.taken[:0]
	l.qn.Store(0)
	l.qmu.Unlock()
	if l.stopped {
		l.p.discarded.Add(int64(len(l.taken)))
	} else {
		l.backlog = append(l.backlog, l.taken...)
	}
	clear(l.taken)
}

// pump gives the backlog's arrivals, oldest first, to idle connections,
// the last to go idle first; closed, sends the next keys on every idle
// connection.
func (l *evLoop) pump(now int64) {
	if l.keys != nil {
		for k := len(l.idle); k > 0 && len(l.idle) > 0 && l.mayStartClosed(now); k-- {
			key, ok := l.nextKey()
			if !ok {
				l.keysDone = true
				return
			}
			l.send(l.popIdle(), -1, key)
		}
		return
	}
	l.grow(now)
	for l.backHead < len(l.backlog) && len(l.idle) > 0 {
		j := l.backlog[l.backHead]
		l.backlog[l.backHead] = job{}
		l.backHead++
		l.send(l.popIdle(), int64(j.at), j.key)
	}
	switch {
	case l.backHead == len(l.backlog):
		l.backlog, l.backHead = l.backlog[:0], 0
	case l.backHead >= 1024 && 2*l.backHead >= len(l.backlog):
		n := copy(l.backlog, l.backlog[l.backHead:])
		clear(l.backlog[n:])
		l.backlog, l.backHead = l.backlog[:n], 0
	}
}

// grow applies the pool's rule to the backlog: a connection more for
// each arrival that will find none idle, up to minWorkers at once, then
// one per spawnEvery (each round looks again while arrivals wait).
func (l *evLoop) grow(now int64) {
	for l.backHead+len(l.idle) < len(l.backlog) && l.e.mayGrow(len(l.conns), l.cap, now) {
		l.idle = append(l.idle, l.newConn())
	}
}

// mayStartClosed reports whether a closed loop may send another request.
func (l *evLoop) mayStartClosed(now int64) bool {
	return !l.stopped && !l.keysDone && now < l.end
}

func (l *evLoop) nextKey() (string, bool) {
	if l.keyHead == len(l.keyBuf) {
		clear(l.keyBuf)
		l.keyBuf, l.keyHead = l.keys.fill(l.keyBuf[:0], keyBatch), 0
		if len(l.keyBuf) == 0 {
			return "", false
		}
	}
	k := l.keyBuf[l.keyHead]
	l.keyHead++
	return k, true
}

func (l *evLoop) popIdle() *econn {
	n := len(l.idle) - 1
	c := l.idle[n]
	l.idle[n] = nil
	l.idle = l.idle[:n]
	return c
}

// abort fails every request in flight (counted as canceled) and discards
// the arrivals waiting: the pass is stopping.
func (l *evLoop) abort() {
	l.stopped = true
	for _, c := range l.conns {
		if c.busy {
			l.closeConn(c)
			l.finish(c, response{}, errAborted)
		}
	}
	l.p.discarded.Add(int64(len(l.backlog) - l.backHead))
	clear(l.backlog)
	l.backlog, l.backHead = l.backlog[:0], 0
}

// errAborted fails the requests in flight when the pass stops.
var errAborted = errors.New("httpload: aborted")

// expire fails the requests past their deadline, as timeouts.
func (l *evLoop) expire(now int64) {
	if l.busy > 0 {
		for _, c := range l.conns {
			if c.busy && now >= c.deadline {
				l.fail(c, errTimedOut)
			}
		}
	}
	l.nextScan = now + l.e.scanEvery
}

// flush hands the round's records to the collector.
func (l *evLoop) flush() {
	if len(l.recs) > 0 {
		l.mu.Lock()
		l.buf = append(l.buf, l.recs...)
		l.mu.Unlock()
		clear(l.recs)
		l.recs = l.recs[:0]
		l.completed.Store(l.n)
	}
	l.floor.Store(idleFloor)
}

// shutdown closes the loop's sockets and descriptors.
func (l *evLoop) shutdown() {
	for _, c := range l.conns {
		l.closeConn(c)
	}
	l.closeFDs()
}
