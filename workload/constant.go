package workload

import "time"

func checkConstant(s Spec) error { return needRate(s, "constant") }

func paramsConstant(s Spec, p map[string]any) { p["rate"] = s.Rate }

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

func newConstant(s Spec) (Stream, error) {
	return &constantStream{
		perSec: s.Rate,
		end:    float64(s.Duration),
		dur:    s.Duration,
		cost:   s.Cost,
		keys:   newRoundRobin(s.Keys),
	}, nil
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
