package workload

import (
	"math"
	"time"
)

func checkRamp(s Spec) error {
	if err := needRate(s, "ramp"); err != nil {
		return err
	}
	if s.RateEnd == 0 {
		return invalid("RateEnd", s.RateEnd, "must be > 0: ramp needs an end rate (arrivals per second)")
	}
	return nil
}

func paramsRamp(s Spec, p map[string]any) {
	p["rate"] = s.Rate
	p["rate_end"] = s.RateEnd
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

func newRamp(s Spec) (Stream, error) {
	d := s.Duration.Seconds()
	return &rampStream{
		b:    s.Rate,
		a4:   2 * (s.RateEnd - s.Rate) / d,
		dur:  s.Duration,
		cost: s.Cost,
		keys: newRoundRobin(s.Keys),
	}, nil
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
