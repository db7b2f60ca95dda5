package rule

// GCRAFits reports whether a request of increment inc ns (its cost times
// the emission interval T) fits, at the instant t (ns), a GCRA whose
// theoretical arrival time is tat (ns) and whose tolerance is tolerance ns
// (the burst B times T): max(tat, t) + inc - t <= tolerance.
func GCRAFits(tat, t, inc, tolerance int64) bool {
	return max(tat, t)+inc-t <= tolerance
}

// GCRATake is the theoretical arrival time (ns) after a GCRA at tat admits
// a request of increment inc ns at the instant t (ns).
func GCRATake(tat, t, inc int64) int64 {
	return max(tat, t) + inc
}

// DebtFits reports whether a request drawing take ns of tokens (its cost
// times the refill interval T) fits, at the instant t (ns), a token bucket
// that may go into debt, whose empty-at instant is emptyAt (ns: it held no
// token then, later than t while in debt) and whose capacity is capacity
// ns (the burst B times T). Tokens beyond the capacity are not kept.
func DebtFits(emptyAt, t, take, capacity int64) bool {
	return t-max(emptyAt, t-capacity) >= take
}

// DebtTake is the empty-at instant (ns) after a request at the instant t
// (ns) draws take ns of tokens from such a bucket, admitted or denied: a
// draw that fits takes it all; any other goes at most capacity into debt
// (-B tokens at t) and never moves the instant earlier, so that a clock
// that went backwards finds no more tokens.
func DebtTake(emptyAt, t, take, capacity int64) int64 {
	base := max(emptyAt, t-capacity)
	if room := t + capacity - base; room > 0 {
		return base + min(take, room)
	}
	return emptyAt
}
