package workload

// Router picks the replica of each arrival round robin: arrival i of the
// whole schedule goes to replica i mod n. Counting over the whole
// schedule, not over the arrivals this process sends, makes a shard route
// each of its arrivals as the one-process run does, and the routing
// independent of what the sender drops or holds back. Not safe for
// concurrent use.
type Router struct {
	n       int64
	indexed Indexed // the stream's own whole-schedule index, if it has one
	read    int64   // arrivals read, when it has not
}

// NewRouter routes the arrivals of stream over n replicas.
func NewRouter(stream Stream, n int) *Router {
	r := &Router{n: int64(max(n, 1))}
	r.indexed, _ = stream.(Indexed)
	return r
}

// Next returns the replica of the arrival the stream just returned; call
// it once per arrival read, whether or not the arrival is sent.
func (r *Router) Next() int {
	i := r.read
	r.read++
	if r.indexed != nil {
		i = r.indexed.Index()
	}
	return int(i % r.n)
}
