package workload

import (
	"cmp"
	"math"
	"time"
)

// Burst is the burst workload in its N-every-T form: Size arrivals at the
// same instant every Every, the first at 0, keys k0 .. k{Keys-1}
// round-robin. Its fields are plain values, with no defaults: Spec.Source
// fills them in. It is safe for concurrent Opens as long as its fields do
// not change.
type Burst struct {
	Size     int           // arrivals per burst, >= 1
	Every    time.Duration // time between bursts, > 0
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
}

// OnOff is the burst workload in its on/off form: arrivals spaced 1/Rate
// apart during On, from the start of each period, then silence during
// Off, repeating; keys k0 .. k{Keys-1} round-robin. Its fields are plain
// values, with no defaults: Spec.Source fills them in. It is safe for
// concurrent Opens as long as its fields do not change.
type OnOff struct {
	Rate     float64       // arrivals per second during On, finite and > 0
	On, Off  time.Duration // the two halves of a period, each > 0
	Duration time.Duration // arrivals come before it; > 0
	Keys     int           // distinct keys, >= 1
	Cost     int64         // the cost of every arrival, >= 1
}

// burstOf makes the form of burst that s sets: on/off when On or Off is
// set, N every T otherwise, whose zero fields take their defaults.
func burstOf(s Spec) (generated, error) {
	if s.On == 0 && s.Off == 0 {
		return &Burst{Size: cmp.Or(s.BurstSize, defaultBurstSize), Every: cmp.Or(s.BurstEvery, defaultBurstEvery),
			Duration: s.Duration, Keys: s.Keys, Cost: s.Cost}, nil
	}
	switch {
	case s.BurstSize != 0:
		return nil, invalid("BurstSize", s.BurstSize, "cannot be combined with on/off: burst is either N every T or on/off")
	case s.BurstEvery != 0:
		return nil, invalid("BurstEvery", s.BurstEvery, "cannot be combined with on/off: burst is either N every T or on/off")
	}
	return &OnOff{Rate: s.Rate, On: s.On, Off: s.Off, Duration: s.Duration, Keys: s.Keys, Cost: s.Cost}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (b *Burst) Validate() error {
	if err := checkShape(b.Duration, b.Keys, b.Cost); err != nil {
		return err
	}
	switch {
	case b.Size < 1:
		return invalid("BurstSize", b.Size, "must be >= 1")
	case b.Every <= 0:
		return invalid("BurstEvery", b.Every, "must be > 0")
	}
	return nil
}

// Open implements Source.
func (b *Burst) Open(sh Shard) (Stream, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st := &nEveryStream{size: b.Size, left: b.Size, every: b.Every, dur: b.Duration, cost: b.Cost, keys: newRoundRobin(b.Keys)}
	return openShard(b, st, sh), nil
}

// Span implements Source: Duration.
func (b *Burst) Span() time.Duration { return b.Duration }

// Record implements Source.
func (b *Burst) Record() map[string]any {
	p := record("burst", b.Duration, b.Keys, b.Cost)
	p["form"] = "n-every-t"
	p["burst_size"] = b.Size
	p["burst_every_ns"] = int64(b.Every)
	return p
}

// info counts Size per Every from 0.
func (b *Burst) info() Info {
	bursts := math.Ceil(float64(b.Duration) / float64(b.Every))
	return Info{Arrivals: float64(b.Size) * bursts, Keys: b.Keys, Span: b.Duration}
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (o *OnOff) Validate() error {
	if err := checkShape(o.Duration, o.Keys, o.Cost); err != nil {
		return err
	}
	switch {
	case o.On <= 0:
		return invalid("On", o.On, "must be > 0 when off is set (on/off burst)")
	case o.Off <= 0:
		return invalid("Off", o.Off, "must be > 0 when on is set (on/off burst)")
	case o.On > math.MaxInt64-o.Off:
		return invalid("Off", o.Off, "overflows on+off")
	}
	return needRate(o.Rate, "burst on/off")
}

// Open implements Source.
func (o *OnOff) Open(sh Shard) (Stream, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	st := &onOffStream{perSec: o.Rate, on: float64(o.On), period: o.On + o.Off, dur: o.Duration, cost: o.Cost, keys: newRoundRobin(o.Keys)}
	return openShard(o, st, sh), nil
}

// Span implements Source: Duration.
func (o *OnOff) Span() time.Duration { return o.Duration }

// Record implements Source.
func (o *OnOff) Record() map[string]any {
	p := record("burst", o.Duration, o.Keys, o.Cost)
	p["form"] = "on-off"
	p["rate"] = o.Rate
	p["on_ns"] = int64(o.On)
	p["off_ns"] = int64(o.Off)
	return p
}

// info counts Rate per second during each On.
func (o *OnOff) info() Info {
	period := float64(o.On) + float64(o.Off)
	full := math.Floor(float64(o.Duration) / period)
	on := full*float64(o.On) + min(float64(o.Duration)-full*period, float64(o.On))
	return Info{Arrivals: o.Rate * on / 1e9, Keys: o.Keys, Span: o.Duration}
}

// nEveryStream yields size arrivals at 0, size at every, size at 2*every,
// and so on, keys round-robin.
type nEveryStream struct {
	at    time.Duration // instant of the current burst
	left  int           // arrivals left in the current burst
	size  int
	every time.Duration
	dur   time.Duration
	cost  int64
	keys  roundRobin
	done  bool
}

func (b *nEveryStream) Next() (Arrival, bool) {
	if b.done {
		return Arrival{}, false
	}
	if b.left == 0 {
		if b.at > b.dur-b.every { // the next burst is at or past Duration
			b.done = true
			return Arrival{}, false
		}
		b.at += b.every
		b.left = b.size
	}
	if b.at >= b.dur {
		b.done = true
		return Arrival{}, false
	}
	b.left--
	return Arrival{At: b.at, Key: b.keys.key(), Cost: b.cost}, true
}

func (b *nEveryStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (b *nEveryStream) Close() error { return nil }

// onOffStream repeats a period of On+Off: arrivals at i*1e9/Rate ns from the
// start of the period while that is before On, then silence during Off.
// Keys go round-robin.
type onOffStream struct {
	start  time.Duration // start of the current period
	i      float64       // index of the next arrival in the period
	perSec float64
	on     float64 // On in ns
	period time.Duration
	dur    time.Duration
	cost   int64
	keys   roundRobin
	done   bool
}

func (o *onOffStream) Next() (Arrival, bool) {
	for !o.done {
		off := o.i * 1e9 / o.perSec
		if off < o.on {
			at := o.start + time.Duration(off) // < start+On, no overflow: start < Duration
			if at >= o.dur {
				break
			}
			o.i++
			return Arrival{At: at, Key: o.keys.key(), Cost: o.cost}, true
		}
		if o.start > o.dur-o.period { // the next period starts at or past Duration
			break
		}
		o.start += o.period
		o.i = 0
	}
	o.done = true
	return Arrival{}, false
}

func (o *onOffStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (o *onOffStream) Close() error { return nil }
