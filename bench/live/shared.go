package live

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// The leaves below are what a pass makes and hands to its stages (the
// scheduler, the workers, the collector) so that they share state without
// holding the pass or each other: none of them calls anything.

// clock is a pass's clock: the real time since its start. With the HTTP
// adapter, the only clock ratebench reads. A plain value, set once the
// pass starts and then copied to every stage; safe for concurrent use.
type clock struct{ start time.Time }

// now is the pass's clock now, in ns since its start.
func (c clock) now() time.Duration { return time.Since(c.start) }

// at is the pass's clock at t, in ns since its start.
func (c clock) at(t time.Time) time.Duration { return t.Sub(c.start) }

// gauge is what a worker shows the rest of its pass: floor and completed,
// which the worker alone writes and the collector and the scheduler read,
// and kick, on which the collector nudges the worker to hand over an old
// buffer. The pass makes the gauges, hands each worker its own and the
// collector and the scheduler all of them. Padded so that two workers'
// gauges never share a cache line. Safe for concurrent use.
type gauge struct {
	_ [64]byte
	// floor is a lower bound of the instant (ns of the pass's clock) of
	// any decision of this worker not yet handed to the collector: the
	// sent time of the job that started the current buffer, or idleFloor.
	floor atomic.Int64
	// completed counts the worker's requests done.
	completed atomic.Int64
	kick      chan struct{}
	_         [40]byte
}

// newGauges makes n gauges, each with its floor at idleFloor.
func newGauges(n int) []gauge {
	gs := make([]gauge, n)
	for i := range gs {
		gs[i].floor.Store(idleFloor)
		gs[i].kick = make(chan struct{}, 1)
	}
	return gs
}

// stopSignal is how a pass tells its workers to stop: the pass alone sets
// it, the workers only read it. Safe for concurrent use.
type stopSignal struct {
	stopping atomic.Bool
	stopped  chan struct{} // closed when the pass is interrupted
	abandon  chan struct{} // closed when the pass gives up on stuck workers
	// drainEnd is the pass's clock (ns) after which shaper delays are
	// not awaited; no bound until the scheduler is done.
	drainEnd atomic.Int64
}

// newStopSignal makes a stop signal not yet set, with no drain bound.
func newStopSignal() *stopSignal {
	s := &stopSignal{stopped: make(chan struct{}), abandon: make(chan struct{})}
	s.drainEnd.Store(math.MaxInt64)
	return s
}

// interrupt sets stopping and closes stopped; true on the first call
// only.
func (s *stopSignal) interrupt() bool {
	if s.stopping.Swap(true) {
		return false
	}
	close(s.stopped)
	return true
}

// policyBoard is where an executor pass's workers post the policy the
// answers advertise, while the collector wants one: it stops wanting once
// its summary has begun. The first policy posted stays. Safe for
// concurrent use.
type policyBoard struct {
	want atomic.Bool
	got  atomic.Pointer[algorithms.Policy]
}

// post keeps pol unless a policy is already posted.
func (b *policyBoard) post(pol algorithms.Policy) { b.got.CompareAndSwap(nil, &pol) }

// holds are the keys held back after a rejection with a Retry-After, each
// until an instant of the pass's clock. Safe for concurrent use.
type holds struct {
	mu    sync.Mutex
	until map[string]time.Duration
}

// hold holds key back until the instant until (never shortening a hold).
func (h *holds) hold(key string, until time.Duration) {
	h.mu.Lock()
	if until > h.until[key] {
		h.until[key] = until
	}
	h.mu.Unlock()
}

// held reports whether key is held back at now, forgetting a hold that is
// over.
func (h *holds) held(key string, now time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.until[key]
	if ok && now >= until {
		delete(h.until, key)
		return false
	}
	return ok
}
