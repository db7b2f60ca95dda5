package workload

import (
	"cmp"
	"math"
	"math/bits"
	"time"
)

// Boundary is the boundary workload, the fixed-window boundary attack:
// Limit arrivals spread evenly over [edge-Edge, edge-1] and Limit over
// [edge, edge+Edge-1] for window edges at EdgeOffset + Window*(1 +
// j*EveryWindows), j = 0, 1, ...; keys k0 .. k{Keys-1} round-robin. With
// Align AlignFirstRequest each attack begins with one arrival per key at
// edge-Window, which opens a window that ends at the edge. See Spec for
// the meaning of each field. Its fields are plain values, with no
// defaults: Spec.Source fills them in. It is safe for concurrent Opens as
// long as its fields do not change.
type Boundary struct {
	Limit        int64         // arrivals each side of an edge, >= 1
	Window       time.Duration // the limiter's window, > 0
	Edge         time.Duration // what each half spans, in [1ns, Window]
	EveryWindows int           // windows from one attack to the next, >= 1 (>= 3 with AlignFirstRequest)
	EdgeOffset   time.Duration // shift of every edge, in [0, Window)
	Align        string        // AlignEpoch (or "") or AlignFirstRequest
	Duration     time.Duration // arrivals come before it; > 0
	Keys         int           // distinct keys, >= 1
	Cost         int64         // the cost of every arrival, >= 1
}

// boundaryOf makes the boundary workload of s, its zero Edge, EveryWindows
// and Align taking their defaults.
func boundaryOf(s Spec) (generated, error) {
	b := &Boundary{Limit: s.Limit, Window: s.Window, Edge: s.Edge, EveryWindows: s.EveryWindows, EdgeOffset: s.EdgeOffset,
		Align: cmp.Or(s.Align, AlignEpoch), Duration: s.Duration, Keys: s.Keys, Cost: s.Cost}
	if b.Edge == 0 {
		b.Edge = max(s.Window/defaultEdgeDivisor, 1)
	}
	if b.EveryWindows == 0 {
		b.EveryWindows = defaultEveryWindows
		if b.Align == AlignFirstRequest {
			b.EveryWindows = minFirstRequestEvery
		}
	}
	return b, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field.
func (b *Boundary) Validate() error {
	if err := firstError(checkShape(b.Duration, b.Keys, b.Cost), checkAlign(b.Align)); err != nil {
		return err
	}
	switch {
	case b.Edge < 1:
		return invalid("Edge", b.Edge, "must be > 0")
	case b.EveryWindows < 1:
		return invalid("EveryWindows", b.EveryWindows, "must be >= 1")
	case b.EdgeOffset < 0:
		return invalid("EdgeOffset", b.EdgeOffset, "must be >= 0")
	case b.Limit < 1:
		return invalid("Limit", b.Limit, "must be >= 1: boundary sends limit arrivals each side of a window edge")
	case b.Limit > math.MaxInt64/2:
		return invalid("Limit", b.Limit, "is too large")
	case b.Window <= 0:
		return invalid("Window", b.Window, "must be > 0 for boundary")
	case b.Window > math.MaxInt64/time.Duration(b.EveryWindows):
		return invalid("EveryWindows", b.EveryWindows, "times window %v overflows", b.Window)
	case b.Edge > b.Window:
		return invalid("Edge", b.Edge, "must not exceed window %v", b.Window)
	case b.Edge > b.Window*time.Duration(b.EveryWindows)/2:
		return invalid("Edge", b.Edge, "must not exceed every_windows*window/2 = %v, or attacks would overlap",
			b.Window*time.Duration(b.EveryWindows)/2)
	case b.EdgeOffset >= b.Window:
		return invalid("EdgeOffset", b.EdgeOffset, "must be less than window %v", b.Window)
	case b.Align == AlignFirstRequest && b.EveryWindows < minFirstRequestEvery:
		return invalid("EveryWindows", b.EveryWindows, "must be >= %d with align %s: the window an attack opens must expire a whole window before the next attack opens its own",
			minFirstRequestEvery, AlignFirstRequest)
	}
	return nil
}

// Open implements Source.
func (b *Boundary) Open(sh Shard) (Stream, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st := &boundaryStream{
		edge:  b.Window + b.EdgeOffset,
		step:  b.Window * time.Duration(b.EveryWindows),
		span:  uint64(b.Edge - 1),
		limit: b.Limit,
		win:   b.Window,
		dur:   b.Duration,
		cost:  b.Cost,
		keys:  newRoundRobin(b.Keys),
	}
	if b.Align == AlignFirstRequest {
		st.opens = int64(b.Keys)
		st.j = -st.opens
	}
	return openShard(b, st, sh), nil
}

// Span implements Source: Duration.
func (b *Boundary) Span() time.Duration { return b.Duration }

// Record implements Source.
func (b *Boundary) Record() map[string]any {
	p := record("boundary", b.Duration, b.Keys, b.Cost)
	p["limit"] = b.Limit
	p["window_ns"] = int64(b.Window)
	p["edge_ns"] = int64(b.Edge)
	p["every_windows"] = b.EveryWindows
	if b.EdgeOffset != 0 { // said only when set: the default phase is implied
		p["edge_offset_ns"] = int64(b.EdgeOffset)
	}
	if b.Align == AlignFirstRequest {
		p["align"] = b.Align
	}
	return p
}

// info counts 2*Limit for each attacked edge whose first arrival
// (edge - Edge) comes before Duration.
func (b *Boundary) info() Info {
	info := Info{Keys: b.Keys, Span: b.Duration}
	first := float64(b.Window - b.Edge)
	if float64(b.Duration) <= first {
		return info
	}
	step := float64(b.Window) * float64(b.EveryWindows)
	attacks := math.Floor((float64(b.Duration)-first-1)/step) + 1
	info.Arrivals = 2 * float64(b.Limit) * attacks
	return info
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
