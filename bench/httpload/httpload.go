// Package httpload is an open-loop HTTP load generator that measures a
// rate-limited service from the outside: it sends the arrivals of a
// workload (the generators of package workload, Poisson included) at their
// intended instants whatever the server does, and reports what the server
// admitted (2xx), rejected (429) and failed (transport errors and 5xx) in
// the result.Run of result.json, so that `ratebench attack` gets the same
// report as in-process runs and can be compared with them.
//
// Latency is measured from each arrival's intended instant (free of
// coordinated omission), service time from the moment the request was
// really sent, and the sender's own lateness between the two. Requests go
// over kept-alive connections, one request at a time per connection (a
// worker goroutine each), opened as the load needs them up to
// Config.Connections; the connection that went idle last is reused first,
// so that only as many stay busy as the load needs. An arrival that finds
// every connection busy waits for the next free one (its lateness and
// latency count the wait), and one due while Config.MaxInFlight are sent
// or waiting and unanswered is dropped and counted. Config.Closed drops
// the schedule for a closed loop, to find the most a server answers.
//
// Plain http goes through the package's own HTTP/1.1 client, which costs
// the sender a fraction of net/http's CPU per request (see Config.Client);
// https through one net/http Client. On Linux the fast client's
// connections are driven by a few epoll event loops instead of a
// goroutine each (see Config.Engine), with the same measures and rules.
package httpload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// Defaults of Config.
const (
	// DefaultMaxInFlight caps the requests in flight, hence the
	// connections.
	DefaultMaxInFlight = 10000
	// MaxMaxInFlight bounds Config.MaxInFlight.
	MaxMaxInFlight = 1 << 20
	// MaxConnections bounds Config.Connections: one source port each
	// towards one server.
	MaxConnections = 1 << 14
	// DefaultConnections caps the connections (and so the requests
	// being answered at once).
	DefaultConnections = 256
	// DefaultTimeout bounds each request, connection included.
	DefaultTimeout = 30 * time.Second
	// policyWait is how long (in response instants) Attack waits for a
	// RateLimit-Policy field before it falls back to the offered rate.
	policyWait = time.Second
)

// Clients Config.Client may name.
const (
	ClientAuto = ""         // fast for http URLs, net/http for https
	ClientFast = "fast"     // the HTTP/1.1 client of this package (http only)
	ClientStd  = "net/http" // one net/http Client (TLS, HTTP/2)
)

// Config configures Attack. URL and Workload are required; zero fields
// take the defaults documented on each. It is a plain value.
type Config struct {
	// URL is the http or https URL every request is sent to.
	URL string
	// Method is the request method; "" means GET.
	Method string
	// Header is sent with every request (a Host entry sets the Host).
	// Content-Length, Transfer-Encoding and Connection are the client's.
	Header http.Header
	// Body is sent with every request, with its Content-Length.
	Body []byte
	// Workload gives the arrivals: their instants, and their keys when
	// KeyHeader is set. Its Cost is ignored: a request is one unit.
	Workload workload.Spec
	// KeyHeader, when set, carries each arrival's key (workload keys
	// "k0", "k1", ...), so that a server keyed by that header limits each
	// key on its own.
	KeyHeader string
	// MaxInFlight caps the arrivals sent, or waiting for a connection,
	// and not yet answered: an arrival due at the cap is dropped and
	// counted, never sent late. 0 means DefaultMaxInFlight, at most
	// MaxMaxInFlight.
	MaxInFlight int
	// Connections caps the connections, opened as the load needs them
	// (the one that went idle last is reused first); an arrival that
	// finds none idle waits for the next free one, and its lateness
	// counts the wait. 0 means DefaultConnections, at most MaxConnections.
	Connections int
	// Timeout bounds each request, from its send to the end of its
	// response, connection included; 0 means DefaultTimeout. (The fast
	// client renews a connection's deadline in steps: a request may time
	// out after 0.9 Timeout.)
	Timeout time.Duration
	// Closed drops the schedule for a closed loop, as wrk and vegeta
	// -rate=0 do: each of Connections connections sends its next request
	// as soon as the previous one is answered, for Workload.Duration, to
	// find the most the server (and this machine) can answer. Latency is
	// then the service time. Workload gives only the keys: constant,
	// poisson or zipf, whose Rate is ignored.
	Closed bool
	// HonorRetryAfter: after a 429 with Retry-After for a key, the
	// arrivals of that key due before then are held back (counted, not
	// sent), as a well-behaved client would.
	HonorRetryAfter bool
	// LateAfter is the lateness (send minus intended instant) above which
	// a request counts as late; 0 means bench.DefaultLateAfter.
	LateAfter time.Duration
	// Policy is the server's policy, for the burst ratio and the series'
	// bins. Zero fields are taken from the first RateLimit-Policy response
	// field (q per w; burst q); without one, the offered rate per second
	// stands in, with a warning.
	Policy algorithms.Policy
	// Algorithm names the server's algorithm (see algorithms/all), for the
	// theory in the report; "" leaves it unknown.
	Algorithm string
	// Client is ClientAuto, ClientFast or ClientStd.
	Client string
	// Engine is EngineAuto, EngineGoroutines or EngineEpoll: how the fast
	// client drives its connections (the net/http client has goroutines).
	Engine string
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// Progress, when set, is told how far the attack has got.
	Progress bench.Progress
}

