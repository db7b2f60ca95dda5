package workload

import (
	"math/rand/v2"
	"time"
)

// Poisson is the poisson workload: a Poisson process at Rate (gaps drawn
// from an exponential distribution of mean 1/Rate, the first one gap
// after 0), keys k0 .. k{Keys-1} uniform at random, both drawn from a PCG
// seeded with Seed. Its fields are plain values, with no defaults:
// Spec.Source fills them in. It is safe for concurrent Opens as long as
// its fields do not change.
type Poisson struct {
	Rate     float64       // mean arrivals per second, finite and > 0
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
	Seed     uint64        // the same Seed gives the same arrivals
}

func poissonOf(s Spec) (generated, error) {
	return &Poisson{Rate: s.Rate, Duration: s.Duration, Keys: s.Keys, Cost: s.Cost, Seed: s.Seed}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (p *Poisson) Validate() error {
	return firstError(checkShape(p.Duration, p.Keys, p.Cost), needRate(p.Rate, "poisson"))
}

// Open implements Source.
func (p *Poisson) Open(sh Shard) (Stream, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pcg, rng := newRand(p.Seed)
	st := &poissonStream{
		clock: newPoissonClock(p.Rate, p.Duration, rng),
		pcg:   pcg,
		keys:  newKeySet(p.Keys),
		cost:  p.Cost,
	}
	return openShard(p, st, sh), nil
}

// Span implements Source: Duration.
func (p *Poisson) Span() time.Duration { return p.Duration }

// Record implements Source.
func (p *Poisson) Record() map[string]any {
	r := record("poisson", p.Duration, p.Keys, p.Cost)
	r["rate"] = p.Rate
	r["seed"] = p.Seed
	return r
}

func (p *Poisson) info() Info {
	return Info{Arrivals: p.Rate * p.Duration.Seconds(), Keys: p.Keys, Span: p.Duration}
}

// poissonClock is the arrival process shared by poisson and zipf: gaps drawn
// from an exponential distribution of mean 1/Rate (rand.ExpFloat64), summed
// in float64 nanoseconds (exact to well under 1ns for runs of weeks). The
// first arrival comes one gap after 0.
type poissonClock struct {
	rng    *rand.Rand
	t      float64 // instant of the last arrival, ns
	meanNs float64 // 1e9/Rate
	end    float64 // Duration in ns
	dur    time.Duration
}

func newPoissonClock(rate float64, d time.Duration, rng *rand.Rand) poissonClock {
	return poissonClock{rng: rng, meanNs: 1e9 / rate, end: float64(d), dur: d}
}

// next returns the instant of the next arrival, or false past Duration.
func (c *poissonClock) next() (time.Duration, bool) {
	c.t += c.rng.ExpFloat64() * c.meanNs
	if !(c.t < c.end) {
		return 0, false
	}
	at := time.Duration(c.t)
	if at >= c.dur {
		return 0, false
	}
	return at, true
}

// poissonStream is a Poisson process at Rate with keys uniform at random
// (see uniformKey), drawn from the same PCG as the gaps.
type poissonStream struct {
	clock poissonClock
	pcg   *rand.PCG // the source under clock.rng, called directly for keys
	keys  keySet
	cost  int64
	done  bool
}

func (p *poissonStream) Next() (Arrival, bool) {
	if p.done {
		return Arrival{}, false
	}
	at, ok := p.clock.next()
	if !ok {
		p.done = true
		return Arrival{}, false
	}
	k := 0
	if p.keys.n > 1 {
		k = uniformKey(p.pcg.Uint64(), p.keys.n)
	}
	return Arrival{At: at, Key: p.keys.name(k), Cost: p.cost}, true
}

func (p *poissonStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (p *poissonStream) Close() error { return nil }
