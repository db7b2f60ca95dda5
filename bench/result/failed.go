package result

import (
	"errors"
	"fmt"
	"strings"
)

// MostFailed returns an error naming the runs of which more than half the
// decisions were limiter errors (a backend down or broken), with each
// one's first error: their figures then describe the failure policy, not
// the limiter. Nil when no run is so.
func MostFailed(runs []Run) error {
	var bad []string
	for _, r := range runs {
		if r.Offered > 0 && 2*r.Errors > r.Offered {
			bad = append(bad, fmt.Sprintf("%s: %d of %d decisions failed (%s)", r.Label(), r.Errors, r.Offered, r.FirstError))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.New("most decisions failed, so the results measure the failure policy, not the limiter: " + strings.Join(bad, "; "))
}
