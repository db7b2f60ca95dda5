// Package algotest is the conformance suite for algorithms.Limiter: every
// algorithm of ratebench's list runs it, configured by the traits the list
// gives it (ForEntry), in memory, per key, on Redis and on SQLite; and so
// can a user's own limiter, in one call:
//
//	func TestMyLimiter(t *testing.T) {
//		algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
//			return mylimiter.New(p)
//		}})
//	}
//
// Each property is a subtest scripted at fixed instants (time is passed in,
// nothing sleeps); a failure names the step, e.g.
// `step 3: Allow(t0+1.5s, "k", 1) = {Allowed:false ...}, want allowed`.
package algotest

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// Config describes the limiter under test. Only New is required.
type Config struct {
	// New builds a fresh limiter for a policy; it must return an error
	// wrapping algorithms.ErrInvalidPolicy for an invalid one.
	New func(algorithms.Policy) (algorithms.Limiter, error)
	// Key is the key every request carries; default "k".
	Key string
	// IgnoresBurst is true for window algorithms, whose capacity is the
	// limit L whatever the burst B.
	IgnoresBurst bool
	// Shaper is true for limiters that delay admitted requests
	// (leaky-queue); meters must never delay.
	Shaper bool
	// Pacer is true for shapers that never reject (uber's ratelimit): only
	// the properties about errors, delays and concurrency apply.
	Pacer bool
	// RetrySlack is how far RetryAfter and ResetAfter may be off, for
	// limiters that compute in floating point (x/time/rate); 0 means exact
	// to the nanosecond.
	RetrySlack time.Duration
	// CountsDenied is true for limiters that count denied requests as
	// admitted ones do (sliding-log-all, sliding-counter-all,
	// token-bucket-debt): a rejected request takes quota, so that a client
	// that keeps sending is held off. For them, and only for them:
	//   - RejectionConsumesNothing is skipped, since by design a rejection
	//     consumes; RejectionCounts checks the opposite instead;
	//   - RetryAfterExact and ResetAfterExact probe "1ns before" and "at"
	//     on two replays of the script, not one after the other on one
	//     limiter, since the first probe, rejected, counts against the
	//     second;
	//   - RefillOverTime sends one request every 2T (half the rate L/W)
	//     instead of one every W/20 (twice the rate), at which such a
	//     limiter never admits again: that is its starvation, on purpose;
	//   - CostAboveBurst expects the whole capacity back at
	//     now+ResetAfter of the last request above it rather than at now,
	//     since such a request may count as well.
	CountsDenied bool
	// Skip names properties that do not hold for this limiter, each with
	// the reason, which the suite logs (e.g. a peer library's known quirk).
	Skip map[string]string
	// T0 is the instant the scripts start at, a multiple of every window
	// used; default 3s (late enough to go backwards from).
	T0 time.Duration
	// Concurrency is the number of goroutines in the concurrent property;
	// default 8.
	Concurrency int
}

// Policies the scripts use: T = 100ms, and bursts below, at and above L.
var (
	even  = algorithms.Policy{Limit: 10, Window: time.Second}
	small = algorithms.Policy{Limit: 10, Window: time.Second, Burst: 4}
	large = algorithms.Policy{Limit: 10, Window: time.Second, Burst: 25}
)

