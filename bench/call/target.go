package call

import "github.com/ratebench/ratebench/algorithms"

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
