//go:build !race

package serve_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/httplimit"
	"github.com/ratebench/ratebench/algorithms/httplimit/serve"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// The tests here run serve.Run on a listener the test wraps, so that they
// can shorten its timeouts and watch what the server does to its
// connections. Everything stays on 127.0.0.1.

// watchedConn is a server-side connection that reports its writes and its
// closing to the test.
type watchedConn struct {
	net.Conn
	writing  atomic.Int32  // writes begun and not yet returned
	progress chan struct{} // a write returned (best effort, never blocks)
	mu       sync.Mutex
	werr     error // the first write error
	once     sync.Once
	closed   chan struct{} // closed by Close
}

func (c *watchedConn) Write(p []byte) (int, error) {
	c.writing.Add(1)
	n, err := c.Conn.Write(p)
	if err != nil {
		c.mu.Lock()
		if c.werr == nil {
			c.werr = err
		}
		c.mu.Unlock()
	}
	c.writing.Add(-1) // after the error is kept: see writeErr
	select {
	case c.progress <- struct{}{}:
	default:
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// writeErr returns the first write error, once no write is in progress:
// a write blocked when the connection was closed returns a moment after
// Close, and is waited for (at most 5s).
func (c *watchedConn) writeErr() error {
	for deadline := time.Now().Add(5 * time.Second); c.writing.Load() > 0 && time.Now().Before(deadline); {
		select {
		case <-c.progress:
		case <-time.After(10 * time.Millisecond):
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.werr
}

// watchedListener hands out watchedConns on conns, with a small send
// buffer so that a client that does not read blocks the server soon.
type watchedListener struct {
	net.Listener
	conns chan *watchedConn
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	w := &watchedConn{Conn: c, progress: make(chan struct{}, 1), closed: make(chan struct{})}
	select {
	case l.conns <- w:
	default: // the test watches the first few only
	}
	return w, nil
}

// directServe is serve.Run running on a watched listener.
type directServe struct {
	ln     *watchedListener
	mw     *httplimit.Middleware
	log    *notifyBuffer
	cancel context.CancelFunc
	done   chan error // Run's result
}

// notifyBuffer is a buffer safe for concurrent use that signals its
// writes, so that a test can wait for a log line on a channel.
type notifyBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	written chan struct{} // one pending signal at most
}

func newNotifyBuffer() *notifyBuffer { return &notifyBuffer{written: make(chan struct{}, 1)} }

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.b.Write(p)
	b.mu.Unlock()
	select {
	case b.written <- struct{}{}:
	default:
	}
	return n, err
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor waits at most limit for the buffer to contain want.
func (b *notifyBuffer) waitFor(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	giveUp := time.After(limit)
	for !strings.Contains(b.String(), want) {
		select {
		case <-b.written:
		case <-giveUp:
			t.Fatalf("no %q in %q within %v", want, b.String(), limit)
		}
	}
}

// serveDirect builds the middleware of algorithm algo under p, keyed by
// client address in memory, lets tune change the default timeouts, and
// runs serve.Run on 127.0.0.1:0 until the test cancels it (or ends).
func serveDirect(t *testing.T, tune func(*serve.Timeouts), algo string, p algorithms.Policy) *directServe {
	t.Helper()
	to := serve.DefaultTimeouts
	tune(&to)
	e, err := all.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	p, err = p.Validate()
	if err != nil {
		t.Fatal(err)
	}
	lim, err := keyed.New(p, e.New, keyed.Options{MaxKeys: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(httplimit.Config{Policy: p, Limiter: lim, WriteTimeout: to.Write})
	if err != nil {
		t.Fatal(err)
	}
	return runDirect(t, mw, to)
}

// runDirect runs serve.Run with mw and to on a watched listener on
// 127.0.0.1:0 until the test cancels it (or ends).
func runDirect(t *testing.T, mw *httplimit.Middleware, to serve.Timeouts) *directServe {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &directServe{ln: &watchedListener{Listener: inner, conns: make(chan *watchedConn, 4)}, mw: mw,
		log: newNotifyBuffer(), cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- serve.Run(ctx, d.ln, mw, to, d.log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			t.Error("serve still running 10s after the test ended")
		}
	})
	return d
}

// stop cancels Run's context and waits at most limit for it to return;
// it returns how long that took and Run's result.
func (d *directServe) stop(t *testing.T, limit time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	d.cancel()
	select {
	case err := <-d.done:
		d.done <- err // for the cleanup
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("serve still running %v after its context was cancelled; log %q", limit, d.log.String())
	}
	return 0, nil
}

// stuckReader connects to d, pipelines requests until its writes fail and
// never reads a response. It returns the server's side of the connection.
func stuckReader(t *testing.T, d *directServe) *watchedConn {
	t.Helper()
	c, err := net.Dial("tcp", d.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	batch := []byte(strings.Repeat("GET /flood HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 100))
	go func() {
		// Blocks once the server stops reading; returns when the server
		// cuts the connection or the test closes it.
		for {
			if _, err := c.Write(batch); err != nil {
				return
			}
		}
	}()
	select {
	case sc := <-d.ln.conns:
		return sc
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not accept the connection")
	}
	return nil
}

// TestWriteTimeoutCutsStuckReader: a client that pipelines requests
// and never reads fills the socket buffers; the server's write then fails
// at the write timeout and the connection is closed, and stopping serve
// afterwards is quick and clean.
func TestWriteTimeoutCutsStuckReader(t *testing.T) {
	d := serveDirect(t, func(to *serve.Timeouts) {
		to.Write, to.Grace = 200*time.Millisecond, 5*time.Second
	}, "gcra", algorithms.Policy{Limit: 1, Window: time.Hour})
	sc := stuckReader(t, d)
	select {
	case <-sc.closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server still holds the connection of a client that does not read, 10s on (write timeout 200ms); %d writes in progress",
			sc.writing.Load())
	}
	if err := sc.writeErr(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the server's write failed with %v, want the write deadline", err)
	}
	took, err := d.stop(t, 5*time.Second)
	if err != nil {
		t.Errorf("serve returned %v, want nil", err)
	}
	if took > 2*time.Second {
		t.Errorf("serve took %v to stop with no connection busy", took)
	}
	if s := d.mw.Stats(); s.Admitted != 1 {
		t.Errorf("stats %+v: want admitted 1", s)
	}
}

// TestShutdownCutsStuckConnection: stopping serve while a client that
// does not read holds a connection (the write timeout far away) waits the
// grace, closes the connection and returns nil: stopping is serve's normal
// end.
func TestShutdownCutsStuckConnection(t *testing.T) {
	const grace = 300 * time.Millisecond
	d := serveDirect(t, func(to *serve.Timeouts) {
		to.Write, to.Grace = time.Hour, grace
	}, "gcra", algorithms.Policy{Limit: 1, Window: time.Hour})
	sc := stuckReader(t, d)
	// Stuck: a write in progress and none returned for 300ms.
	giveUp := time.After(10 * time.Second)
	for stuck := false; !stuck; {
		select {
		case <-sc.progress:
		case <-time.After(300 * time.Millisecond):
			stuck = sc.writing.Load() > 0
		case <-giveUp:
			t.Fatal("the server's writes never blocked on a client that does not read")
		}
	}
	took, err := d.stop(t, grace+5*time.Second)
	if err != nil {
		t.Errorf("serve returned %v, want nil", err)
	}
	if took < grace {
		t.Errorf("serve stopped after %v, before its grace %v: the connection was not busy", took, grace)
	}
	select {
	case <-sc.closed:
	default:
		t.Error("serve returned with the stuck connection open")
	}
	if err := sc.writeErr(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the stuck write ended with %v, want the connection closed under it", err)
	}
	if !strings.Contains(d.log.String(), "closed the connections still busy after 300ms") {
		t.Errorf("log %q does not say connections were cut", d.log.String())
	}
}

// TestShaperDelayOutlastsWriteTimeout: requests a leaky queue holds
// for longer than the write and read timeouts are still served: the write
// deadline is set after the delay.
func TestShaperDelayOutlastsWriteTimeout(t *testing.T) {
	// T = W/L = 250ms: three requests at once are served after about 0,
	// 250 and 500ms, the last two past the 100ms write timeout.
	d := serveDirect(t, func(to *serve.Timeouts) {
		to.Write, to.Read = 100*time.Millisecond, 100*time.Millisecond
	}, "leaky-queue", algorithms.Policy{Limit: 4, Window: time.Second, Burst: 3})
	url := "http://" + d.ln.Addr().String() + "/"
	type result struct {
		status int
		took   time.Duration
		err    error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			start := time.Now()
			resp, err := http.Get(url)
			if err != nil {
				results <- result{err: err}
				return
			}
			resp.Body.Close()
			results <- result{status: resp.StatusCode, took: time.Since(start)}
		}()
	}
	var slowest time.Duration
	for range 3 {
		select {
		case r := <-results:
			if r.err != nil || r.status != 200 {
				t.Errorf("status %d, error %v; want 200", r.status, r.err)
			}
			slowest = max(slowest, r.took)
		case <-time.After(10 * time.Second):
			t.Fatal("no answer within 10s")
		}
	}
	if slowest < 400*time.Millisecond {
		t.Errorf("slowest request took %v: the queue did not delay past the write timeout", slowest)
	}
	if _, err := d.stop(t, 5*time.Second); err != nil {
		t.Errorf("serve returned %v, want nil", err)
	}
}

// tableFullLimiter admits keys that start with "old-" and refuses every
// other as a full key table would, with a minute until a slot frees.
type tableFullLimiter struct{}

func (tableFullLimiter) Allow(_ time.Duration, key string, _ int64) (algorithms.Decision, error) {
	if strings.HasPrefix(key, "old-") {
		return algorithms.Decision{Allowed: true, Remaining: 1}, nil
	}
	return algorithms.Decision{TableFull: true, RetryAfter: time.Minute, ResetAfter: time.Minute}, nil
}

// TestCountsTableFull: refusals by a full key table show as table_full
// in the per-second line and in the middleware's counts, within
// rejected.
func TestCountsTableFull(t *testing.T) {
	mw, err := httplimit.New(httplimit.Config{Policy: algorithms.Policy{Limit: 2, Window: time.Minute},
		Limiter: tableFullLimiter{}, Key: httplimit.KeyHeader("X-API-Key")})
	if err != nil {
		t.Fatal(err)
	}
	d := runDirect(t, mw, serve.DefaultTimeouts)
	url := "http://" + d.ln.Addr().String() + "/"
	for _, c := range []struct {
		key    string
		status int
	}{
		{key: "old-1", status: 200}, // held: decided on its quota
		{key: "new-1", status: 429}, // refused: the table is full
		{key: "new-2", status: 429}, // another
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-API-Key", c.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("key %s: status %d, want %d (%s)", c.key, resp.StatusCode, c.status, body)
		}
		if c.status == 429 && (resp.Header.Get("Retry-After") != "60" || !strings.Contains(string(body), "key table is full")) {
			t.Errorf("key %s: Retry-After %q, body %s; want 60 and the table named", c.key, resp.Header.Get("Retry-After"), body)
		}
	}
	d.log.waitFor(t, "admitted 1 rejected 2 errors 0 bad_keys 0 table_full 2\n", 3*time.Second)
	if _, err := d.stop(t, 5*time.Second); err != nil {
		t.Errorf("serve returned %v", err)
	}
	if s := d.mw.Stats(); s != (httplimit.Stats{Admitted: 1, Rejected: 2, TableFull: 2}) {
		t.Errorf("stats %+v: want admitted 1, rejected 2 of which table_full 2", s)
	}
}
