package result

// HeaderStats says whether an HTTP service's rate-limit fields told the
// truth, judged from what followed each answer for the same key (in
// HTTPStats.Headers). Requests are taken in send order.
type HeaderStats struct {
	// RejectedNoRetryAfter counts rejections whose answer had no
	// (readable) Retry-After.
	RejectedNoRetryAfter int64 `json:"rejected_without_retry_after"`
	// RetryAfterChecked counts the Retry-After values a later request of
	// the key put to the test: it was sent at or after t + RA (t the
	// rejection's answer), or was admitted before.
	RetryAfterChecked int64 `json:"retry_after_checked"`
	// RetryAfterEarly counts those whose key, retried at t + RA or later,
	// was rejected again: the wait was too short.
	RetryAfterEarly int64 `json:"retry_after_too_early"`
	// RetryAfterOverstated counts those whose key was admitted before
	// t + RA - 1s (a second allowed for the field's whole seconds): the
	// wait was longer than needed. OverstatedFactor is the median of RA
	// over the wait that sufficed.
	RetryAfterOverstated int64   `json:"retry_after_overstated"`
	OverstatedFactor     float64 `json:"retry_after_overstated_factor,omitempty"`
	// RemainingChecked counts the answers that said n >= 1 requests
	// remained whose key's next request (sent after that answer, before
	// its reset, with fewer than n others of the key sent while it was in
	// flight) put it to the test; RemainingContradicted those whose next
	// request was rejected.
	RemainingChecked      int64 `json:"remaining_checked"`
	RemainingContradicted int64 `json:"remaining_contradicted"`
}