// Run runs every property of the suite as a subtest of t.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.New == nil {
		t.Fatal("algotest: Config.New is nil")
	}
	if cfg.Key == "" {
		cfg.Key = "k"
	}
	if cfg.T0 == 0 {
		cfg.T0 = 3 * time.Second
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	props := []struct {
		name   string
		pacer  bool // applies to pacers too
		denied applies
		fn     func(*testing.T, Config)
	}{
		{"InvalidPolicy", true, always, invalidPolicy},
		{"InvalidCost", true, always, invalidCost},
		{"StartsFull", false, always, startsFull},
		{"RemainingExact", false, always, remainingExact},
		{"RetryAfterExact", false, always, retryAfterExact},
		{"ResetAfterExact", false, always, resetAfterExact},
		{"RefillOverTime", false, always, refillOverTime},
		{"RejectionConsumesNothing", false, unlessCountsDenied, rejectionConsumesNothing},
		{"RejectionCounts", false, onlyCountsDenied, rejectionCounts},
		{"CostAboveBurst", false, always, costAboveBurst},
		{"ClockBackwards", false, always, clockBackwards},
		{"SaturatesAfterIdle", false, always, saturatesAfterIdle},
		{"HundredYearJump", false, always, hundredYearJump},
		{"Delays", true, always, pacerDelays},
		{"ConcurrentExactQuota", true, always, concurrentExactQuota},
	}
	for _, p := range props {
		t.Run(p.name, func(t *testing.T) {
			if why, ok := cfg.Skip[p.name]; ok {
				t.Skip(why)
			}
			if cfg.Pacer && !p.pacer {
				t.Skip("does not apply to a pacer, which never rejects")
			}
			switch {
			case p.denied == unlessCountsDenied && cfg.CountsDenied:
				t.Skip("a limiter that counts denied requests consumes quota on a rejection by design (Config.CountsDenied); RejectionCounts checks that")
			case p.denied == onlyCountsDenied && !cfg.CountsDenied:
				t.Skip("only for a limiter that counts denied requests (Config.CountsDenied)")
			}
			p.fn(t, cfg)
		})
	}
}

// applies says which limiters a property applies to, as to whether they
// count denied requests.
type applies int

const (
	always             applies = iota
	unlessCountsDenied         // only to limiters whose rejections consume nothing
	onlyCountsDenied           // only to limiters that count denied requests
)

// capacity is what a fresh limiter admits at one instant.
func (c Config) capacity(p algorithms.Policy) int64 {
	p = p.WithDefaults()
	if c.IgnoresBurst {
		return p.Limit
	}
	return p.Burst
}

// script runs numbered steps against one limiter and fails with the step.
type script struct {
	t   *testing.T
	cfg Config
	l   algorithms.Limiter
	n   int
}

func newScript(t *testing.T, cfg Config, p algorithms.Policy) *script {
	t.Helper()
	l, err := cfg.New(p)
	if err != nil {
		t.Fatalf("New(%v) = %v", p, err)
	}
	return &script{t: t, cfg: cfg, l: l}
}

func (s *script) label(at time.Duration, cost int64) string {
	return fmt.Sprintf("step %d: Allow(%s, %q, %d)", s.n, rel(at, s.cfg.T0), s.cfg.Key, cost)
}

// rel formats an instant as an offset from t0: "t0+1.5s", "t0-1ns".
func rel(at, t0 time.Duration) string {
	if at < t0 {
		return "t0-" + (t0 - at).String()
	}
	return "t0+" + (at - t0).String()
}

// allow runs one step and fails on an error.
func (s *script) allow(at time.Duration, cost int64) algorithms.Decision {
	s.t.Helper()
	s.n++
	d, err := s.l.Allow(at, s.cfg.Key, cost)
	if err != nil {
		s.t.Fatalf("%s: error %v", s.label(at, cost), err)
	}
	if d.Remaining < 0 {
		s.t.Fatalf("%s = %+v: negative remaining", s.label(at, cost), d)
	}
	if d.Allowed && d.RetryAfter != 0 {
		s.t.Fatalf("%s = %+v: allowed with a retry-after", s.label(at, cost), d)
	}
	if !d.Allowed && d.RetryAfter <= 0 {
		s.t.Fatalf("%s = %+v: rejected without a positive retry-after", s.label(at, cost), d)
	}
	return d
}

// want runs one step and fails unless it is allowed as wanted.
func (s *script) want(at time.Duration, cost int64, allowed bool) algorithms.Decision {
	s.t.Helper()
	d := s.allow(at, cost)
	if d.Allowed != allowed {
		s.t.Fatalf("%s = %+v, want allowed=%v", s.label(at, cost), d, allowed)
	}
	return d
}

