package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

// WarningText says a warning in one line, for the page and the terminal
// alike, naming the command-line flags that would help. A kind it does not
// know (from a newer ratebench) is said by its name. It is safe for
// concurrent use.
func WarningText(w result.Warning) string {
	pct := func(n, of int64) float64 { return 100 * float64(n) / float64(max(of, 1)) }
	ns := func(n int64) time.Duration { return time.Duration(n) }
	head := w.Run + ": "
	switch w.Kind {
	case result.WarnLate:
		late := fmt.Sprintf("the sender started %.1f%% of calls more than %v late (lateness p99 %v)", w.LatePct, ns(w.LateAfterNS), Round3(ns(w.LatenessP99NS)))
		if w.HTTP {
			return head + late + ": this machine, not the server, was the bottleneck; lower -rate or attack from another host"
		}
		return head + late + ": the machine, not the limiter, was the bottleneck; try fewer algorithms at once, a lower -rate or more -workers"
	case result.WarnBackendLate:
		return head + fmt.Sprintf("the sender started %.1f%% of calls more than %v late (lateness p99 %v): the %s backend timed out on %d decisions (%s), holding the workers: the backend, not the machine, made the calls late; see -backend-timeout",
			w.LatePct, ns(w.LateAfterNS), Round3(ns(w.LatenessP99NS)), w.Backend, w.N, w.FirstError)
	case result.WarnDropped:
		dropped := fmt.Sprintf("%d of %d arrivals (%.2f%%) dropped at -max-inflight %d", w.N, w.Of, pct(w.N, w.Of), w.MaxInFlight)
		if w.HTTP {
			return head + dropped + ": the server answered too slowly for the rate"
		}
		return head + dropped
	case result.WarnUnsent:
		return head + fmt.Sprintf("the sender fell behind and stopped at the end of the pass with %d of %d arrivals (%.2f%%) not sent; lower -rate", w.N, w.Of, pct(w.N, w.Of))
	case result.WarnAbandoned:
		if w.HTTP {
			return head + fmt.Sprintf("%d workers were still busy after the interrupt and were given up on; their requests are missing", w.N)
		}
		return head + fmt.Sprintf("%d workers were still inside the limiter after the interrupt and were abandoned; their decisions are missing", w.N)
	case result.WarnUnserved:
		return head + fmt.Sprintf("%d shaper waits were still pending when the pass ended and were not awaited; their latency is the promised one", w.N)
	case result.WarnCalibrationLate:
		return fmt.Sprintf("calibration: even a no-op limiter was started late for %.1f%% of calls: this machine cannot hold the schedule", w.LatePct)
	case result.WarnLossy:
		return head + fmt.Sprintf("the key table was full and forgot the state of %d keys to take new ones (-on-full evict-lossy): those keys came back with a fresh quota, so it admitted more than the algorithm allows", w.N)
	case result.WarnTableFull:
		return head + fmt.Sprintf("%d requests of new keys were rejected because the key table was full of keys it could not forget; raise -max-keys", w.N)
	case result.WarnNoPolicy:
		return "the server sent no RateLimit-Policy field and -limit was not given: no limit is known, so no burst ratio or theory; give -limit and -window, or run ratebench fit on this folder"
	case result.WarnFailed:
		return fmt.Sprintf("%d of %d requests failed (%s)", w.N, w.Of, kindsText(w.ErrorKinds))
	case result.WarnStartLag:
		var at, shard string
		if sh := w.Shard; sh != nil {
			at, shard = time.Unix(0, sh.StartAtUnixNS).UTC().Format(time.RFC3339Nano), fmt.Sprintf("%d/%d", sh.Index, sh.Count)
		}
		return head + fmt.Sprintf("shard %s began %v after the start -start-at %s planned for it, more than -max-start-lag %v: its requests left late against the other shards' (lateness counts from the planned start)",
			shard, Round3(ns(w.StartLagNS)), at, ns(w.MaxStartLagNS))
	case result.WarnTraceOnly:
		from := "-limit and -window"
		if w.PolicyFrom == "fit" {
			from = fit.File + "'s best fit"
		}
		return "built from requests.csv alone, against the policy of " + from + ": a trace does not tell a run's backend, replicas, start time, fail-open policy, disagreement with a reference or live measures; latency is done minus sent"
	case result.WarnReordered:
		return head + fmt.Sprintf("%d requests came more than %d rows out of send order; each counts at the instant of the request before it", w.N, w.Rows)
	case result.WarnMergeReordered:
		return "merge: " + head + fmt.Sprintf("%d requests came more than %d rows out of send order in their trace; each counts at the instant of the request before it", w.N, w.Rows)
	case result.WarnMergeWorkloads:
		if len(w.Inputs) == 2 && len(w.Workloads) == 2 {
			return fmt.Sprintf("merge: %s ran workload %s, %s ran %s; the page shows the first", w.Inputs[0], w.Workloads[0], w.Inputs[1], w.Workloads[1])
		}
		return "merge: the inputs ran different workloads; the page shows the first's"
	case result.WarnMergeLatency:
		return "merge: " + head + "latency percentiles without a histogram cannot be merged; latency left out"
	case result.WarnMergeURLs:
		return "merge: " + head + "attacked " + strings.Join(w.URLs, " and ") + "; the page shows the first"
	case result.WarnClockUnknown:
		return "merge: the shards ran on several hosts (or did not say which) and not all of them gave -clock-error: how far apart their clocks were is unknown and not in the timing uncertainty"
	case result.WarnMaxLowerBound:
		return "merge: the most admitted in any W is the largest of the inputs' maxima, a lower bound of the combined one: the machines' admits are not interleaved in time (merge folders that all hold requests.csv for the exact maximum)"
	case result.WarnText:
		return w.Text
	}
	if w.Run == "" {
		return string(w.Kind)
	}
	return head + string(w.Kind)
}

// WarningTexts says every warning of ws, in order.
func WarningTexts(ws []result.Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = WarningText(w)
	}
	return out
}

// kindsText is "connection_refused 12, timeout 3", largest first.
func kindsText(m map[string]int64) string {
	type kv struct {
		k string
		n int64
	}
	var kvs []kv
	for k, n := range m {
		kvs = append(kvs, kv{k, n})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	parts := make([]string, len(kvs))
	for i, x := range kvs {
		parts[i] = fmt.Sprintf("%s %d", x.k, x.n)
	}
	return strings.Join(parts, ", ")
}
