package algotest

import "github.com/ratebench/ratebench/algorithms/all"

// ForEntry is the suite's configuration for an algorithm of the list, from
// the traits the list gives it (ignores burst, shaper, pacer, counts
// denied, retry slack), with its New: what the list says of an algorithm
// is what the suite holds it to. An implementation of the same algorithm
// elsewhere (per key, on Redis, on SQLite) sets New to its own.
func ForEntry(e all.Entry) Config {
	return Config{
		New:          e.New,
		IgnoresBurst: e.IgnoresBurst,
		Shaper:       e.Shaper && !e.Pacer,
		Pacer:        e.Pacer,
		CountsDenied: e.CountsDenied,
		RetrySlack:   e.RetrySlack,
	}
}
