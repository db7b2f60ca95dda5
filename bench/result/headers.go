package result

// HeaderStats says whether an HTTP service's rate-limit fields told the
// truth, judged from what followed each answer for the same key (in
// HTTPStats.Headers). Requests are taken in send order, but the server
// is not assumed to have decided them in that order: requests of a key
// in flight together (their send-to-answer spans overlap) may have been
// decided in any order, and a claim counts as contradicted only when no
// such order makes it true (bench.HeaderCheck says how). Whole-second
// fields get their second: a Retry-After or a reset may have been
// rounded either way. Every field counts answers or claims; none is a
// rate. The *Untested and *Without* fields say what was not checked.
type HeaderStats struct {
	// RejectedNoRetryAfter counts rejections whose answer had no
	// (readable) Retry-After.
	RejectedNoRetryAfter int64 `json:"rejected_without_retry_after"`
	// RetryAfterChecked counts the Retry-After values a later request of
	// the key put to the test: it was sent at or after t + RA + 1s (t
	// the rejection's answer, RA the value, 1s for its whole seconds), or
	// was admitted before. Each is a key's first Retry-After since its
	// last was judged.
	RetryAfterChecked int64 `json:"retry_after_checked"`
	// RetryAfterEarly counts those whose key, retried at t + RA + 1s or
	// later, was rejected again though no other request of the key could
	// have taken the quota that came back: the wait was too short.
	RetryAfterEarly int64 `json:"retry_after_too_early"`
	// RetryAfterOverstated counts those whose key was admitted (answered)
	// before s + RA - 1s (s when the rejection was sent, a second allowed
	// for the field's whole seconds): the wait was longer than needed.
	// OverstatedFactor is the median of RA over the wait that sufficed.
	RetryAfterOverstated int64   `json:"retry_after_overstated"`
	OverstatedFactor     float64 `json:"retry_after_overstated_factor,omitempty"`
	// RetryAfterUntested counts the Retry-After values never put to the
	// test: the key did not come back after t + RA + 1s before the run
	// ended, or the request that did was rejected while others of the
	// key, in flight with it or with the rejection, may have taken the
	// quota first.
	RetryAfterUntested int64 `json:"retry_after_untested"`
	// RemainingChecked counts the answers that said n >= 1 requests
	// remained whose key's next answer (the first sent after that answer
	// came) put the claim to the test; RemainingContradicted those whose
	// next answer was a rejection though fewer than n requests of the key
	// could have been decided in between (their spans overlap the
	// stretch from the claim's send to the rejection's answer).
	RemainingChecked      int64 `json:"remaining_checked"`
	RemainingContradicted int64 `json:"remaining_contradicted"`
	// RemainingUntested counts the answers that said n >= 1 requests
	// remained whose claim was never put to the test: the key's next
	// answer never came, or it was a rejection that n requests in flight
	// together may explain.
	RemainingUntested int64 `json:"remaining_untested"`
	// AnsweredNoRemaining counts the answers (admissions and rejections)
	// that said no (readable) remaining count.
	AnsweredNoRemaining int64 `json:"answered_without_remaining"`
	// ResetChecked counts the resets of answers that said the quota was
	// spent (a rejection, or remaining 0) that a later request of the key
	// put to the test: it was sent at or after t + reset + 1s (t the
	// answer); each is a key's first such reset since its last was
	// judged. ResetContradicted counts those whose request was rejected
	// though no other request of the key could have spent the quota that
	// came back.
	ResetChecked      int64 `json:"reset_checked"`
	ResetContradicted int64 `json:"reset_contradicted"`
	// ResetUntested counts those resets never put to the test: the key
	// did not come back after it before the run ended, or other requests
	// of the key may have spent the quota that came back first.
	ResetUntested int64 `json:"reset_untested"`
	// RejectedNoReset counts rejections whose answer had no (readable)
	// reset.
	RejectedNoReset int64 `json:"rejected_without_reset"`
}

// Add adds o's counts to h (OverstatedFactor: the larger of the two
// medians), as for several runs' checks of one service; a nil o adds
// nothing.
func (h *HeaderStats) Add(o *HeaderStats) {
	if o == nil {
		return
	}
	h.RejectedNoRetryAfter += o.RejectedNoRetryAfter
	h.RetryAfterChecked += o.RetryAfterChecked
	h.RetryAfterEarly += o.RetryAfterEarly
	h.RetryAfterOverstated += o.RetryAfterOverstated
	h.OverstatedFactor = max(h.OverstatedFactor, o.OverstatedFactor)
	h.RetryAfterUntested += o.RetryAfterUntested
	h.RemainingChecked += o.RemainingChecked
	h.RemainingContradicted += o.RemainingContradicted
	h.RemainingUntested += o.RemainingUntested
	h.AnsweredNoRemaining += o.AnsweredNoRemaining
	h.ResetChecked += o.ResetChecked
	h.ResetContradicted += o.ResetContradicted
	h.ResetUntested += o.ResetUntested
	h.RejectedNoReset += o.RejectedNoReset
}
