package workload

import (
	"math/rand/v2"
	"time"
)

func checkPoisson(s Spec) error { return needRate(s, "poisson") }

func paramsPoisson(s Spec, p map[string]any) {
	p["rate"] = s.Rate
	p["seed"] = s.Seed
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

func newPoissonClock(s Spec, rng *rand.Rand) poissonClock {
	return poissonClock{rng: rng, meanNs: 1e9 / s.Rate, end: float64(s.Duration), dur: s.Duration}
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

func newPoisson(s Spec) (Stream, error) {
	pcg, rng := newRand(s.Seed)
	return &poissonStream{
		clock: newPoissonClock(s, rng),
		pcg:   pcg,
		keys:  newKeySet(s.Keys),
		cost:  s.Cost,
	}, nil
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
