package httpexec

import (
	"slices"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// HeaderCheck judges an HTTP service's rate-limit fields (remaining,
// reset and Retry-After) by what followed each answer for the same key,
// from an HTTP run's rows (a Tracer): the live collector's, or a merge's
// over its shards' traces. Times are the rows' own: durations since the
// pass's start.
//
// The server did not decide in send order: it decided each request at
// some instant between its Sent and its Done, and requests of a key in
// flight together may have been decided in any order. So a claim is
// contradicted only when no order the spans allow makes it true. A claim
// made by answer A is tested by T, the key's first answer sent after the
// claim's instant at its latest, so surely decided after it. A rejected
// T contradicts the claim unless other requests of the key may have been
// decided between A and T: those whose span overlaps [A sent, T
// answered], whether they came before A in send order, between, or after
// T while it was in flight:
//
//   - remaining n >= 1: T is the first answer sent after A's answer came.
//     T rejected is a contradiction when fewer than n such requests may
//     have been admitted: an honest server rejects T only once the n
//     units are spent, by n admissions decided between A and T, each
//     within that stretch. A reset in between does not matter: it only
//     adds quota, and a rejection (even on a server that counts
//     rejections) comes only once the quota is spent.
//   - Retry-After RA, said by rejection A: the wait if nothing else
//     happens, from A's decision, which lay within A's span, in whole
//     seconds rounded either way; so the quota is surely back by A
//     answered + RA + 1s, and T is the first answer sent from then on.
//     T rejected is a contradiction (RA was too early) only when no other
//     request of the key at all may have been decided between A and T:
//     an admission may have taken the quota, and on a server that counts
//     rejections (a sliding log of every request) a rejection lengthens
//     the wait. An admission sent after A's answer and answered before
//     A sent + RA - 1s says RA overstated the wait; a later one agrees.
//   - reset R, said by an answer that said the quota was spent (a
//     rejection, or remaining 0): as Retry-After with R in its place,
//     except that an admission before A answered + R + 1s is only a
//     request in between (some quota may come back before all of it).
//     The row does not say how the field was written; most servers write
//     whole seconds, an epoch second or a delay, rounded either way, so
//     every reset gets that second.
//
// A request counts as many times as it was written (Attempts): a write
// that was not answered may have been decided too, and a failed request
// may have been admitted before it failed. A claim whose test never came
// (the key did not come back before the run ended, or every request of it
// came too soon) or came excused is untested, and counted so. Every
// answer that said remaining >= 1 is a claim, every rejection with a
// Retry-After, and every rejection or remaining 0 with a reset: answers =
// tested + untested for each. An HTTP-date Retry-After is taken as the
// whole seconds it rounds up to.
//
// Rows come in send order, or nearly: a live pass's come in the order
// requests were handed out, which their send instants follow to within
// the scheduler's jitter. So a verdict that waits for the requests
// overlapping its test waits until the key's rows are reorderMargin (plus
// the most disorder seen, up to a second) past that test's answer, or the
// end.
//
// Its memory is, per key, the claims and requests still in flight. The
// zero value is not usable; use NewHeaderCheck. Not safe for concurrent
// use.
type HeaderCheck struct {
	keys     map[string]*keyHeaders
	stats    result.HeaderStats
	factors  []float64     // Retry-After over the wait that sufficed, when overstated
	last     time.Duration // the latest send instant seen
	prev     time.Duration // the last row's send instant
	disorder time.Duration // the most a row came after one sent later
}

// reorderMargin is how long past a rejected test's answer a verdict waits
// for rows out of send order, and flightMargin how long past its answer
// a request is kept for the claims of rows sent before that, both beyond
// the disorder seen (counted up to maxDisorder, which bounds the memory
// a key's flights take; a live pass's rows are a few milliseconds out of
// order at most); maxClaims bounds the claims open for one key (more are
// counted untested).
const (
	reorderMargin = 50 * time.Millisecond
	flightMargin  = 10 * time.Millisecond
	maxDisorder   = time.Second
	maxClaims     = 256
)

// claimKind is what a claim says.
type claimKind uint8

const (
	remainingClaim claimKind = iota // n units remain
	retryClaim                      // back after Retry-After
	resetClaim                      // back after the reset
)

// claim is one answer's word still to be judged.
type claim struct {
	kind claimKind
	// sent and answered are the answer's span; the key's first answer
	// sent at or after at tests the claim. ra is a Retry-After's value.
	sent, answered, at, ra time.Duration
	// need is the requests in between that excuse a rejected test, got
	// those counted so far (admissions for remaining, all for the others).
	need, got int64
	// tested: a rejection answered at test tested it; the requests sent
	// before then may still excuse it.
	tested bool
	test   time.Duration
}

// keyHeaders is one key's claims still to be judged and its requests
// that may be decided after a later send.
type keyHeaders struct {
	claims []claim
	flying []flight
}

// flight is a request answered at done: admitted at most admitted
// times, decided at most requests times.
type flight struct {
	done               time.Duration
	admitted, requests int64
}

// verdict is what a row made of a claim.
type verdict uint8

const (
	stillOpen verdict = iota
	agreed
	contradicted
	overstated // Retry-After only
	untested
)

// NewHeaderCheck returns a HeaderCheck that has seen no row.
func NewHeaderCheck() *HeaderCheck { return &HeaderCheck{keys: map[string]*keyHeaders{}} }

// weights is how many times r may have been decided (each write of it),
// and admitted (less the rejection it answered).
func weights(r *call.Row) (admitted, requests int64) {
	n := int64(max(r.Attempts, 0))
	switch r.Outcome {
	case call.Admitted:
		return max(n, 1), max(n, 1)
	case call.Rejected:
		return max(n-1, 0), max(n, 1)
	}
	return n, n
}

// Row implements Tracer.
func (h *HeaderCheck) Row(r call.Row) {
	// A row sent well after the one before it (the last of a burst,
	// held back for a free connection) may be followed by rows sent
	// before it, up to that lead: the flights they may overlap are kept.
	lead := min(max(r.Sent-h.prev, 0), maxDisorder)
	h.prev = r.Sent
	if r.Sent >= h.last {
		h.last = r.Sent
	} else {
		h.disorder = max(h.disorder, h.last-r.Sent)
	}
	late := min(h.disorder, maxDisorder)
	margin := reorderMargin + late
	done := max(r.Done, r.Sent)
	f := flight{done: done}
	f.admitted, f.requests = weights(&r)
	k := h.keys[r.Key]
	if k == nil {
		k = &keyHeaders{}
		h.keys[r.Key] = k
	}
	// A later row sent before a flight's answer may still come, by late.
	k.flying = slices.DeleteFunc(k.flying, func(f flight) bool { return f.done <= r.Sent-max(late, lead)-flightMargin })
	kept := k.claims[:0]
	for _, c := range k.claims {
		if v := h.step(&c, &r, f, margin); v != stillOpen {
			count(&h.stats, c.kind, v)
		} else {
			kept = append(kept, c)
		}
	}
	clear(k.claims[len(kept):])
	k.claims = kept
	h.open(k, &r, done)
	if f.requests > 0 {
		k.flying = append(k.flying, f)
	}
}

// step is what row r of the claim's key (answered at f.done) makes of c,
// rows being within margin of send order.
func (h *HeaderCheck) step(c *claim, r *call.Row, f flight, margin time.Duration) verdict {
	w := f.requests
	if c.kind == remainingClaim {
		w = f.admitted
	}
	answered := r.Outcome == call.Admitted || r.Outcome == call.Rejected
	switch {
	case c.tested && r.Sent >= c.test+margin:
		return contradicted
	case c.tested:
		if r.Sent < c.test && f.done > c.sent {
			c.got += w
		}
	case c.kind == retryClaim && r.Outcome == call.Admitted && r.Sent >= c.answered:
		if f.done < c.sent+c.ra-time.Second {
			h.factors = append(h.factors, float64(c.ra)/float64(max(r.Sent-c.answered, 1)))
			return overstated
		}
		return agreed
	case answered && r.Sent >= c.at:
		if r.Outcome == call.Admitted {
			return agreed
		}
		c.got += f.admitted // its other writes
		c.tested, c.test = true, f.done
	case f.done > c.sent:
		c.got += w
	}
	if c.got >= c.need {
		return untested
	}
	return stillOpen
}

// open counts what answer r (answered at done) did not say, and opens
// the claims it made.
func (h *HeaderCheck) open(k *keyHeaders, r *call.Row, done time.Duration) {
	if r.Outcome != call.Admitted && r.Outcome != call.Rejected {
		return
	}
	rejected := r.Outcome == call.Rejected
	if r.Remaining < 0 {
		h.stats.AnsweredNoRemaining++
	}
	if rejected && r.RetryAfter < 0 {
		h.stats.RejectedNoRetryAfter++
	}
	if rejected && r.ResetAfter < 0 {
		h.stats.RejectedNoReset++
	}
	if r.Remaining >= 1 {
		h.add(k, r, claim{kind: remainingClaim, at: done, need: r.Remaining})
	}
	if rejected && r.RetryAfter >= 0 {
		h.add(k, r, claim{kind: retryClaim, at: done + r.RetryAfter + time.Second, ra: r.RetryAfter, need: 1})
	}
	if (rejected || r.Remaining == 0) && r.ResetAfter >= 0 {
		h.add(k, r, claim{kind: resetClaim, at: done + r.ResetAfter + time.Second, need: 1})
	}
}

// add opens claim c of answer r: what may be decided after r from the
// start is its other writes and the key's requests still in flight when
// it was sent.
func (h *HeaderCheck) add(k *keyHeaders, r *call.Row, c claim) {
	c.sent, c.answered = r.Sent, max(r.Done, r.Sent)
	c.got = int64(max(r.Attempts-1, 0))
	for _, f := range k.flying {
		if f.done > c.sent {
			if c.kind == remainingClaim {
				c.got += f.admitted
			} else {
				c.got += f.requests
			}
		}
	}
	if c.got >= c.need || len(k.claims) >= maxClaims {
		count(&h.stats, c.kind, untested)
		return
	}
	k.claims = append(k.claims, c)
}

// count counts verdict v of a claim of kind k in s.
func count(s *result.HeaderStats, k claimKind, v verdict) {
	switch k {
	case remainingClaim:
		switch v {
		case agreed:
			s.RemainingChecked++
		case contradicted:
			s.RemainingChecked++
			s.RemainingContradicted++
		case untested:
			s.RemainingUntested++
		}
	case retryClaim:
		switch v {
		case agreed:
			s.RetryAfterChecked++
		case contradicted:
			s.RetryAfterChecked++
			s.RetryAfterEarly++
		case overstated:
			s.RetryAfterChecked++
			s.RetryAfterOverstated++
		case untested:
			s.RetryAfterUntested++
		}
	case resetClaim:
		switch v {
		case agreed:
			s.ResetChecked++
		case contradicted:
			s.ResetChecked++
			s.ResetContradicted++
		case untested:
			s.ResetUntested++
		}
	}
}

// Result returns what the rows seen so far say of the fields, as if no
// more came: a claim whose rejected test nothing excused is contradicted,
// one still waiting for its test untested.
func (h *HeaderCheck) Result() *result.HeaderStats {
	s := h.stats
	for _, k := range h.keys {
		for _, c := range k.claims {
			if c.tested {
				count(&s, c.kind, contradicted)
			} else {
				count(&s, c.kind, untested)
			}
		}
	}
	if len(h.factors) > 0 {
		f := slices.Clone(h.factors)
		slices.Sort(f)
		s.OverstatedFactor = f[len(f)/2]
	}
	return &s
}
