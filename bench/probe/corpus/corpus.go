// Package corpus starts real rate limiters that others wrote, each
// configured by hand and listening on a loopback port, and says what each
// one truly does, as read from its source: which of ratebench's models
// decide as it does, its policy, its scope and its reject status. Tests
// probe them and check the verdict against that truth.
//
// The targets (Names): go-chi/httprate, ulule/limiter, a map of
// golang.org/x/time/rate limiters and a limiter no model explains, in
// this process; express-rate-limit under node, HAProxy's stick table and
// nginx's limit_req at r/s and at r/m, as child processes. ServeCases adds
// `ratebench serve` for each algorithm, for the command's own tests to
// start in their process. Every target is limited per client address and
// listens on 127.0.0.1 only: clients that send from 127.0.0.2 and the
// other loopback addresses reach it all the same, each counted on its own.
//
// A child process's server whose program is not installed is not started:
// Start then returns an error that wraps ErrMissing and says what to
// install; RequireEnv names the environment variable under which a test
// should fail rather than skip. On Linux the kernel stops a child when
// the process that started it dies, so that a killed test leaves no
// server behind.
package corpus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// ErrMissing is wrapped by Start's error when the program a target runs
// (nginx, haproxy, node or express's modules) is not installed.
var ErrMissing = errors.New("not installed")

// Truth is what a target's limiter does, in ratebench's terms (see
// `ratebench list`). It is read-only.
type Truth struct {
	// Algorithms names the ratebench models that decide as the limiter
	// does, any of which is a right answer: for a bucket, every model of
	// the bucket family. Empty for a limiter no model explains (Outside).
	Algorithms []string
	// Limit per Window is the policy; for a bucket only the rate
	// Limit/Window is knowable, and Window is the one it was configured
	// with.
	Limit  int64
	Window time.Duration
	// Burst is a bucket's capacity in requests; 0 for a window.
	Burst int64
	// Phase is where windows start on the Unix clock: this long after
	// each multiple of Window since the epoch. Nil when the windows are
	// not on the clock (a bucket, a log, windows a client's first request
	// opens).
	Phase *time.Duration
	// Scope is what one limit applies to: result.ScopeSource for a limit
	// per client address.
	Scope string
	// CountsDenied says whether denied requests count against the limit;
	// nil when no trace can tell (the limiter decides the same either
	// way).
	CountsDenied *bool
	// RejectStatus is the status of a rejection.
	RejectStatus int
	// RateOnly: the limiter is a bucket, of which only the rate and the
	// capacity can be known from outside.
	RateOnly bool
	// Outside: no model of ratebench's explains the limiter; a probe
	// must not be sure of any.
	Outside bool
}

// RatePerS is the policy's rate in requests per second.
func (t Truth) RatePerS() float64 { return float64(t.Limit) / t.Window.Seconds() }

// String is the truth in a few words: "httprate of 50 per 1s, windows
// 312ms after each multiple of 1s of the Unix clock, per client address,
// denied not counted, 429".
func (t Truth) String() string {
	name := strings.Join(t.Algorithms, "/")
	if t.Outside {
		name = "no model"
	}
	s := fmt.Sprintf("%s of %d per %v", name, t.Limit, t.Window)
	if t.RateOnly {
		s += fmt.Sprintf(" with a burst of %d", t.Burst)
	}
	if t.Phase != nil {
		s += fmt.Sprintf(", windows %v after each multiple of %v of the Unix clock", t.Phase.Round(time.Millisecond), t.Window)
	}
	switch t.Scope {
	case result.ScopeSource:
		s += ", per client address"
	case result.ScopeKey:
		s += ", per key"
	case result.ScopeGlobal:
		s += ", for all clients together"
	}
	switch {
	case t.CountsDenied == nil:
	case *t.CountsDenied:
		s += ", denied counted"
	default:
		s += ", denied not counted"
	}
	return s + fmt.Sprintf(", %d", t.RejectStatus)
}

// Target is one started limiter.
type Target struct {
	Name  string
	URL   string // every request goes here: http://127.0.0.1:PORT/...
	Truth Truth
	// Stop stops the server, waiting for the requests in hand; it returns
	// an error when the server had to be killed or had exited on its own.
	// Only its first call stops; later calls return the first's error.
	Stop func() error
}

// The target names, for Start.
const (
	Httprate  = "httprate"           // go-chi/httprate LimitByIP(50, time.Second)
	Ulule     = "ulule-limiter"      // ulule/limiter memory store, "10-S", keyed by IP
	XTimeRate = "x-time-rate"        // golang.org/x/time/rate: rate.NewLimiter(20, 7) per IP
	Express   = "express-rate-limit" // express-rate-limit, 30 per 2 s, MemoryStore
	HAProxy   = "haproxy"            // stick table http_req_rate(2s), deny above 25
	NginxRPS  = "nginx-r-s"          // limit_req rate=50r/s burst=20 nodelay
	NginxRPM  = "nginx-r-m"          // limit_req rate=90r/m burst=4 nodelay
	Halving   = "halving"            // a fixed window whose limit halves at each rejection: no model
)

// Names returns every target's name, for Start, in a fixed order.
func Names() []string {
	return []string{Httprate, Ulule, XTimeRate, Express, HAProxy, NginxRPS, NginxRPM, Halving}
}

// RequireEnv returns the environment variable under which a test should
// fail rather than skip when the named target's program is missing
// (.ci/run sets each to 1), or "" for a target that runs in this process.
func RequireEnv(name string) string {
	switch name {
	case Express:
		return NodeRequireEnv
	case HAProxy:
		return HAProxyRequireEnv
	case NginxRPS, NginxRPM:
		return NginxRequireEnv
	}
	return ""
}

// Start starts the named target and returns once it accepts connections,
// within ctx. dir is a folder of the caller's (a test's temporary
// folder) in which a child process's configuration and logs are written;
// in-process targets do not use it. The caller stops the target with its
// Stop. An error wraps ErrMissing when the target's program is not
// installed. Safe for concurrent use with distinct dirs.
func Start(ctx context.Context, name, dir string) (*Target, error) {
	switch name {
	case Httprate:
		return startHttprate()
	case Ulule:
		return startUlule()
	case XTimeRate:
		return startXTimeRate()
	case Halving:
		return startHalving()
	case Express:
		return startExpress(ctx, dir)
	case HAProxy:
		return startHAProxy(ctx, dir)
	case NginxRPS, NginxRPM:
		cfg := NginxConfig{Rate: 50, Per: time.Second, Burst: 20, RejectStatus: 429}
		if name == NginxRPM {
			cfg = NginxConfig{Rate: 90, Per: time.Minute, Burst: 4, RejectStatus: 429}
		}
		n, err := StartNginx(ctx, dir, cfg)
		if err != nil {
			return nil, err
		}
		return &Target{Name: name, URL: n.URL, Truth: cfg.Truth(), Stop: n.Stop}, nil
	}
	return nil, fmt.Errorf("corpus: no target %q: want one of %s", name, strings.Join(Names(), ", "))
}

// Buckets returns the models that admit the same requests for the same
// rate and capacity (`ratebench list`), a new slice at each call: any of
// them is right for a bucket, for the timing noise of a few requests may
// not tell nginx's millisecond clock from a GCRA's nanoseconds.
func Buckets() []string {
	return []string{"gcra", "token-bucket", "leaky-bucket", "x-rate", "nginx-limit-req"}
}

func ptr[T any](v T) *T { return &v }