// drain admits unit requests at one instant until the first rejection and
// returns how many were admitted (at most limit+1 tries).
func (s *script) drain(at time.Duration, limit int64) int64 {
	s.t.Helper()
	for i := int64(0); i <= limit; i++ {
		if !s.allow(at, 1).Allowed {
			return i
		}
	}
	return limit + 1
}

func invalidPolicy(t *testing.T, cfg Config) {
	nan := math.NaN()
	_, nanErr := algorithms.PolicyFromFloat(nan, time.Second, 0)
	_, infErr := algorithms.PolicyFromFloat(math.Inf(1), time.Second, 0)
	if !errors.Is(nanErr, algorithms.ErrInvalidPolicy) || !errors.Is(infErr, algorithms.ErrInvalidPolicy) {
		t.Fatalf("PolicyFromFloat(NaN/Inf) = %v, %v; want ErrInvalidPolicy", nanErr, infErr)
	}
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
	}{
		{"zero limit", algorithms.Policy{Limit: 0, Window: time.Second}},
		{"negative limit", algorithms.Policy{Limit: -5, Window: time.Second}},
		{"zero window", algorithms.Policy{Limit: 10}},
		{"negative window", algorithms.Policy{Limit: 10, Window: -time.Second}},
		{"negative burst", algorithms.Policy{Limit: 10, Window: time.Second, Burst: -1}},
		{"more than one per nanosecond", algorithms.Policy{Limit: 2e9, Window: time.Second}},
		{"burst overflows", algorithms.Policy{Limit: 1, Window: time.Hour, Burst: math.MaxInt64 / 2}},
		{"window overflows", algorithms.Policy{Limit: 1, Window: time.Duration(math.MaxInt64)}},
	} {
		if _, err := cfg.New(tc.p); !errors.Is(err, algorithms.ErrInvalidPolicy) {
			t.Errorf("New(%s %+v) error = %v, want ErrInvalidPolicy", tc.name, tc.p, err)
		}
	}
}

func invalidCost(t *testing.T, cfg Config) {
	l, err := cfg.New(even)
	if err != nil {
		t.Fatal(err)
	}
	for _, cost := range []int64{0, -1, math.MinInt64} {
		if _, err := l.Allow(cfg.T0, cfg.Key, cost); !errors.Is(err, algorithms.ErrInvalidCost) {
			t.Errorf("Allow(cost %d) error = %v, want ErrInvalidCost", cost, err)
		}
	}
}

// startsFull: a fresh limiter admits exactly its capacity at one instant.
func startsFull(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		s := newScript(t, cfg, p)
		if got, want := s.drain(cfg.T0, 2*cfg.capacity(p)), cfg.capacity(p); got != want {
			t.Errorf("policy %v: admitted %d at one instant, want %d", p, got, want)
		}
	}
}

// remainingExact: after each admit, exactly Remaining more unit requests
// are admitted at the same instant.
func remainingExact(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		for used := int64(0); used < cfg.capacity(p); used += 3 {
			s := newScript(t, cfg, p)
			d := s.want(cfg.T0, 1, true)
			for range used {
				d = s.want(cfg.T0, 1, true)
			}
			if got := s.drain(cfg.T0, cfg.capacity(p)); got != d.Remaining {
				t.Fatalf("policy %v: Remaining = %d after %d admits, but %d more were admitted", p, d.Remaining, used+1, got)
			}
		}
	}
}

