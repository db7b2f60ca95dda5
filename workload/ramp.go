package workload

import (
	"math"
	"time"
)

// Ramp is the ramp workload: deterministic arrivals whose rate changes
// linearly from Rate at 0 to RateEnd at Duration, keys k0 .. k{Keys-1}
// round-robin. Its fields are plain values, with no defaults: Spec.Source
// fills them in. It is safe for concurrent Opens as long as its fields do
// not change.
type Ramp struct {
	Rate     float64       // arrivals per second at 0, finite and > 0
	RateEnd  float64       // arrivals per second at Duration, finite and > 0
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
}

func rampOf(s Spec) (generated, error) {
	return &Ramp{Rate: s.Rate, RateEnd: s.RateEnd, Duration: s.Duration, Keys: s.Keys, Cost: s.Cost}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (r *Ramp) Validate() error {
	if err := firstError(checkShape(r.Duration, r.Keys, r.Cost), checkRate("RateEnd", r.RateEnd), needRate(r.Rate, "ramp")); err != nil {
		return err
	}
	if r.RateEnd == 0 {
		return invalid("RateEnd", r.RateEnd, "must be > 0: ramp needs an end rate (arrivals per second)")
	}
	return nil
}

// Open implements Source.
func (r *Ramp) Open(sh Shard) (Stream, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	st := &rampStream{
		b:    r.Rate,
		a4:   2 * (r.RateEnd - r.Rate) / r.Duration.Seconds(),
		dur:  r.Duration,
		cost: r.Cost,
		keys: newRoundRobin(r.Keys),
	}
	return openShard(r, st, sh), nil
}

// Span implements Source: Duration.
func (r *Ramp) Span() time.Duration { return r.Duration }

// Record implements Source.
func (r *Ramp) Record() map[string]any {
	p := record("ramp", r.Duration, r.Keys, r.Cost)
	p["rate"] = r.Rate
	p["rate_end"] = r.RateEnd
	return p
}

// info counts the mean of the two rates over Duration.
func (r *Ramp) info() Info {
	return Info{Arrivals: (r.Rate + r.RateEnd) / 2 * r.Duration.Seconds(), Keys: r.Keys, Span: r.Duration}
}

// rampStream is deterministic: the rate r(t) = Rate + (RateEnd-Rate)*t/D
// rises (or falls) linearly over the run, and arrival i comes at the t
// where its integral Rate*t + (RateEnd-Rate)*t²/(2D) reaches i, found in
// closed form from i (no stepping, so no drift). The first arrival is at 0
// and the count is the integral, (Rate+RateEnd)/2 * D, rounded up. Keys go
// round-robin.
type rampStream struct {
	i    float64 // index of the next arrival
	b    float64 // Rate, per second
	a4   float64 // 4a, with a = (RateEnd-Rate)/(2D), per second²
	prev time.Duration
	dur  time.Duration
	cost int64
	keys roundRobin
	done bool
}

func (r *rampStream) Next() (Arrival, bool) {
	if r.done {
		return Arrival{}, false
	}
	// a t² + b t = i  =>  t = 2i / (b + sqrt(b² + 4ai)), stable for any a.
	disc := r.b*r.b + r.a4*r.i
	if !(disc >= 0) { // a falling ramp has no i-th arrival
		r.done = true
		return Arrival{}, false
	}
	ns := 2 * r.i / (r.b + math.Sqrt(disc)) * 1e9
	if !(ns < float64(r.dur)) {
		r.done = true
		return Arrival{}, false
	}
	at := max(time.Duration(ns), r.prev) // rounding must not reorder
	if at >= r.dur {
		r.done = true
		return Arrival{}, false
	}
	r.i++
	r.prev = at
	return Arrival{At: at, Key: r.keys.key(), Cost: r.cost}, true
}

func (r *rampStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (r *rampStream) Close() error { return nil }
