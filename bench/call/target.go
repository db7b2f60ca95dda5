package call

import (
	"fmt"

	"github.com/ratebench/ratebench/algorithms"
)

// Target is one limiter configuration an engine drives: an algorithm on a
// backend, possibly as several replicas. It is a plain record; New is
// called once per replica and must return an independent instance (or, for
// a shared backend, a client of the same shared state).
type Target struct {
	Name     string // algorithm name, e.g. "gcra"
	Backend  string // "memory", "redis", "sqlite", ...
	Replicas int    // app replicas the arrivals are spread over; 0 means 1
	Shaper   bool   // admitted requests are served after Decision.Delay
	Theory   int64  // worst case admitted in any span W by one instance
	FailOpen bool   // on an error, admit (true) or reject (false)
	New      func() (algorithms.Limiter, error)
}

// Instances builds t's limiters: Replicas of them, at least one, each from
// New.
func (t Target) Instances() ([]algorithms.Limiter, error) {
	lims := make([]algorithms.Limiter, max(t.Replicas, 1))
	for i := range lims {
		l, err := t.New()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		lims[i] = l
	}
	return lims, nil
}