// retryAfterExact: a rejected request is admitted at now+RetryAfter and
// not a nanosecond earlier, from several states and costs.
func retryAfterExact(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		for _, offset := range []time.Duration{0, 1, 37 * time.Millisecond, 250 * time.Millisecond, 999 * time.Millisecond} {
			for _, cost := range []int64{1, 2, cfg.capacity(p)} {
				at := cfg.T0 + offset
				replay := func() (*script, algorithms.Decision) {
					s := newScript(t, cfg, p)
					s.drain(cfg.T0, cfg.capacity(p))
					return s, s.allow(at, cost)
				}
				s, d := replay()
				if d.Allowed {
					continue // refilled already: nothing to retry
				}
				if d.RetryAfter == algorithms.Never {
					t.Fatalf("%s: RetryAfter = Never for a cost within capacity", s.label(at, cost))
				}
				before, after := at+d.RetryAfter-1, at+d.RetryAfter
				if cfg.RetrySlack != 0 {
					before, after = before-cfg.RetrySlack, after+cfg.RetrySlack
				}
				cfg.probe(s, replay, probe{before, cost, false}, probe{after, cost, true})
			}
		}
	}
}

// probe is a request whose decision a property expects.
type probe struct {
	at      time.Duration
	cost    int64
	allowed bool
}

// probe runs the probes on s one after the other; for a limiter that
// counts denied requests, where a rejected probe would count against the
// next one, it runs each on its own replay of the script that made s.
func (c Config) probe(s *script, replay func() (*script, algorithms.Decision), probes ...probe) {
	s.t.Helper()
	for i, p := range probes {
		if c.CountsDenied && i > 0 {
			s, _ = replay()
		}
		s.want(p.at, p.cost, p.allowed)
	}
}

// resetAfterExact: at now+ResetAfter the whole capacity is available again
// and, when ResetAfter > 0, not a nanosecond earlier.
func resetAfterExact(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		for _, used := range []int64{1, 2, cfg.capacity(p)} {
			replay := func() (*script, algorithms.Decision) {
				s := newScript(t, cfg, p)
				var d algorithms.Decision
				for range used {
					d = s.want(cfg.T0, 1, true)
				}
				return s, d
			}
			s, d := replay()
			if d.ResetAfter <= 0 {
				t.Fatalf("policy %v: ResetAfter = %v after %d admits, want > 0", p, d.ResetAfter, used)
			}
			full := cfg.capacity(p)
			at := cfg.T0 + d.ResetAfter
			if cfg.RetrySlack == 0 {
				cfg.probe(s, replay, probe{at - 1, full, false}, probe{at, full, true})
			} else {
				s.want(at+cfg.RetrySlack, full, true)
			}
		}
	}
}

// refillOverTime: an exhausted limiter admits again as time passes, and a
// long wait restores the whole capacity. The requests come at twice the
// rate, or, to a limiter that counts denied requests, at half of it.
func refillOverTime(t *testing.T, cfg Config) {
	s := newScript(t, cfg, even)
	s.drain(cfg.T0, cfg.capacity(even))
	var admitted int64
	step := even.Window / 20
	if cfg.CountsDenied {
		step = 2 * even.Interval()
	}
	for at := cfg.T0; at < cfg.T0+3*even.Window; at += step {
		if s.allow(at, 1).Allowed {
			admitted++
		}
	}
	if admitted == 0 {
		t.Fatalf("no request admitted in 3 windows after exhaustion")
	}
	later := cfg.T0 + 10*even.Window
	if got, want := s.drain(later, 2*cfg.capacity(even)), cfg.capacity(even); got != want {
		t.Fatalf("after 10 windows admitted %d at one instant, want %d", got, want)
	}
}

// rejectionConsumesNothing: two limiters get the same script, and one of
// them also gets extra requests whenever it is out of quota; all of those
// are rejected and the two keep deciding alike.
func rejectionConsumesNothing(t *testing.T, cfg Config) {
	a := newScript(t, cfg, small)
	b := newScript(t, cfg, small)
	c := cfg.capacity(small)
	for i := range 40 {
		at := cfg.T0 + time.Duration(i)*even.Window/7
		for range 3 {
			da, db := a.allow(at, 1), b.allow(at, 1)
			if da.Allowed != db.Allowed || da.Remaining != db.Remaining {
				t.Fatalf("step %d at %s: %+v after rejections, %+v without", b.n, rel(at, cfg.T0), db, da)
			}
			if db.Allowed {
				continue
			}
			for _, cost := range []int64{1, 2, c, c + 1} {
				if d := b.allow(at, cost); d.Allowed {
					t.Fatalf("%s = %+v: admitted right after a rejection", b.label(at, cost), d)
				}
			}
		}
	}
}