// ErrUnreachable is wrapped by Check's error when the server cannot be
// connected to.
var ErrUnreachable = errors.New("httpload: cannot connect")

// resolve validates c and applies the defaults; errors wrap ErrBadRequest
// or workload.ErrInvalid, or are about a field, and are prefixed
// "httpload:".
func (c Config) resolve() (Config, *target, error) {
	switch {
	case c.MaxInFlight < 0 || c.MaxInFlight > MaxMaxInFlight:
		return c, nil, fmt.Errorf("httpload: MaxInFlight %d must be in [1, %d] (0 for the default)", c.MaxInFlight, MaxMaxInFlight)
	case c.Connections < 0 || c.Connections > MaxConnections:
		return c, nil, fmt.Errorf("httpload: Connections %d must be in [1, %d] (0 for the default)", c.Connections, MaxConnections)
	case c.Timeout < 0:
		return c, nil, fmt.Errorf("httpload: Timeout %v must be > 0 (0 for the default)", c.Timeout)
	case c.LateAfter < 0:
		return c, nil, fmt.Errorf("httpload: LateAfter %v must be >= 0", c.LateAfter)
	case c.Policy.Limit < 0 || c.Policy.Window < 0 || c.Policy.Burst < 0:
		return c, nil, fmt.Errorf("httpload: %w: limit %d, window %v and burst %d must be >= 0 (0: from the server)",
			algorithms.ErrInvalidPolicy, c.Policy.Limit, c.Policy.Window, c.Policy.Burst)
	case c.Client != ClientAuto && c.Client != ClientFast && c.Client != ClientStd:
		return c, nil, fmt.Errorf("httpload: client %q: want %s or %s", c.Client, ClientFast, ClientStd)
	case c.Engine != EngineAuto && c.Engine != EngineGoroutines && c.Engine != EngineEpoll:
		return c, nil, fmt.Errorf("httpload: engine %q: want %s or %s", c.Engine, EngineGoroutines, EngineEpoll)
	case c.Engine == EngineEpoll && !epollSupported:
		return c, nil, fmt.Errorf("httpload: the %s engine runs on Linux only", EngineEpoll)
	}
	if c.Algorithm != "" {
		if _, err := all.Lookup(c.Algorithm); err != nil {
			return c, nil, fmt.Errorf("httpload: %w", err)
		}
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.LateAfter == 0 {
		c.LateAfter = bench.DefaultLateAfter
	}
	t, err := newTarget(&c)
	if err != nil {
		return c, nil, err
	}
	if c.Client == ClientAuto {
		c.Client = ClientFast
		if t.url.Scheme == "https" {
			c.Client = ClientStd
		}
	}
	if c.Client == ClientFast && t.url.Scheme != "http" {
		return c, nil, fmt.Errorf("%w: the fast client speaks plain http; use the net/http client for %s", ErrBadRequest, c.URL)
	}
	switch {
	case c.Engine == EngineEpoll && c.Client != ClientFast:
		return c, nil, fmt.Errorf("httpload: the %s engine drives the fast client only, not %s", EngineEpoll, c.Client)
	case c.Engine == EngineAuto && c.Client == ClientFast && epollSupported:
		c.Engine = EngineEpoll
	case c.Engine == EngineAuto:
		c.Engine = EngineGoroutines
	}
	if c.Workload.Name == "boundary" && (c.Policy.Limit == 0 || c.Policy.Window == 0) {
		return c, nil, fmt.Errorf("httpload: the boundary workload needs the server's limit and window")
	}
	if c.Workload.Name == "boundary" {
		c.Workload.Limit, c.Workload.Window = c.Policy.Limit, c.Policy.Window
	}
	c.Workload.Cost = 1
	if c.Closed {
		switch c.Workload.Name {
		case "constant", "poisson", "zipf":
		default:
			return c, nil, fmt.Errorf("httpload: a closed loop takes only its keys from a workload: constant, poisson or zipf, not %q", c.Workload.Name)
		}
		if c.HonorRetryAfter {
			return c, nil, fmt.Errorf("httpload: a closed loop (no rate) cannot hold requests back after a 429")
		}
	}
	if err := c.keySpec().Validate(); err != nil {
		return c, nil, fmt.Errorf("httpload: %w", err)
	}
	return c, t, nil
}

// Check validates cfg as Attack would and opens (then closes) one TCP
// connection to the server, sending nothing, so that no quota is spent.
// Errors wrap ErrBadRequest, workload.ErrInvalid or ErrUnreachable.
func Check(ctx context.Context, cfg Config) error {
	cfg, t, err := cfg.resolve()
	if err != nil {
		return err
	}
	stream, err := workload.New(cfg.keySpec()) // opens a replay trace
	if err != nil {
		return fmt.Errorf("httpload: %w", err)
	}
	if c, ok := stream.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	d := net.Dialer{Timeout: min(cfg.Timeout, 5*time.Second)}
	c, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("%w to %s: %w", ErrUnreachable, t.addr, err)
	}
	return c.Close()
}

