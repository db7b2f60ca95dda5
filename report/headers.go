package report

import (
	"fmt"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
)

// HeadersReading says in a sentence whether a service's rate-limit fields
// told the truth, e.g. "Retry-After overstated the wait 12 of 15 times
// tested (4.0x, median); 3 rejections had no Retry-After; remaining
// agreed with what followed 40 of 40 times". "" when nothing was tested.
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
			parts = append(parts, fmt.Sprintf("Retry-After was too early %s of %s times tested (retried then, rejected again)",
				group(h.RetryAfterEarly), group(c)))
		}
	}
	if n := h.RejectedNoRetryAfter; n > 0 {
		parts = append(parts, fmt.Sprintf("%s rejections had no Retry-After", group(n)))
	}
	if c := h.RemainingChecked; c > 0 {
		if h.RemainingContradicted > 0 {
			parts = append(parts, fmt.Sprintf("remaining was contradicted %s of %s times tested (said some were left; the next request was rejected)",
				group(h.RemainingContradicted), group(c)))
		} else {
			parts = append(parts, fmt.Sprintf("remaining agreed with what followed %s of %s times tested", group(c), group(c)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}
