package live

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// Defaults of Config.
const (
	// DefaultMaxInFlight is the default cap on arrivals sent and not yet
	// done.
	DefaultMaxInFlight = 10000
	// DefaultLateAfter is how late after its intended instant a call may
	// start before the arrival counts as late: 1ms, well above what the
	// scheduler's handoff costs (microseconds) and well below a window.
	DefaultLateAfter = time.Millisecond
	// DefaultCalibration caps the part of the schedule the no-op pass
	// replays.
	DefaultCalibration = 5 * time.Second
	// MaxWorkers bounds Config.Workers: each worker holds three
	// histograms of about 270 KB.
	MaxWorkers = 1024
)

// DefaultWorkers is the default number of live workers: 4 per P.
func DefaultWorkers() int { return 4 * runtime.GOMAXPROCS(0) }

// Config configures Run and RunExecutor: a bench.Config plus how arrivals
// are sent. Zero fields take the defaults documented on each; negative ones are
// errors unless said otherwise. It is a plain value.
type Config struct {
	bench.Config
	// Workers is how many goroutines call the limiters, at most
	// MaxWorkers; 0 means DefaultWorkers(). A shaper's wait does not hold
	// a worker: each worker keeps its own timer over its waiting requests.
	Workers int
	// MaxInFlight caps the arrivals sent and not yet done (queued for a
	// worker, inside Allow, or waiting out a shaper's delay): an arrival
	// due while the cap is reached is dropped and counted, never sent
	// late. Whatever the cap, at most 65,536 wait for a worker. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// LateAfter is the lateness (call start minus intended instant) above
	// which an arrival counts as late; 0 means DefaultLateAfter.
	LateAfter time.Duration
	// Calibration is how much of the schedule the no-op pass replays
	// after the targets: 0 means the workload's duration, at most
	// DefaultCalibration; negative means no calibration.
	Calibration time.Duration
	// Drain bounds how long after the last arrival a pass still waits
	// for shapers' delays; requests still waiting then are counted as
	// unserved. 0 means the longest delay a leaky-queue gives (B*W/L)
	// plus 100ms, at least 1s and at most 1 minute.
	Drain time.Duration

	// The fields below are for an executor pass (RunExecutor).

	// Closed drops the schedule for a closed loop, as wrk does:
	// Connections requests are in flight at all times, each sent as
	// another ends, for the workload's span, whose arrivals give only the
	// keys (their instants are ignored); latency is then the service
	// time.
	Closed      bool
	Connections int
	// HonorRetryAfter: after a rejection with a Retry-After, the arrivals
	// of that key due before it are held back (counted, not sent), as a
	// well-behaved client would.
	HonorRetryAfter bool
	// AlignStart, when > 0, starts the pass at the next multiple of it
	// since the Unix epoch: where a server's fixed windows start (with
	// StartAt, the first multiple at or after StartAt).
	AlignStart time.Duration

	// StartAt, when not zero, is the instant the first pass's clock
	// starts at; pass k's starts PassSlot after pass k-1's, so that
	// processes that run the same targets (the shards of one schedule)
	// start every pass together. A pass waits for its instant. When that
	// has passed (a process started late, or the pass before overran its
	// slot), its clock starts there all the same, so that its arrivals
	// count as late, unless its whole span has passed too (then it starts
	// now); Run.Live.StartLagNS says how long after its instant it began.
	StartAt time.Time
	// Theory, when set, gives the worst case admitted in any W for the
	// policy once it is known (Target.Theory otherwise).
	Theory func(algorithms.Policy) int64
}

