package workload

import (
	"fmt"
	"time"
)

// Source is a workload an engine draws its arrivals from: one of the
// generators' types (Constant, Poisson, Burst, OnOff, Boundary, Ramp,
// Zipf, Replay), which Spec.Source makes from the form flags and scenario
// files write, or Arrivals held in memory. Each Open starts from the
// first arrival, so one Source serves every pass of a run.
// Implementations are safe for concurrent Opens.
type Source interface {
	// Open returns shard sh's arrivals in non-decreasing At order; the
	// zero Shard is all of them.
	Open(sh Shard) (Stream, error)
	// Span is how long the workload lasts: a run's passes end then.
	Span() time.Duration
	// Record describes the workload for result.json's "workload" object:
	// "name" and the parameters that matter, as Spec.Params.
	Record() map[string]any
}

// generated is a generator's Source, which checks its own fields.
type generated interface {
	Source
	Validate() error
}

// expected is a generated Source whose arrivals follow from its fields:
// info is known without running it (every generator but replay).
type expected interface {
	generated
	info() Info
}

// record starts a generator's Record with what every synthetic one has.
func record(name string, d time.Duration, keys int, cost int64) map[string]any {
	return map[string]any{"name": name, "duration_ns": int64(d), "keys": keys, "cost": cost}
}

// Arrivals is a schedule held in memory, as a Source: List in
// non-decreasing At order (from 0, in the run's time), over Keys keys,
// lasting Length (at least the last arrival's At). A program that builds
// its own schedule (a probe's experiments) hands it to an engine this way,
// without writing a trace to be read back. Arrivals must not change while
// an engine uses them.
type Arrivals struct {
	Name   string // the workload's name in result.json, e.g. "probe-capacity"
	List   []Arrival
	Keys   int
	Length time.Duration
}

// Open implements Source. Over several shards, a schedule of one key is
// split by arrival index and one of several keys by a hash of each key's
// name, as a replayed trace is. A List out of time order, or an arrival
// of cost below 1, is an error wrapping ErrInvalid.
func (a *Arrivals) Open(sh Shard) (Stream, error) {
	for i, x := range a.List {
		switch {
		case x.Cost < 1:
			return nil, fmt.Errorf("%w: %s: arrival %d has cost %d, want >= 1", ErrInvalid, a.Name, i, x.Cost)
		case i > 0 && x.At < a.List[i-1].At:
			return nil, fmt.Errorf("%w: %s: arrival %d at %v comes before the one before it, at %v", ErrInvalid, a.Name, i, x.At, a.List[i-1].At)
		}
	}
	return openShard(a, &listStream{list: a.List}, sh), nil
}

// Span implements Source: Length.
func (a *Arrivals) Span() time.Duration { return a.Length }

// Record implements Source: the name, the count of arrivals, the keys and
// the length.
func (a *Arrivals) Record() map[string]any {
	return map[string]any{"name": a.Name, "arrivals": len(a.List), "keys": a.Keys, "duration_ns": int64(a.Length)}
}

// listStream yields the arrivals of a list, in order.
type listStream struct {
	list []Arrival
	i    int
}

func (l *listStream) Next() (Arrival, bool) {
	if l.i >= len(l.list) {
		return Arrival{}, false
	}
	l.i++
	return l.list[l.i-1], true
}

// Index returns the index of the arrival Next last returned: a list
// stream knows where it stands in the whole schedule.
func (l *listStream) Index() int64 { return int64(l.i) - 1 }

func (l *listStream) Err() error   { return nil }
func (l *listStream) Close() error { return nil }
