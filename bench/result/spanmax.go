package result

import (
	"slices"
	"strings"
)

// SpanMax finds, over a stream of (instant, cost) events given in
// non-decreasing instant order, the largest total cost inside any half-open
// span (t-W, t], and the shortest span inside one W (first to last event)
// holding more than a threshold: how far inside W an excess lies, which
// tells an excess from timing jitter. Instants and spans are in ns. It
// keeps only the events of the last W in a ring buffer, so its memory is
// bounded by what one span can hold.
//
// measure.Summary counts with it, for the engines and for traces alike.
// The zero value is not usable; use NewSpanMax. Not safe for concurrent
// use.
type SpanMax struct {
	w        int64
	at, cost []int64 // ring buffers of the events inside the span
	head, n  int
	sum      int64

	best       int64
	bestEnd    int64 // t of the first span with the best total
	bestLength int64 // first to last event inside that span

	// over is the threshold; shortest the shortest span found above it,
	// -1 while none. The events from the skip-th after head to the last
	// hold overSum: the shortest suffix of the ring still above over,
	// whose start only moves forward as events come.
	over, shortest int64
	skip           int
	overSum        int64
}

// NewSpanMax returns a SpanMax for spans of w ns that also looks for the
// shortest span holding more than over (none when over is math.MaxInt64).
func NewSpanMax(w, over int64) *SpanMax {
	return &SpanMax{w: w, at: make([]int64, 8), cost: make([]int64, 8), over: over, shortest: -1}
}

// Add records cost at instant at (ns, >= every instant added before).
func (s *SpanMax) Add(at, cost int64) {
	last := (s.head + s.n - 1) & (len(s.at) - 1)
	if s.n > 0 && s.at[last] == at {
		s.cost[last] += cost
	} else {
		if s.n == len(s.at) {
			s.grow()
		}
		i := (s.head + s.n) & (len(s.at) - 1)
		s.at[i], s.cost[i] = at, cost
		s.n++
	}
	s.sum += cost
	s.overSum += cost
	for s.at[s.head] <= at-s.w {
		s.sum -= s.cost[s.head]
		if s.skip > 0 {
			s.skip--
		} else {
			s.overSum -= s.cost[s.head]
		}
		s.head = (s.head + 1) & (len(s.at) - 1)
		s.n--
	}
	if s.sum > s.best {
		s.best, s.bestEnd, s.bestLength = s.sum, at, at-s.at[s.head]
	}
	if s.overSum > s.over {
		mask := len(s.at) - 1
		for s.skip < s.n-1 && s.overSum-s.cost[(s.head+s.skip)&mask] > s.over {
			s.overSum -= s.cost[(s.head+s.skip)&mask]
			s.skip++
		}
		if d := at - s.at[(s.head+s.skip)&mask]; s.shortest < 0 || d < s.shortest {
			s.shortest = d
		}
	}
}

func (s *SpanMax) grow() {
	at, cost := make([]int64, 2*len(s.at)), make([]int64, 2*len(s.at))
	for i := range s.n {
		j := (s.head + i) & (len(s.at) - 1)
		at[i], cost[i] = s.at[j], s.cost[j]
	}
	s.at, s.cost, s.head = at, cost, 0
}

// Best returns the largest total cost in any span (t-W, t], the t of the
// first span holding it (ns) and the time from its first to its last
// event (ns); all 0 before any event.
func (s *SpanMax) Best() (total, end, length int64) {
	return s.best, s.bestEnd, s.bestLength
}

// Shortest returns the shortest first-to-last span (ns) inside one W
// whose events cost more than the threshold; -1 when none does.
func (s *SpanMax) Shortest() int64 { return s.shortest }

// KeyTally is one key's share of a run as it is counted: requests offered
// and cost admitted, and the span counter of its admissions.
type KeyTally struct {
	Name              string
	Offered, Admitted int64
	Span              *SpanMax
}

// SetKeys fills r's per-key figures from the tallies of its keys, given in
// any order: the most admitted in any span W over the keys (ties go to the
// span that ends first, then to the first key by name, so that the same
// arrivals always name the same span), the shortest span over the theory,
// the key count, the key table (up to MaxKeysReported keys, by name) and
// Jain's index. The tallies are sorted by name.
func (r *Run) SetKeys(keys []*KeyTally) {
	slices.SortFunc(keys, func(a, b *KeyTally) int { return strings.Compare(a.Name, b.Name) })
	admitted := make([]int64, len(keys))
	for i, k := range keys {
		best, end, length := k.Span.Best()
		if i == 0 || best > r.MaxAdmittedInWindow || best == r.MaxAdmittedInWindow && end < r.MaxWindowEndNS {
			r.MaxAdmittedInWindow, r.MaxWindowEndNS, r.MaxWindowSpanNS = best, end, length
		}
		if v := k.Span.Shortest(); v >= 0 && (r.OverTheorySpanNS == nil || v < *r.OverTheorySpanNS) {
			r.OverTheorySpanNS = &v
		}
		admitted[i] = k.Admitted
	}
	r.KeyCount = len(keys)
	r.Keys = nil
	if len(keys) <= MaxKeysReported {
		r.Keys = make([]KeyCount, len(keys))
		for i, k := range keys {
			best, _, _ := k.Span.Best()
			r.Keys[i] = KeyCount{Key: k.Name, Offered: k.Offered, Admitted: k.Admitted, MaxInWindow: best}
		}
	}
	r.JainFairness = Jain(admitted)
}