// resolve validates c and applies the defaults.
func (c Config) resolve() (Config, error) {
	p, err := c.Policy.Validate()
	if err != nil {
		return c, fmt.Errorf("bench: %w", err)
	}
	c.Policy = p
	switch {
	case c.Workers < 0 || c.Workers > MaxWorkers:
		return c, fmt.Errorf("bench: live: Workers %d must be in [1, %d] (0 for the default)", c.Workers, MaxWorkers)
	case c.MaxInFlight < 0:
		return c, fmt.Errorf("bench: live: MaxInFlight %d must be >= 1 (0 for the default)", c.MaxInFlight)
	case c.LateAfter < 0:
		return c, fmt.Errorf("bench: live: LateAfter %v must be >= 0", c.LateAfter)
	case c.Drain < 0:
		return c, fmt.Errorf("bench: live: Drain %v must be >= 0", c.Drain)
	}
	if c.Workers == 0 {
		c.Workers = min(DefaultWorkers(), MaxWorkers)
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.LateAfter == 0 {
		c.LateAfter = DefaultLateAfter
	}
	if c.Calibration == 0 {
		c.Calibration = DefaultCalibration
		if d := c.Length(); d > 0 {
			c.Calibration = min(d, DefaultCalibration)
		}
	}
	if c.Drain == 0 {
		longest := float64(p.Burst) * float64(p.Window) / float64(p.Limit)
		c.Drain = time.Duration(min(max(longest+100e6, 1e9), 60e9))
	}
	if c.Connections == 0 {
		c.Connections = c.Workers
	}
	return c, nil
}

// resolveExec is resolve for an executor pass, whose policy may be partly
// unknown (learnt from the answers), and which has no calibration.
func (c Config) resolveExec() (Config, error) {
	p := c.Policy
	switch {
	case p.Limit < 0 || p.Window < 0 || p.Burst < 0:
		return c, fmt.Errorf("bench: %w: limit %d, window %v and burst %d must be >= 0 (0: from the answers)",
			algorithms.ErrInvalidPolicy, p.Limit, p.Window, p.Burst)
	case c.Closed && c.Connections < 1:
		return c, fmt.Errorf("bench: live: a closed loop needs Connections >= 1, not %d", c.Connections)
	}
	known := p.Limit > 0 && p.Window > 0
	if !known {
		c.Policy = algorithms.Policy{Limit: 1, Window: time.Second} // for resolve's checks only
	}
	c.Calibration = -1
	r, err := c.resolve()
	if err != nil {
		return c, err
	}
	if !known {
		r.Policy = p
	}
	return r, nil
}

// Run runs every target over the workload in real time, one pass per
// target, then (unless cfg.Calibration < 0) a no-op pass whose costs go in
// every run's Live.Calibration. It is open loop: a scheduler sends each
// arrival when the wall clock since the pass's start reaches its instant,
// whatever the limiter is doing; cfg.Workers goroutines call the limiter
// with now = the real time elapsed since the start. Latency is measured
// from the intended instant (free of coordinated omission), shapers really
// wait their delays, and arrivals due while cfg.MaxInFlight are in flight
// are dropped and counted. Runs are in target order, with the counts,
// series and span measures of the sim engine (on real decision instants)
// plus Run.Live. When ctx is cancelled the current pass stops within about
// half a second and Run returns the runs measured so far (the current
// one cut short) with ctx's error.
func Run(ctx context.Context, cfg Config, targets []call.Target) ([]result.Run, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	runs := make([]result.Run, 0, len(targets))
	at := cfg.StartAt
	for _, t := range targets {
		run, err := livePassRun(ctx, cfg, t, at, false)
		if run != nil {
			runs = append(runs, *run)
		}
		if err != nil {
			return runs, err
		}
		if !at.IsZero() {
			at = at.Add(PassSlot(cfg, t))
		}
	}
	if cfg.Calibration < 0 || len(runs) == 0 {
		return runs, nil
	}
	run, err := livePassRun(ctx, cfg, noopTarget(), time.Time{}, true)
	if run != nil && run.Offered > 0 {
		cal := calibrationOf(run)
		cal.ClockReadNS = clockReadCost()
		for i := range runs {
			runs[i].Live.Calibration = cal
			runs[i].Live.HarnessOverheadNS = cal.OverheadNS
		}
	}
	return runs, err
}

// WallTime is about how long Run takes for cfg and targets on the
// wall clock: each pass sends for its span, then waits for what is still
// in flight (for a shaper, at most its drain), then the calibration. It is
// 0 for an invalid cfg.
func WallTime(cfg Config, targets []call.Target) time.Duration {
	cfg, err := cfg.resolve()
	if err != nil {
		return 0
	}
	var d time.Duration
	for _, t := range targets {
		if !cfg.StartAt.IsZero() {
			d += PassSlot(cfg, t)
			continue
		}
		d += cfg.Length()
		if t.Shaper {
			d += cfg.Drain
		}
	}
	if cfg.Calibration > 0 && len(targets) > 0 {
		d += cfg.Calibration
	}
	return d
}

// slotSlack is what a pass's slot leaves, after its span and a shaper's
// drain, for the requests still in flight and the next pass's set-up.
const slotSlack = time.Second

// PassSlot is the time between the planned starts of a live pass of t
// and of the next (Config.StartAt): the workload's span, the drain
// for a shaper, and a second for what is still in flight and the next
// pass's set-up. It depends only on cfg and t, so that every process
// plans the same starts.
func PassSlot(cfg Config, t call.Target) time.Duration {
	cfg, err := cfg.resolve()
	if err != nil {
		return slotSlack
	}
	d := max(cfg.Length(), 0) + slotSlack
	if t.Shaper {
		d += cfg.Drain
	}
	return d
}

// clockRounds rounds of clockReads reads measure a clock read.
const (
	clockRounds = 15
	clockReads  = 1000
)

// clockReadCost returns the median, over clockRounds rounds, of the time
// per read of clockReads back-to-back reads of the clock the live engine
// uses, in ns.
func clockReadCost() float64 {
	start := time.Now()
	var rounds [clockRounds]float64
	for i := range rounds {
		t0 := time.Since(start)
		var t time.Duration
		for range clockReads {
			t = time.Since(start)
		}
		rounds[i] = float64(t-t0) / clockReads
	}
	slices.Sort(rounds[:])
	return rounds[clockRounds/2]
}

// noop admits everything at once: the calibration limiter.
type noop struct{}

func (noop) Allow(time.Duration, string, int64) (algorithms.Decision, error) {
	return algorithms.Decision{Allowed: true}, nil
}

func noopTarget() call.Target {
	return call.Target{Name: "calibration", Backend: "memory", New: func() (algorithms.Limiter, error) { return noop{}, nil }}
}

func calibrationOf(run *result.Run) *result.Calibration {
	l := run.Live
	cal := &result.Calibration{
		DurationNS: l.SpanNS, OverheadNS: l.HarnessOverheadNS,
		Latency: run.Latency, Service: l.Service, Lateness: l.Lateness,
		AchievedRatePerS: l.AchievedRatePerS, LatePct: l.LatePct,
	}
	if own := l.Calibration; own != nil { // the overhead the pass measured
		cal.OverheadMeanNS, cal.Overhead = own.OverheadMeanNS, own.Overhead
	}
	return cal
}
