package corpus

import (
	"strconv"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// ServeCase is a `ratebench serve` configuration and what it does: serve
// is the command's own, so its tests start it (in their process) with
// Args after `serve -addr 127.0.0.1:0`.
type ServeCase struct {
	Name  string
	Args  []string
	Truth Truth
}

// ServeCases returns one case for each algorithm of serve's that rejects
// and decides unlike the others (token-bucket, leaky-bucket and x-rate
// admit what gcra admits; leaky-queue and uber delay rather than
// reject), at windows that are not whole seconds or at a rate per
// minute, limits of at most 100 per window: policies a probe can see
// within a minute. serve keys each request by its client address and
// puts its windows on the multiples of W of the Unix clock.
func ServeCases() []ServeCase {
	window := func(algo string, limit int64, w time.Duration, onClock bool, countsDenied *bool) ServeCase {
		t := Truth{Algorithms: []string{algo}, Limit: limit, Window: w, Scope: result.ScopeSource,
			CountsDenied: countsDenied, RejectStatus: 429}
		if onClock {
			t.Phase = ptr(time.Duration(0))
		}
		return ServeCase{Name: "serve " + algo, Truth: t,
			Args: []string{"-algo", algo, "-limit", strconv.FormatInt(limit, 10), "-window", w.String()}}
	}
	bucket := func(algo string, limit int64, w time.Duration, burst int64, models []string, countsDenied bool) ServeCase {
		return ServeCase{Name: "serve " + algo,
			Truth: Truth{Algorithms: models, Limit: limit, Window: w, Burst: burst, Scope: result.ScopeSource,
				CountsDenied: ptr(countsDenied), RejectStatus: 429, RateOnly: true},
			Args: []string{"-algo", algo, "-limit", strconv.FormatInt(limit, 10), "-window", w.String(),
				"-burst", strconv.FormatInt(burst, 10)}}
	}
	return []ServeCase{
		// A window on the clock: counting denied requests changes
		// nothing, for the window ends at its edge whatever the count.
		window("fixed-window", 40, 1500*time.Millisecond, true, nil),
		window("fixed-window-first", 30, 1500*time.Millisecond, false, nil),
		window("sliding-log", 25, 1500*time.Millisecond, false, ptr(false)),
		window("sliding-log-all", 20, 2*time.Second, false, ptr(true)),
		window("sliding-counter", 60, 2500*time.Millisecond, true, ptr(false)),
		window("sliding-counter-all", 45, 1500*time.Millisecond, true, ptr(true)),
		bucket("gcra", 90, time.Minute, 10, Buckets(), false),
		bucket("nginx-limit-req", 70, 2*time.Second, 8, Buckets(), false),
		bucket("token-bucket-debt", 30, 2*time.Second, 12, []string{"token-bucket-debt"}, true),
	}
}
