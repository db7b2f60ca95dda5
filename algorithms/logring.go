package algorithms

import "github.com/ratebench/ratebench/algorithms/rule"

// logEntry is cost logged at one instant.
type logEntry struct {
	at, cost int64
}

// logRing is the log of a sliding log: (instant, cost) entries, oldest
// first, in a ring preallocated to its capacity, and the cost they hold.
// An entry at t counts while now < t+window. Not safe for concurrent use.
type logRing struct {
	window int64      // W, ns
	ring   []logEntry // the capacity: L entries
	head   int        // index of the oldest entry
	n      int        // entries in use
	sum    int64      // cost of the entries in use
}

// at returns the i-th entry from the oldest, 0 <= i <= r.n (r.n is the
// free slot after the newest).
func (r *logRing) at(i int) *logEntry {
	j := r.head + i
	if j >= len(r.ring) {
		j -= len(r.ring)
	}
	return &r.ring[j]
}

// dropOldest removes the oldest entry.
func (r *logRing) dropOldest() {
	r.sum -= r.ring[r.head].cost
	r.head++
	if r.head == len(r.ring) {
		r.head = 0
	}
	r.n--
}

// expire drops the entries that no longer count at t.
func (r *logRing) expire(t int64) {
	horizon := rule.LogHorizon(t, r.window)
	for r.n > 0 && r.ring[r.head].at <= horizon {
		r.dropOldest()
	}
}

// expiresBy returns the instant at which the oldest entries that hold at
// least need cost have all expired; need <= r.sum.
func (r *logRing) expiresBy(need int64) int64 {
	for i := range r.n {
		e := r.at(i)
		if need -= e.cost; need <= 0 {
			return e.at + r.window
		}
	}
	panic("algorithms: sliding log: expiresBy beyond the log")
}