// rejectionCounts, for a limiter that counts denied requests: two
// limiters are exhausted at t0, then get one unit request every 2T (half
// the rate, at which such a limiter admits again after a while), and one
// of them also gets extra requests whenever it rejects one, the first
// right after it was exhausted. The extras are rejected; the limiter that
// gets them never admits a request that the other rejects (they only take
// quota away), and it admits fewer in all.
func rejectionCounts(t *testing.T, cfg Config) {
	a := newScript(t, cfg, even)
	b := newScript(t, cfg, even)
	c := cfg.capacity(even)
	a.drain(cfg.T0, c)
	b.drain(cfg.T0, c)
	extras := func(at time.Duration) {
		t.Helper()
		for _, cost := range []int64{1, 2, c} {
			if d := b.allow(at, cost); d.Allowed {
				t.Fatalf("%s = %+v: admitted right after a rejection", b.label(at, cost), d)
			}
		}
	}
	extras(cfg.T0)
	var na, nb int
	for at := cfg.T0 + 2*even.Interval(); at <= cfg.T0+4*even.Window; at += 2 * even.Interval() {
		da, db := a.allow(at, 1), b.allow(at, 1)
		if db.Allowed && !da.Allowed {
			t.Fatalf("step %d at %s: %+v after extra requests, %+v without: admitted only with them", b.n, rel(at, cfg.T0), db, da)
		}
		if da.Allowed {
			na++
		}
		if db.Allowed {
			nb++
			continue
		}
		extras(at)
	}
	if nb >= na {
		t.Fatalf("admitted %d with extra rejected requests, %d without: the rejections took nothing", nb, na)
	}
}

// costAboveBurst: a cost above the capacity is rejected with RetryAfter
// Never, consumes nothing (or, if it counts denied requests, no more than
// ResetAfter says), and an error is not returned.
func costAboveBurst(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		s := newScript(t, cfg, p)
		c := cfg.capacity(p)
		var d algorithms.Decision
		for _, cost := range []int64{c + 1, math.MaxInt64 / 1_000_000_000, math.MaxInt64} {
			d = s.want(cfg.T0, cost, false)
			if d.RetryAfter != algorithms.Never || d.Remaining > c {
				t.Fatalf("%s = %+v: want RetryAfter = algorithms.Never and Remaining <= %d", s.label(cfg.T0, cost), d, c)
			}
		}
		at := cfg.T0
		if cfg.CountsDenied {
			at += d.ResetAfter
		}
		s.want(at, c, true)
	}
}

// clockBackwards: after exhaustion, instants earlier than the last one
// admit nothing, and returning to the present finds no new quota.
func clockBackwards(t *testing.T, cfg Config) {
	s := newScript(t, cfg, even)
	s.drain(cfg.T0, cfg.capacity(even))
	for _, back := range []time.Duration{1, even.Window / 2, even.Window, 2 * even.Window, cfg.T0} {
		s.want(cfg.T0-back, 1, false)
	}
	s.want(cfg.T0, 1, false)
	// A request admitted late is not undone by one that comes back in time.
	later := cfg.T0 + 5*even.Window
	got := s.drain(later, 2*cfg.capacity(even))
	s.want(later-even.Window/2, 1, false)
	s.want(later, 1, false)
	if got != cfg.capacity(even) {
		t.Fatalf("after 5 windows admitted %d, want %d", got, cfg.capacity(even))
	}
	// Going back while quota remains must not refill the span between the
	// two instants a second time (x/time/rate does: see peers).
	h := newScript(t, cfg, even)
	c := cfg.capacity(even)
	var total int64
	for range c / 2 {
		if h.allow(cfg.T0, 1).Allowed {
			total++
		}
	}
	if h.allow(cfg.T0-even.Window/2, 1).Allowed {
		total++
	}
	total += h.drain(cfg.T0, 2*c)
	if total > c {
		t.Fatalf("half full, one request half a window back, then back to t0: admitted %d in all, want at most %d", total, c)
	}
}

