// Package httpexec sends the requests of `ratebench attack`: one HTTP
// request per call of Client.Do, and what its response says that a
// rate-limit benchmark counts (the status, Retry-After, RateLimit-Policy,
// the quota left as RateLimit or X-RateLimit fields say),
// or how it failed. It writes no HTTP itself: plain http goes through
// fasthttp, https (and HTTP/2, or http when asked) through net/http.
//
// The requests a server read are those the caller counts: the fasthttp
// client writes a request once, and one that fails after it was written
// is an error, not written again; net/http writes a replayable request
// (a GET, say) again when its kept connection failed, and
// Response.Attempts counts every write. A response a server sends on an
// idle connection before closing it (a 408) is never taken for the answer
// to the next request.
//
// With Config.SourceAddrs the requests leave from several local
// addresses, each key always from the same one, so that a server that
// limits by client IP sees several clients.
//
// Executor puts a Client under the live engine (live.RunExecutor): each
// arrival of a workload becomes one request, performed on a goroutine of
// a pool as large as the connections.
package httpexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// Defaults and bounds of Config.
const (
	// DefaultConnections caps the connections, so the requests being
	// answered at once.
	DefaultConnections = 256
	// MaxConnections bounds Config.Connections: one source port each
	// towards one server.
	MaxConnections = 1 << 14
	// DefaultTimeout bounds each request, the connection included.
	DefaultTimeout = 30 * time.Second
)

// Clients Config.Client may name, as Client.Name gives them.
const (
	ClientAuto = ""         // ClientFast for http URLs, ClientStd for https
	ClientFast = "fasthttp" // github.com/valyala/fasthttp, HTTP/1.1 over plain http only
	ClientStd  = "net/http" // one net/http Transport: TLS, HTTP/2
)

// Config says what to send and how. URL is required; zero fields take the
// defaults documented on each. It is a plain value, read by New only.
type Config struct {
	// URL is the http or https URL every request is sent to.
	URL string
	// Method is the request method; "" means GET.
	Method string
	// Header is sent with every request, names as they are spelled here
	// (net/http sends User-Agent canonically). A Host entry sets the Host
	// header; User-Agent defaults to UserAgent, and an empty one sends
	// none. Content-Length, Transfer-Encoding, Connection and Trailer are
	// the client's, and refused.
	Header http.Header
	// Body is sent with every request, with its Content-Length.
	Body []byte
	// KeyHeader, when set, is the header that carries each request's key
	// (Do's key), spelled as given; a Header entry of that name is
	// dropped.
	KeyHeader string
	// Connections caps the connections open at once (fasthttp's MaxConns,
	// net/http's MaxConnsPerHost), opened as requests need them; the one
	// that went idle last is reused first. 0 means DefaultConnections, at
	// most MaxConnections. With SourceAddrs it is the total, split evenly
	// across the sources, at least one each (so more than Connections in
	// all when there are more sources): a source whose keys are busier
	// than the others' waits for its own connections while theirs idle.
	Connections int
	// MaxWait bounds how long a request waits for a free connection when
	// Connections are busy; one that waited that long fails with
	// ErrNoFreeConnection, unsent. 0 means Timeout; more than Timeout is
	// cut to it.
	MaxWait time.Duration
	// Timeout bounds each request from the call of Do to the end of its
	// response: the wait for a connection, the dial, the write and the
	// read. 0 means DefaultTimeout.
	Timeout time.Duration
	// Client is ClientAuto, ClientFast or ClientStd.
	Client string
	// Insecure skips the verification of an https server's certificate.
	Insecure bool
	// SourceAddrs, when set, are the local addresses the requests leave
	// from: every connection is bound to one of them (port 0: any free
	// port), and each has its connections of its own (a HostClient, or a
	// Transport, per address), so that a kept connection never carries
	// another address's request. A request leaves from the address
	// SourceIndex gives its key: one key always from the same address,
	// and keys k0 to kN-1 spread over the addresses evenly. At most
	// MaxSourceAddrs unicast addresses, none twice (see
	// ParseSourceAddrs); whether each can be bound and reach the server,
	// Check says. Empty: one pool of connections, from the address the
	// system chooses.
	SourceAddrs []netip.Addr
}

// Client sends the requests of one Config. Its methods are safe for
// concurrent use.
type Client struct {
	name string
	t    *target
	d    *dialer
	srcs []source    // Config.SourceAddrs, or one that lets the system choose
	fast *fastClient // one of fast and std
	std  *stdClient
}

