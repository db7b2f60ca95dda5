package report

import (
	"fmt"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
)

// HeadersReading says in a sentence whether a service's rate-limit fields
// told the truth, and what could not be checked, e.g. "Retry-After
// overstated the wait 12 of 15 times tested (4.0x, median); remaining
// agreed with what followed 40 of 40 times tested; not checked: 3
// rejections without Retry-After, 120 remaining counts that what followed
// could not test". A claim goes untested when the key came back with
// other requests in flight that may have spent the quota first, too
// soon, or not at all (httpexec.HeaderCheck). "" when nothing was tested or
// skipped. Safe for concurrent use.
func HeadersReading(h *result.HeaderStats) string {
	if h == nil {
		return ""
	}
	var parts []string
	if c := h.RetryAfterChecked; c > 0 {
		switch {
		case h.RetryAfterOverstated > 0:
			parts = append(parts, fmt.Sprintf("Retry-After overstated the wait %s of %s times tested (%.1fx, median)",
				group(h.RetryAfterOverstated), group(c), h.OverstatedFactor))
		case h.RetryAfterEarly == 0:
			parts = append(parts, fmt.Sprintf("Retry-After was right %s of %s times tested", group(c), group(c)))
		}
		if h.RetryAfterEarly > 0 {
			parts = append(parts, fmt.Sprintf("Retry-After was too early %s of %s times tested (the key waited, retried then, and was rejected again)",
				group(h.RetryAfterEarly), group(c)))
		}
	}
	if c := h.RemainingChecked; c > 0 {
		if h.RemainingContradicted > 0 {
			parts = append(parts, fmt.Sprintf("remaining was contradicted %s of %s times tested (said n were left; a later request was rejected before n could have been admitted)",
				group(h.RemainingContradicted), group(c)))
		} else {
			parts = append(parts, fmt.Sprintf("remaining agreed with what followed %s of %s times tested", group(c), group(c)))
		}
	}
	if c := h.ResetChecked; c > 0 {
		if h.ResetContradicted > 0 {
			parts = append(parts, fmt.Sprintf("reset was contradicted %s of %s times tested (the key waited past it and was rejected again)",
				group(h.ResetContradicted), group(c)))
		} else {
			parts = append(parts, fmt.Sprintf("reset agreed with what followed %s of %s times tested", group(c), group(c)))
		}
	}
	if s := skipped(h); s != "" {
		parts = append(parts, "not checked: "+s)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// skipped lists the checks a run could not make, e.g. "412 rejections
// without Retry-After, 15 Retry-After values and 30 remaining counts that
// what followed could not test"; "" when none.
func skipped(h *result.HeaderStats) string {
	var missing, untested []string
	add := func(to *[]string, n int64, what string) {
		if n > 0 {
			*to = append(*to, group(n)+" "+what)
		}
	}
	add(&missing, h.RejectedNoRetryAfter, "rejections without Retry-After")
	add(&missing, h.AnsweredNoRemaining, "answers without remaining")
	add(&missing, h.RejectedNoReset, "rejections without reset")
	add(&untested, h.RetryAfterUntested, "Retry-After values")
	add(&untested, h.RemainingUntested, "remaining counts")
	add(&untested, h.ResetUntested, "resets")
	if n := len(untested); n > 0 {
		last := untested[n-1]
		if n > 1 {
			last = strings.Join(untested[:n-1], ", ") + " and " + last
		}
		missing = append(missing, last+" that what followed could not test")
	}
	return strings.Join(missing, ", ")
}
