package workload

import (
	"container/heap"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is the part I of N that one process plays of a schedule split over
// N processes: every process generates the same seeded schedule and keeps
// only its own arrivals. The zero value, like 0/1, is the whole schedule.
type Shard struct {
	I, N int
}

// ParseShard parses "I/N", with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("%q is not I/N (e.g. 0/3)", s)
	case n < 1:
		return Shard{}, fmt.Errorf("%q: N must be >= 1", s)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("%q: I must be in [0, N-1]", s)
	}
	return Shard{I: i, N: n}, nil
}

// Whole reports whether sh is the whole schedule (N <= 1).
func (sh Shard) Whole() bool { return sh.N <= 1 }

// String returns "I/N".
func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.I, max(sh.N, 1)) }

// ShardPlan is how a schedule is split over N shards.
type ShardPlan struct {
	// ByIndex: the workload has one key, so arrival i goes to shard i mod N.
	ByIndex bool
	// Owner is the shard of key k{i}, for the synthetic workloads; keys
	// not named so (a replayed trace's) go by a hash of their name.
	Owner []int32
	// Share is each shard's expected share of the arrivals, summing to 1
	// (nil for a trace, whose keys are not known in advance).
	Share []float64
}

// PlanShards splits src (a Source of this package, a trace's Keys its own
// count) over n shards by key, balancing the expected arrivals: keys are
// taken from the most to the least expected (Zipf weights for zipf, equal
// otherwise) and each goes to the shard that expects the fewest so far. A
// workload with one key is split by arrival index; a trace's or a list's
// keys, not known in advance, and another Source's go by a hash of their
// name.
func PlanShards(src Source, n int) ShardPlan {
	n = max(n, 1)
	var keys int
	named := false // keys are k0 .. k{keys-1}
	switch s := src.(type) {
	case expected:
		keys, named = s.info().Keys, true
	case *Replay:
		keys = s.Keys
	case *Arrivals:
		keys = s.Keys
	default:
		return ShardPlan{}
	}
	if keys <= 1 {
		share := make([]float64, n)
		for i := range share {
			share[i] = 1 / float64(n)
		}
		return ShardPlan{ByIndex: true, Share: share}
	}
	if !named {
		return ShardPlan{}
	}
	z, isZipf := src.(*Zipf)
	w := make([]float64, keys)
	var sum float64
	for i := range w {
		w[i] = 1
		if isZipf {
			w[i] = z.weight(i)
		}
		sum += w[i]
	}
	order := make([]int, keys)
	for i := range order {
		order[i] = i
	}
	// Weights are non-increasing in i already; a stable sort keeps that
	// order for equal weights, so equal keys go round-robin.
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(w[a], w[b]) })
	h := make(loads, n)
	for i := range h {
		h[i] = load{shard: i}
	}
	owner := make([]int32, keys)
	for _, k := range order {
		owner[k] = int32(h[0].shard)
		h[0].sum += w[k]
		heap.Fix(&h, 0)
	}
	share := make([]float64, n)
	for _, l := range h {
		share[l.shard] = l.sum / sum
	}
	return ShardPlan{Owner: owner, Share: share}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// load is one shard's expected arrivals so far, in PlanShards.
type load struct {
	shard int
	sum   float64
}

// loads is a min-heap of shards by expected arrivals, then by index.
type loads []load

func (h loads) Len() int { return len(h) }
func (h loads) Less(i, j int) bool {
	if h[i].sum != h[j].sum {
		return h[i].sum < h[j].sum
	}
	return h[i].shard < h[j].shard
}
func (h loads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *loads) Push(x any)   { *h = append(*h, x.(load)) }
func (h *loads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// MaxShare returns the largest expected share any shard carries, or 0
// when it is not known.
func (p ShardPlan) MaxShare() float64 {
	m := 0.0
	for _, s := range p.Share {
		m = max(m, s)
	}
	return m
}

// openShard returns the arrivals of st, the whole stream of src, that
// shard sh plays, in the order of the whole stream: st itself for the
// whole schedule, else st filtered by PlanShards(src, sh.N).
func openShard(src Source, st Stream, sh Shard) Stream {
	if sh.Whole() {
		return st
	}
	return &shardStream{Stream: st, shard: sh, plan: PlanShards(src, sh.N)}
}

// Indexed is a Stream that knows where its arrivals stand in the whole
// schedule: Index is the index, counted from 0 over every shard's
// arrivals, of the arrival Next last returned. A shard's stream is
// Indexed; a whole schedule's index is the count of arrivals read.
type Indexed interface {
	Index() int64
}

// shardStream keeps the arrivals of one shard of its Stream.
type shardStream struct {
	Stream
	shard Shard
	plan  ShardPlan
	i     int64 // arrivals read from Stream
}

// Index returns the whole-schedule index of the arrival Next last
// returned.
func (f *shardStream) Index() int64 { return f.i - 1 }

// Next returns the next arrival of the shard.
func (f *shardStream) Next() (Arrival, bool) {
	for {
		a, ok := f.Stream.Next()
		if !ok {
			return a, false
		}
		i := f.i
		f.i++
		if f.owner(a.Key, i) == f.shard.I {
			return a, true
		}
	}
}

// owner returns the shard of the i-th arrival, of key.
func (f *shardStream) owner(key string, i int64) int {
	if f.plan.ByIndex {
		return int(i % int64(f.shard.N))
	}
	if k, ok := keyIndex(key); ok && k < len(f.plan.Owner) {
		return int(f.plan.Owner[k])
	}
	h := uint64(14695981039346656037) // FNV-1a, inline: no allocation
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return int(h % uint64(f.shard.N))
}

// keyIndex returns i for a key named "k{i}", without allocating.
func keyIndex(key string) (int, bool) {
	if len(key) < 2 || len(key) > 11 || key[0] != 'k' || (key[1] == '0' && len(key) > 2) {
		return 0, false
	}
	n := 0
	for _, c := range []byte(key[1:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
