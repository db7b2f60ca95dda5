package result

// HeaderStats says whether an HTTP service's rate-limit fields told the
// truth, judged from what followed each answer for the same key (in
// HTTPStats.Headers). Requests are taken in send order, but the server
// is not assumed to have decided them in that order: requests of a key
// in flight together (their send-to-answer spans overlap) may have been
// decided in any order, and a claim counts as contradicted only when no
// such order makes it true (httpexec.HeaderCheck says how). Whole-second
// fields get their second: a Retry-After or a reset may have been
// rounded either way. Every field counts answers or claims; none is a
// rate. The *Untested and *Without* fields say what was not checked.
type HeaderStats struct {
	// RejectedNoRetryAfter counts rejections whose answer had no
	// (readable) Retry-After.
	RejectedNoRetryAfter int64 `json:"rejected_without_retry_after"`
	// RetryAfterChecked counts the Retry-After values a later answer of
	// the key put to the test: it was sent at or after t + RA + 1s (t
	// the rejection's answer, RA the value, 1s for its whole seconds), or
	// was an admission sent after t. Every rejection with a Retry-After
	// is counted here or in RetryAfterUntested.
	RetryAfterChecked int64 `json:"retry_after_checked"`
	// RetryAfterEarly counts those whose key, retried at t + RA + 1s or
	// later, was rejected again though no other request of the key could
	// have been decided in between (to take the quota that came back, or,
	// on a server that counts rejections, to lengthen the wait): the wait
	// was too short.
	RetryAfterEarly int64 `json:"retry_after_too_early"`
	// RetryAfterOverstated counts those whose key was admitted (answered)
	// before s + RA - 1s (s when the rejection was sent, a second allowed
	// for the field's whole seconds): the wait was longer than needed.
	// OverstatedFactor is the median of RA over the wait that sufficed.
	RetryAfterOverstated int64   `json:"retry_after_overstated"`
	OverstatedFactor     float64 `json:"retry_after_overstated_factor,omitempty"`
	// RetryAfterUntested counts the Retry-After values never put to the
	// test: the key did not wait (another of its requests may have been
	// decided after the rejection, before the retry), or did not come
	// back before the run ended.
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
	// remained whose claim was never put to the test: n of the key's
	// requests in flight together may have spent them before the next
	// answer, or that answer never came. Every answer that said n >= 1 is
	// counted here or in RemainingChecked.
	RemainingUntested int64 `json:"remaining_untested"`
	// AnsweredNoRemaining counts the answers (admissions and rejections)
	// that said no (readable) remaining count.
	AnsweredNoRemaining int64 `json:"answered_without_remaining"`
	// ResetChecked counts the resets of answers that said the quota was
	// spent (a rejection, or remaining 0) that a later answer of the key
	// put to the test: it was sent at or after t + reset + 1s (t the
	// answer, 1s for the field's whole seconds). ResetContradicted counts
	// those whose test was a rejection though no other request of the
	// key could have been decided in between. Every such answer with a
	// reset is counted here or in ResetUntested.
	ResetChecked      int64 `json:"reset_checked"`
	ResetContradicted int64 `json:"reset_contradicted"`
	// ResetUntested counts those resets never put to the test: the key
	// did not wait past it (another of its requests may have been decided
	// in between), or did not come back before the run ended.
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
