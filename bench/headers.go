package bench

import (
	"slices"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// HeaderCheck judges an HTTP service's Retry-After and remaining counts
// by what followed each answer for the same key, from an HTTP run's rows
// in send order (a Tracer): the live collector's, or a merge's over its
// shards' traces. Its memory is one small state per key. The zero value
// is not usable; use NewHeaderCheck. Not safe for concurrent use.
type HeaderCheck struct {
	keys    map[string]*keyHeaders
	stats   result.HeaderStats
	factors []float64 // Retry-After over the wait that sufficed, when overstated
}

// keyHeaders is what one key's last answers claimed and is still to be
// judged.
type keyHeaders struct {
	// A rejection's Retry-After: told at answered, the key may come back
	// at until; ra is the value. Zero answered: nothing to judge.
	answered, until, ra time.Duration
	raOpen              bool
	// An answer that said remaining >= 1: sent at sent, answered at done,
	// good until reset; used counts the key's requests sent while it was
	// in flight.
	remaining        int64
	done, resetUntil time.Duration
	used             int64
	remOpen          bool
}

// NewHeaderCheck returns a HeaderCheck that has seen no row.
func NewHeaderCheck() *HeaderCheck { return &HeaderCheck{keys: map[string]*keyHeaders{}} }

// Row implements Tracer.
func (h *HeaderCheck) Row(r TraceRow) {
	if r.Outcome == Failed {
		return
	}
	k := h.keys[r.Key]
	if k == nil {
		k = &keyHeaders{}
		h.keys[r.Key] = k
	}
	admitted := r.Outcome == Admitted
	if k.raOpen && r.Sent >= k.answered {
		switch {
		case r.Sent >= k.until:
			h.stats.RetryAfterChecked++
			if !admitted {
				h.stats.RetryAfterEarly++
			}
			k.raOpen = false
		case admitted && r.Sent < k.until-time.Second:
			h.stats.RetryAfterChecked++
			h.stats.RetryAfterOverstated++
			h.factors = append(h.factors, float64(k.ra)/float64(max(r.Sent-k.answered, 1)))
			k.raOpen = false
		case admitted: // within the field's one-second granularity
			k.raOpen = false
		}
	}
	if k.remOpen {
		switch {
		case r.Sent <= k.done: // in flight with the answer: may use the quota
			if k.used++; k.used >= k.remaining {
				k.remOpen = false
			}
		case r.Sent < k.resetUntil:
			h.stats.RemainingChecked++
			if !admitted {
				h.stats.RemainingContradicted++
			}
			k.remOpen = false
		default:
			k.remOpen = false
		}
	}
	if !admitted {
		if r.RetryAfter < 0 {
			h.stats.RejectedNoRetryAfter++
		} else if !k.raOpen {
			k.answered, k.ra, k.until, k.raOpen = r.Done, r.RetryAfter, r.Done+r.RetryAfter, true
		}
	}
	if r.Remaining >= 1 {
		k.remaining, k.done, k.used, k.remOpen = r.Remaining, r.Done, 0, true
		k.resetUntil = time.Duration(1<<63 - 1)
		if r.ResetAfter >= 0 {
			k.resetUntil = r.Done + r.ResetAfter
		}
	}
}

// Result returns what the rows seen so far say of the fields.
func (h *HeaderCheck) Result() *result.HeaderStats {
	s := h.stats
	if len(h.factors) > 0 {
		slices.Sort(h.factors)
		s.OverstatedFactor = h.factors[len(h.factors)/2]
	}
	return &s
}
