package bench

// SharesState reports whether the run's replicas shared one limiter state
// (a shared backend) rather than each keeping its own in memory.
func (r Run) SharesState() bool {
	return r.Backend != "" && r.Backend != "memory"
}

// TheoryFor is the worst case admitted in any span W for the whole run:
// one instance's theory, times the replicas when each kept its own state.
func (r Run) TheoryFor() int64 {
	if r.SharesState() {
		return r.TheoryMaxInWindow
	}
	return r.TheoryMaxInWindow * int64(max(r.Replicas, 1))
}
