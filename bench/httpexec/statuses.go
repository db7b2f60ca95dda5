package httpexec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseStatuses parses a comma-separated list of the HTTP statuses that
// mean rejected by the limiter (e.g. "429,503"): each from 100 to 599,
// none a 2xx (an admission), at least one; a status given twice counts
// once, the order kept. Errors name the item at fault and wrap
// ErrBadRequest. Safe for concurrent use.
func ParseStatuses(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		n, err := strconv.Atoi(part)
		switch {
		case err != nil || n < 100 || n > 599:
			return nil, fmt.Errorf("%w: %q is not an HTTP status (100-599)", ErrBadRequest, part)
		case n >= 200 && n < 300:
			return nil, fmt.Errorf("%w: %d is a success, which cannot mean rejected", ErrBadRequest, n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
