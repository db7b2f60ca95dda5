package workload

import (
	"math"
	"math/rand/v2"
	"time"
)

// Zipf is the zipf workload: a Poisson process at Rate, as Poisson's,
// whose keys are drawn by rand.Zipf over k0 .. k{Keys-1}: key k{i} with
// probability proportional to 1/(i+1)^S, so k0 is the most popular. Its
// fields are plain values, with no defaults: Spec.Source fills them in.
// It is safe for concurrent Opens as long as its fields do not change.
type Zipf struct {
	Rate     float64       // mean arrivals per second, finite and > 0
	S        float64       // the exponent s, finite and > 1 (zipf_s in a Spec)
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
	Seed     uint64        // the same Seed gives the same arrivals
}

func zipfOf(s Spec) (generated, error) {
	return &Zipf{Rate: s.Rate, S: s.ZipfS, Duration: s.Duration, Keys: s.Keys, Cost: s.Cost, Seed: s.Seed}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (z *Zipf) Validate() error {
	return firstError(checkShape(z.Duration, z.Keys, z.Cost), checkZipfS(z.S), needRate(z.Rate, "zipf"))
}

// Open implements Source.
func (z *Zipf) Open(sh Shard) (Stream, error) {
	if err := z.Validate(); err != nil {
		return nil, err
	}
	_, rng := newRand(z.Seed)
	st := &zipfStream{clock: newPoissonClock(z.Rate, z.Duration, rng), keys: newKeySet(z.Keys), cost: z.Cost}
	if z.Keys > 1 {
		st.zipf = rand.NewZipf(rng, z.S, 1, uint64(z.Keys-1))
	}
	return openShard(z, st, sh), nil
}

// Span implements Source: Duration.
func (z *Zipf) Span() time.Duration { return z.Duration }

// Record implements Source.
func (z *Zipf) Record() map[string]any {
	p := record("zipf", z.Duration, z.Keys, z.Cost)
	p["rate"] = z.Rate
	p["zipf_s"] = z.S
	p["seed"] = z.Seed
	return p
}

func (z *Zipf) info() Info {
	return Info{Arrivals: z.Rate * z.Duration.Seconds(), Keys: z.Keys, Span: z.Duration}
}

// weight is key k{i}'s share of the arrivals, up to a factor.
func (z *Zipf) weight(i int) float64 { return 1 / math.Pow(float64(i+1), z.S) }

// zipfStream is a Poisson process at Rate whose keys are drawn by
// rand.Zipf with v = 1 over Keys keys.
type zipfStream struct {
	clock poissonClock
	zipf  *rand.Zipf // nil when there is one key
	keys  keySet
	cost  int64
	done  bool
}

func (z *zipfStream) Next() (Arrival, bool) {
	if z.done {
		return Arrival{}, false
	}
	at, ok := z.clock.next()
	if !ok {
		z.done = true
		return Arrival{}, false
	}
	k := uint64(0)
	if z.zipf != nil {
		k = z.zipf.Uint64()
	}
	return Arrival{At: at, Key: z.keys.name(int(k)), Cost: z.cost}, true
}

func (z *zipfStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (z *zipfStream) Close() error { return nil }
