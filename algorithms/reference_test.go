package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// checkFields checks a decision d, made at instant at for a request of
// cost, against a reference implementation of the same limiter: allowed
// asks the reference, in the state it was in right after d (each call on
// a copy of it), whether a request of cost n at t would be admitted. The
// decision's Remaining must be the most the reference admits at once,
// its RetryAfter the first instant the same request is admitted, and its
// ResetAfter the first instant a request of full is. what names d in a
// failure.
func checkFields(t *testing.T, what string, d algorithms.Decision, at time.Duration, cost, full int64, allowed func(t time.Duration, n int64) bool) {
	t.Helper()
	check := func(field string, t2 time.Duration, n int64, want bool) {
		t.Helper()
		if got := allowed(t2, n); got != want {
			t.Fatalf("%s %+v: %s: the reference says allowed=%v at %v for %d", what, d, field, got, t2, n)
		}
	}
	check("Remaining+1", at, d.Remaining+1, false)
	if d.Remaining > 0 {
		check("Remaining", at, d.Remaining, true)
	}
	if !d.Allowed && d.RetryAfter != algorithms.Never {
		check("1ns before RetryAfter", at+d.RetryAfter-1, cost, false)
		check("at RetryAfter", at+d.RetryAfter, cost, true)
	}
	if d.ResetAfter > 0 {
		check("1ns before ResetAfter", at+d.ResetAfter-1, full, false)
	}
	check("at ResetAfter", at+d.ResetAfter, full, true)
}
