package workload

import (
	"math"
	"time"
)

// isOnOff reports whether a burst spec uses the on/off form.
func (s Spec) isOnOff() bool { return s.On != 0 || s.Off != 0 }

func checkBurst(s Spec) error {
	if !s.isOnOff() {
		return nil // N every T; the defaults fill zero fields
	}
	switch {
	case s.BurstSize != 0:
		return invalid("BurstSize", s.BurstSize, "cannot be combined with on/off: burst is either N every T or on/off")
	case s.BurstEvery != 0:
		return invalid("BurstEvery", s.BurstEvery, "cannot be combined with on/off: burst is either N every T or on/off")
	case s.On == 0:
		return invalid("On", s.On, "must be > 0 when off is set (on/off burst)")
	case s.Off == 0:
		return invalid("Off", s.Off, "must be > 0 when on is set (on/off burst)")
	case s.On > math.MaxInt64-s.Off:
		return invalid("Off", s.Off, "overflows on+off")
	}
	return needRate(s, "burst on/off")
}

func paramsBurst(s Spec, p map[string]any) {
	if s.isOnOff() {
		p["form"] = "on-off"
		p["rate"] = s.Rate
		p["on_ns"] = int64(s.On)
		p["off_ns"] = int64(s.Off)
		return
	}
	p["form"] = "n-every-t"
	p["burst_size"] = s.BurstSize
	p["burst_every_ns"] = int64(s.BurstEvery)
}

func newBurst(s Spec) (Stream, error) {
	if s.isOnOff() {
		return &onOffStream{
			perSec: s.Rate,
			on:     float64(s.On),
			period: s.On + s.Off,
			dur:    s.Duration,
			cost:   s.Cost,
			keys:   newRoundRobin(s.Keys),
		}, nil
	}
	return &nEveryStream{
		size:  s.BurstSize,
		left:  s.BurstSize,
		every: s.BurstEvery,
		dur:   s.Duration,
		cost:  s.Cost,
		keys:  newRoundRobin(s.Keys),
	}, nil
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