// Response is what one Do got.
type Response struct {
	// Status is the response's status code; 0 without a whole response.
	Status int
	// RetryAfter is the Retry-After field in whole seconds: delay-seconds,
	// or an HTTP-date rounded up from now (0 when past), capped at a day;
	// NoRetryAfter when absent (or without a response), BadRetryAfter when
	// malformed.
	RetryAfter int32
	// Policy is the RateLimit-Policy field value as sent (see
	// ParsePolicy), only when Do was asked for it; "" otherwise.
	Policy string
	// Advertised is the policy the response's fields advertise (see
	// readPolicy: RateLimit-Policy, else a limit field such as
	// X-RateLimit-Limit, whose Window is then 0 unless it says one), only
	// when Do was asked for it; zero otherwise.
	Advertised algorithms.Policy
	// Quota is what the response's rate-limit fields said of the quota
	// left (see readQuota); NoQuota without them or a response.
	Quota Quota
	// Kind is None, or how the request failed without a whole response.
	Kind Kind
	// Attempts counts the times the whole request was written to a
	// connection, each one a request the server may have read: 0 when it
	// was not sent (no connection, or Abort), 1 most of the time, and more
	// when net/http wrote it again on a new connection after a kept one
	// failed (it does for GET, HEAD and other replayable requests). The
	// fasthttp client never writes a request twice. A caller counts
	// Attempts requests sent, of which at most one was answered.
	Attempts int
	// Source is the local IP address the request was sent from (or was
	// to be sent from, when it was not sent), one of Config.SourceAddrs
	// as netip.Addr.String gives it, e.g. "127.0.0.3". Without
	// SourceAddrs the system chooses and Source is "": the address is
	// not looked up.
	Source string
	// Err is the error behind Kind; nil when Kind is None.
	Err error
}

