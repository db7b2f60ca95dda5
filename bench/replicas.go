package bench

import (
	"fmt"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// replicas builds the target's instances.
func replicas(t call.Target) ([]algorithms.Limiter, error) {
	lims := make([]algorithms.Limiter, max(t.Replicas, 1))
	for i := range lims {
		l, err := t.New()
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", t.Name, err)
		}
		lims[i] = l
	}
	return lims, nil
}

// router picks the replica of each arrival round robin: arrival i of the
// whole schedule goes to replica i mod n. Counting over the whole
// schedule, not over the arrivals this process sends, makes a shard route
// each of its arrivals as the one-process run does, and the routing
// independent of what the sender drops or holds back. Not safe for
// concurrent use.
type router struct {
	n       int64
	indexed workload.Indexed // the stream's own whole-schedule index, if it has one
	read    int64            // arrivals read, when it has not
}

// newRouter routes the arrivals of stream over n replicas.
func newRouter(stream workload.Stream, n int) *router {
	r := &router{n: int64(max(n, 1))}
	r.indexed, _ = stream.(workload.Indexed)
	return r
}

// next returns the replica of the arrival the stream just returned; call
// it once per arrival read, whether or not the arrival is sent.
func (r *router) next() int {
	i := r.read
	r.read++
	if r.indexed != nil {
		i = r.indexed.Index()
	}
	return int(i % r.n)
}
