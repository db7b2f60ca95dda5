package workload

import "time"

// Constant is the constant workload: arrivals evenly spaced 1/Rate apart
// from 0, keys k0 .. k{Keys-1} round-robin. Its fields are plain values,
// with no defaults: Spec.Source fills them in. It is safe for concurrent
// Opens as long as its fields do not change.
type Constant struct {
	Rate     float64       // arrivals per second, finite and > 0
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
}

func constantOf(s Spec) (generated, error) {
	return &Constant{Rate: s.Rate, Duration: s.Duration, Keys: s.Keys, Cost: s.Cost}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (c *Constant) Validate() error {
	return firstError(checkShape(c.Duration, c.Keys, c.Cost), needRate(c.Rate, "constant"))
}

// Open implements Source.
func (c *Constant) Open(sh Shard) (Stream, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	st := &constantStream{perSec: c.Rate, end: float64(c.Duration), dur: c.Duration, cost: c.Cost, keys: newRoundRobin(c.Keys)}
	return openShard(c, st, sh), nil
}

// Span implements Source: Duration.
func (c *Constant) Span() time.Duration { return c.Duration }

// Record implements Source.
func (c *Constant) Record() map[string]any {
	p := record("constant", c.Duration, c.Keys, c.Cost)
	p["rate"] = c.Rate
	return p
}

func (c *Constant) info() Info {
	return Info{Arrivals: c.Rate * c.Duration.Seconds(), Keys: c.Keys, Span: c.Duration}
}

// constantStream yields arrival i at i*1e9/Rate ns: computed from i each
// time (one rounding, truncated to the nanosecond), so the times never
// drift however long the run. Keys go round-robin.
type constantStream struct {
	i      float64 // index of the next arrival, exact below 2^53
	perSec float64 // Rate
	end    float64 // Duration in ns, for the float test
	dur    time.Duration
	cost   int64
	keys   roundRobin
}

func (c *constantStream) Next() (Arrival, bool) {
	f := c.i * 1e9 / c.perSec
	if !(f < c.end) {
		return Arrival{}, false
	}
	at := time.Duration(f) // f < 2^63: no overflow
	if at >= c.dur {       // float64(Duration) may have rounded up
		return Arrival{}, false
	}
	c.i++
	return Arrival{At: at, Key: c.keys.key(), Cost: c.cost}, true
}

func (c *constantStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (c *constantStream) Close() error { return nil }
