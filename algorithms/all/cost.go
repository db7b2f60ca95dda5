package all

import (
	"strings"

	"github.com/ratebench/ratebench/algorithms"
)

// NeverAdmit returns the names, among names (nil: every algorithm), of
// the algorithms that can never admit a request of cost units at once
// under p (cost above B for buckets, above L for windows), and so would
// reject every such request: each is asked, on a fresh instance. Names
// that are not in the list (a backend's own algorithm) are skipped. Safe
// for concurrent use.
func NeverAdmit(names []string, cost int64, p algorithms.Policy) []string {
	if len(names) == 0 {
		names = Names()
	}
	var over []string
	for _, n := range names {
		e, err := Lookup(strings.TrimSpace(n))
		if err != nil {
			continue
		}
		l, err := e.New(p)
		if err != nil {
			continue
		}
		if d, err := l.Allow(0, "", cost); err == nil && !d.Allowed && d.RetryAfter == algorithms.Never {
			over = append(over, e.Name)
		}
	}
	return over
}
