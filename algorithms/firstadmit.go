package algorithms

// firstAdmitted returns the first instant in [lo, hi] at which ok holds,
// and whether there is one, for an ok that holds on a suffix of the span
// (a request admitted at u is admitted at every later instant of it).
// guess, when exact, is where the caller's arithmetic puts that instant:
// it is confirmed with one or two calls of ok, and only when it is off
// does a binary search settle the span. It allocates nothing unless ok
// does.
func firstAdmitted(lo, hi, guess int64, exact bool, ok func(int64) bool) (int64, bool) {
	if exact {
		switch {
		case guess <= lo:
			if ok(lo) {
				return lo, true
			}
		case guess > hi:
			if !ok(hi) {
				return 0, false
			}
		case ok(guess) && !ok(guess-1):
			return guess, true
		}
	}
	if !ok(hi) {
		return 0, false
	}
	if ok(lo) {
		return lo, true
	}
	for hi-lo > 1 { // lo rejects, hi admits
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}