// saturatesAfterIdle: a long idle period restores the capacity, not more.
func saturatesAfterIdle(t *testing.T, cfg Config) {
	for _, p := range []algorithms.Policy{even, small, large} {
		s := newScript(t, cfg, p)
		s.want(cfg.T0, 1, true)
		idle := cfg.T0 + 1000*p.Window
		if got, want := s.drain(idle, 3*cfg.capacity(p)), cfg.capacity(p); got != want {
			t.Fatalf("policy %v: after 1000 idle windows admitted %d at one instant, want %d", p, got, want)
		}
	}
}

// hundredYearJump: a jump of 100 years neither overflows nor saturates
// wrongly, and time keeps working after it.
func hundredYearJump(t *testing.T, cfg Config) {
	const century = 100 * 365 * 24 * time.Hour
	s := newScript(t, cfg, even)
	s.drain(cfg.T0, cfg.capacity(even))
	far := cfg.T0 + century
	if got, want := s.drain(far, 2*cfg.capacity(even)), cfg.capacity(even); got != want {
		t.Fatalf("100 years later admitted %d at one instant, want %d", got, want)
	}
	d := s.want(far, 1, false)
	if d.RetryAfter > 2*even.Window || d.ResetAfter > 3*even.Window || d.ResetAfter < 0 {
		t.Fatalf("100 years later: %+v, want retry and reset within a few windows", d)
	}
	if got, want := s.drain(far+10*even.Window, 2*cfg.capacity(even)), cfg.capacity(even); got != want {
		t.Fatalf("100 years and 10 windows later admitted %d, want %d", got, want)
	}
}

// pacerDelays: delays are never negative, rejections have none, shapers
// delay under load and meters never delay.
func pacerDelays(t *testing.T, cfg Config) {
	s := newScript(t, cfg, even)
	var shaped bool
	for i := range 30 {
		d := s.allow(cfg.T0+time.Duration(i)*time.Millisecond, 1)
		if d.Delay < 0 {
			t.Fatalf("step %d: negative delay %v", s.n, d.Delay)
		}
		if !d.Allowed && d.Delay != 0 {
			t.Fatalf("step %d: rejected with a delay %v", s.n, d.Delay)
		}
		shaped = shaped || d.Delay > 0
	}
	if shaper := cfg.Shaper || cfg.Pacer; shaper != shaped {
		t.Fatalf("at 30x its rate: delayed some = %v, want %v (shaper)", shaped, shaper)
	}
}

// concurrentExactQuota: G goroutines deciding at one instant admit exactly
// the capacity, never more (run it with -race). A pacer admits all, with
// distinct delays.
func concurrentExactQuota(t *testing.T, cfg Config) {
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 50}
	l, err := cfg.New(p)
	if err != nil {
		t.Fatal(err)
	}
	per := 4 * cfg.capacity(p) / int64(cfg.Concurrency)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	delays := map[time.Duration]int{}
	errs := make(chan error, cfg.Concurrency)
	for range cfg.Concurrency {
		wg.Go(func() {
			for range per {
				d, err := l.Allow(cfg.T0, cfg.Key, 1)
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed {
					admitted.Add(1)
					mu.Lock()
					delays[d.Delay]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cfg.Pacer {
		if got, want := admitted.Load(), per*int64(cfg.Concurrency); got != want || len(delays) != int(want) {
			t.Fatalf("pacer admitted %d with %d distinct delays, want %d and %d", got, len(delays), want, want)
		}
		return
	}
	if got, want := admitted.Load(), cfg.capacity(p); got != want {
		t.Fatalf("%d goroutines at one instant admitted %d, want exactly %d", cfg.Concurrency, got, want)
	}
}