// Result is what Attack measured.
type Result struct {
	// Run holds the counts, series and span measures of a result.Run on the
	// instants responses arrived, plus Live (sender measures) and HTTP.
	// Admitted counts 2xx responses, Rejected 429s, Errors transport
	// errors and 5xx responses; other statuses are only in Offered and
	// StatusCodes.
	Run result.Run
	// Policy is the policy the run was measured against (Config.Policy,
	// completed from the server's RateLimit-Policy field).
	Policy algorithms.Policy
	// Warnings are one line each about what makes a figure doubtful.
	Warnings []string
}

// Attack sends cfg.Workload's arrivals to cfg.URL in real time and
// measures the responses. It returns when the workload is over and every
// request answered or timed out. When ctx is cancelled it stops sending,
// aborts the requests in flight (counted as errors of kind canceled) and
// returns, within about a second, what ran with ctx's error. An invalid
// cfg is an error wrapping ErrBadRequest or workload.ErrInvalid; a server
// that cannot be reached is not: its requests are counted as errors.
func Attack(ctx context.Context, cfg Config) (Result, error) {
	cfg, t, err := cfg.resolve()
	if err != nil {
		return Result{}, err
	}
	stream, err := workload.New(cfg.keySpec())
	if err != nil {
		return Result{}, fmt.Errorf("httpload: %w", err)
	}
	defer func() {
		if c, ok := stream.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	p := newPass(ctx, cfg, t)
	defer p.cancel()
	if cfg.Workload.Name == "boundary" {
		p.alignStart(ctx, cfg.Policy.Window)
	}
	s := p.drive(ctx, stream)
	res := p.result(s)
	switch {
	case s.err != nil:
		return res, fmt.Errorf("httpload: %w", s.err)
	case s.interrupted:
		return res, ctx.Err()
	}
	return res, nil
}

// keySpec is the workload to generate: in a closed loop, one whose
// instants are ignored (its rate only needs to outrun any server).
func (c Config) keySpec() workload.Spec {
	s := c.Workload
	if c.Closed {
		s.Rate = 1e9
	}
	return s
}

// binWidth is the series bin for policy p over duration d, as the engines
// choose it: W/10, widened so that a run has at most 4000 bins.
func binWidth(p algorithms.Policy, d time.Duration) int64 {
	b := max(int64(p.Window)/10, 1)
	if int64(d)/b > 4000 {
		b = (int64(d) + 3999) / 4000
	}
	return b
}

// fallbackPolicy is the stand-in when neither the config nor the server
// says the policy: the workload's rate per second.
func fallbackPolicy(s workload.Spec) algorithms.Policy {
	l := int64(math.Ceil(s.Rate))
	return algorithms.Policy{Limit: max(l, 1), Window: time.Second}
}

// hostOf is the backend name of a run: the URL's host.
func hostOf(t *target) string {
	return strings.TrimSuffix(t.url.Host, ":")
}
