package workload

import (
	"math"
	"math/bits"
	"time"
)

func checkBoundary(s Spec) error {
	switch {
	case s.Limit < 1:
		return invalid("Limit", s.Limit, "must be >= 1: boundary sends limit arrivals each side of a window edge")
	case s.Limit > math.MaxInt64/2:
		return invalid("Limit", s.Limit, "is too large")
	case s.Window <= 0:
		return invalid("Window", s.Window, "must be > 0 for boundary")
	case s.Window > math.MaxInt64/time.Duration(s.EveryWindows):
		return invalid("EveryWindows", s.EveryWindows, "times window %v overflows", s.Window)
	case s.Edge > s.Window:
		return invalid("Edge", s.Edge, "must not exceed window %v", s.Window)
	case s.Edge > s.Window*time.Duration(s.EveryWindows)/2:
		return invalid("Edge", s.Edge, "must not exceed every_windows*window/2 = %v, or attacks would overlap",
			s.Window*time.Duration(s.EveryWindows)/2)
	case s.EdgeOffset >= s.Window:
		return invalid("EdgeOffset", s.EdgeOffset, "must be less than window %v", s.Window)
	case s.Align == AlignFirstRequest && s.EveryWindows < minFirstRequestEvery:
		return invalid("EveryWindows", s.EveryWindows, "must be >= %d with align %s: the window an attack opens must expire a whole window before the next attack opens its own",
			minFirstRequestEvery, AlignFirstRequest)
	}
	return nil
}

func paramsBoundary(s Spec, p map[string]any) {
	p["limit"] = s.Limit
	p["window_ns"] = int64(s.Window)
	p["edge_ns"] = int64(s.Edge)
	p["every_windows"] = s.EveryWindows
	if s.EdgeOffset != 0 { // said only when set: the default phase is implied
		p["edge_offset_ns"] = int64(s.EdgeOffset)
	}
	if s.Align == AlignFirstRequest {
		p["align"] = s.Align
	}
}

// boundaryStream attacks the window edges Window*(1 + j*EveryWindows):
// Limit arrivals spread evenly over [edge-Edge, edge-1], the last one at
// edge-1, then Limit spread over [edge, edge+Edge-1], the first one at the
// edge, every edge shifted by EdgeOffset. The two halves mirror each
// other; with Limit > Edge several arrivals share an instant. Keys go
// round-robin. With AlignFirstRequest each attack opens with one arrival
// per key at edge-Window.
type boundaryStream struct {
	edge  time.Duration // the edge under attack
	step  time.Duration // EveryWindows*Window
	span  uint64        // Edge-1: the spread of each half
	limit int64
	j     int64 // index of the next arrival of this attack, -opens .. 2*limit-1
	opens int64 // arrivals that open a key's window before each attack
	win   time.Duration
	dur   time.Duration
	cost  int64
	keys  roundRobin
	done  bool
}

func newBoundary(s Spec) (Stream, error) {
	b := &boundaryStream{
		edge:  s.Window + s.EdgeOffset,
		step:  s.Window * time.Duration(s.EveryWindows),
		span:  uint64(s.Edge - 1),
		limit: s.Limit,
		win:   s.Window,
		dur:   s.Duration,
		cost:  s.Cost,
		keys:  newRoundRobin(s.Keys),
	}
	if s.Align == AlignFirstRequest {
		b.opens = int64(s.Keys)
		b.j = -b.opens
	}
	return b, nil
}

// offset returns the distance from the edge of the i-th arrival of a half
// (0 .. limit-1): floor(i*(Edge-1)/(limit-1)), exact in 128 bits.
func (b *boundaryStream) offset(i int64) time.Duration {
	if b.limit == 1 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(i), b.span)
	q, _ := bits.Div64(hi, lo, uint64(b.limit-1)) // q <= span: no overflow
	return time.Duration(q)
}

func (b *boundaryStream) Next() (Arrival, bool) {
	if b.done {
		return Arrival{}, false
	}
	if b.j == 2*b.limit { // attack done: move to the next edge
		first := b.edge - time.Duration(b.span) - 1 // edge-Edge, >= 0
		if b.opens > 0 {
			first = b.edge - b.win
		}
		if first >= b.dur-b.step { // next attack starts at or past Duration
			b.done = true
			return Arrival{}, false
		}
		b.edge += b.step
		b.j = -b.opens
	}
	var at time.Duration
	if b.j < 0 {
		at = b.edge - b.win // opens a window that ends at the edge
	} else if b.j < b.limit {
		at = b.edge - 1 - b.offset(b.limit-1-b.j)
	} else {
		off := b.offset(b.j - b.limit)
		if off >= b.dur-b.edge { // edge+off >= Duration, without overflow
			b.done = true
			return Arrival{}, false
		}
		at = b.edge + off
	}
	if at >= b.dur {
		b.done = true
		return Arrival{}, false
	}
	b.j++
	return Arrival{At: at, Key: b.keys.key(), Cost: b.cost}, true
}

func (b *boundaryStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (b *boundaryStream) Close() error { return nil }