// New checks cfg and returns a Client for it; it connects to nothing.
// Errors wrap ErrBadRequest.
func New(cfg Config) (*Client, error) {
	switch {
	case cfg.Connections < 0 || cfg.Connections > MaxConnections:
		return nil, fmt.Errorf("%w: Connections %d must be in [1, %d] (0 for the default)", ErrBadRequest, cfg.Connections, MaxConnections)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("%w: Timeout %v must be > 0 (0 for the default)", ErrBadRequest, cfg.Timeout)
	case cfg.MaxWait < 0:
		return nil, fmt.Errorf("%w: MaxWait %v must be > 0 (0 for Timeout)", ErrBadRequest, cfg.MaxWait)
	case cfg.Client != ClientAuto && cfg.Client != ClientFast && cfg.Client != ClientStd:
		return nil, fmt.Errorf("%w: client %q: want %s or %s", ErrBadRequest, cfg.Client, ClientFast, ClientStd)
	}
	if cfg.Connections == 0 {
		cfg.Connections = DefaultConnections
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxWait == 0 || cfg.MaxWait > cfg.Timeout {
		cfg.MaxWait = cfg.Timeout
	}
	t, err := newTarget(&cfg)
	if err != nil {
		return nil, err
	}
	srcs, err := newSources(cfg.SourceAddrs)
	if err != nil {
		return nil, err
	}
	if cfg.Client == ClientAuto {
		cfg.Client = ClientFast
		if t.url.Scheme == "https" {
			cfg.Client = ClientStd
		}
	}
	if cfg.Client == ClientFast && t.url.Scheme != "http" {
		return nil, fmt.Errorf("%w: the %s client here speaks plain http; use %s for %s", ErrBadRequest, ClientFast, ClientStd, cfg.URL)
	}
	c := &Client{name: cfg.Client, t: t, d: newDialer(cfg.Timeout), srcs: srcs}
	if cfg.Client == ClientFast {
		c.fast = newFastClient(t, c.d, &cfg, srcs)
	} else {
		c.std = newStdClient(t, c.d, &cfg, srcs)
	}
	return c, nil
}

// Check opens one TCP connection to the server from each source address
// (one from the system's choice without Config.SourceAddrs) and closes
// it, sending nothing, so that no quota is spent; each waits at most 5
// seconds (or Timeout if shorter) and ctx, several at once. Its error
// wraps ErrUnreachable, and with SourceAddrs names the first address in
// their order that failed, with the cause: an address not of this host,
// one of a family the server has no address in, or the server's refusal.
// The connections are not counted in Dials.
func (c *Client) Check(ctx context.Context) error {
	timeout := min(c.d.timeout, 5*time.Second)
	errs := make([]error, len(c.srcs))
	var (
		next   atomic.Int64
		failed atomic.Bool // no new dial once one failed
		wg     sync.WaitGroup
	)
	for range min(len(c.srcs), checkParallel) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(c.srcs) {
					return
				}
				if errs[i] = c.check(ctx, c.srcs[i], timeout); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkParallel bounds the connections Check opens at once.
const checkParallel = 32

// check opens one connection from src to the server and closes it.
func (c *Client) check(ctx context.Context, src source, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	if src.local != nil {
		d.LocalAddr = src.local
	}
	conn, err := d.DialContext(ctx, "tcp", c.t.addr)
	if err == nil {
		return conn.Close()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	if src.local == nil {
		return fmt.Errorf("%w to %s: %w", ErrUnreachable, c.t.addr, err)
	}
	var ae *net.AddrError
	switch {
	case errors.As(err, &ae) && strings.Contains(ae.Err, "no suitable address"):
		// Go's words when the server has no address of the source's family.
		family := "IPv4"
		if src.local.IP.To4() == nil {
			family = "IPv6"
		}
		err = fmt.Errorf("an %s source cannot reach %s, which has no %s address", family, c.t.url.Hostname(), family)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		err = fmt.Errorf("%w (is it an address of this host?)", err)
	}
	return fmt.Errorf("%w to %s from source address %s: %w", ErrUnreachable, c.t.addr, src.name, err)
}

// Do sends one request, with key in Config.KeyHeader when set, and reads
// its whole response; it blocks until then, at most Config.Timeout. With
// Config.SourceAddrs it goes on a connection from the address
// SourceIndex gives key (Response.Source). After
// Abort it returns at once with Kind Canceled. A key holding CR, LF or NUL
// is not sent (Kind Other, an error wrapping ErrBadRequest). wantPolicy
// asks for Response.Policy and Response.Advertised. On the fasthttp client Do allocates nothing
// of its own when wantPolicy is false or the field absent.
func (c *Client) Do(key string, wantPolicy bool) Response {
	src := SourceIndex(key, len(c.srcs))
	if c.d.aborted.Load() {
		return Response{RetryAfter: NoRetryAfter, Quota: NoQuota, Kind: Canceled, Source: c.srcs[src].name, Err: ErrAborted}
	}
	if c.t.keyHeader != "" && strings.ContainsAny(key, "\r\n\x00") {
		return Response{RetryAfter: NoRetryAfter, Quota: NoQuota, Kind: Other, Source: c.srcs[src].name,
			Err: fmt.Errorf("%w: key %q holds CR, LF or NUL", ErrBadRequest, key)}
	}
	var r Response
	if c.fast != nil {
		r = c.fast.do(src, key, wantPolicy)
	} else {
		r = c.std.do(src, key, wantPolicy)
	}
	r.Source = c.srcs[src].name
	return r
}

// Abort ends every request in flight at once, by closing every connection
// open, and fails every later one the same way: they return Kind Canceled
// (a request that got its whole response first keeps it). It is meant for
// an interrupt: the Client sends nothing after it.
func (c *Client) Abort() { c.d.abort() }

// Close closes the idle connections; the Client remains usable and opens
// new ones as requests need them.
func (c *Client) Close() {
	if c.fast != nil {
		for _, hc := range c.fast.hcs {
			hc.CloseIdleConnections()
		}
	} else {
		for _, tr := range c.std.trs {
			tr.CloseIdleConnections()
		}
	}
}

// Sources are the addresses of Config.SourceAddrs as Response.Source
// gives them, in order; nil without SourceAddrs. A new slice each call.
func (c *Client) Sources() []string {
	if c.srcs[0].local == nil {
		return nil
	}
	out := make([]string, len(c.srcs))
	for i, s := range c.srcs {
		out[i] = s.name
	}
	return out
}

// Name is the client sending: ClientFast ("fasthttp") or ClientStd
// ("net/http").
func (c *Client) Name() string { return c.name }

// Dials counts the connections opened so far by requests.
func (c *Client) Dials() int64 { return c.d.dials.Load() }
