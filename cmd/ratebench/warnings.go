package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// phrase says a warning in one line, naming the flags that would help.
func phrase(w bench.Warning) string {
	pct := func(n, of int64) float64 { return 100 * float64(n) / float64(max(of, 1)) }
	head := w.Run + ": "
	switch w.Kind {
	case bench.WarnLate:
		late := fmt.Sprintf("the sender started %.1f%% of calls more than %v late (lateness p99 %v)", w.Share, w.Threshold, report.Round3(w.P99))
		if w.HTTP {
			return head + late + ": this machine, not the server, was the bottleneck; lower -rate or attack from another host"
		}
		return head + late + ": the machine, not the limiter, was the bottleneck; try fewer algorithms at once, a lower -rate or more -workers"
	case bench.WarnBackendLate:
		return head + fmt.Sprintf("the sender started %.1f%% of calls more than %v late (lateness p99 %v): the %s backend timed out on %d decisions (%s), holding the workers: the backend, not the machine, made the calls late; see -backend-timeout",
			w.Share, w.Threshold, report.Round3(w.P99), w.Backend, w.N, w.Detail)
	case bench.WarnDropped:
		dropped := fmt.Sprintf("%d of %d arrivals (%.2f%%) dropped at -max-inflight %d", w.N, w.Of, pct(w.N, w.Of), w.Cap)
		if w.HTTP {
			return head + dropped + ": the server answered too slowly for the rate"
		}
		return head + dropped
	case bench.WarnUnsent:
		return head + fmt.Sprintf("the sender fell behind and stopped at the end of the pass with %d of %d arrivals (%.2f%%) not sent; lower -rate", w.N, w.Of, pct(w.N, w.Of))
	case bench.WarnAbandoned:
		if w.HTTP {
			return head + fmt.Sprintf("%d workers were still busy after the interrupt and were given up on; their requests are missing", w.N)
		}
		return head + fmt.Sprintf("%d workers were still inside the limiter after the interrupt and were abandoned; their decisions are missing", w.N)
	case bench.WarnUnserved:
		return head + fmt.Sprintf("%d shaper waits were still pending when the pass ended and were not awaited; their latency is the promised one", w.N)
	case bench.WarnCalibrationLate:
		return fmt.Sprintf("calibration: even a no-op limiter was started late for %.1f%% of calls: this machine cannot hold the schedule", w.Share)
	case bench.WarnLossy:
		return head + fmt.Sprintf("the key table was full and forgot the state of %d keys to take new ones (-on-full evict-lossy): those keys came back with a fresh quota, so it admitted more than the algorithm allows", w.N)
	case bench.WarnTableFull:
		return head + fmt.Sprintf("%d requests of new keys were rejected because the key table was full of keys it could not forget; raise -max-keys", w.N)
	case bench.WarnNoPolicy:
		return "the server sent no RateLimit-Policy field and -limit was not given: no limit is known, so no burst ratio or theory; give -limit and -window, or run ratebench fit on this folder"
	case bench.WarnFailed:
		return fmt.Sprintf("%d of %d requests failed (%s)", w.N, w.Of, kindsText(w.Kinds))
	}
	return head + fmt.Sprintf("%+v", w)
}

// phraseAll phrases every warning of runs.
func phraseAll(runs []result.Run) []string {
	var out []string
	for _, w := range bench.Warnings(runs) {
		out = append(out, phrase(w))
	}
	return out
}

// probeWarnings phrases the warnings of a probe's runs but lateness and
// the missing policy: its bursts are late by design, the fit reads the
// instants requests were really sent, and the policy is what it finds.
func probeWarnings(runs []result.Run) []string {
	var out []string
	for _, w := range bench.Warnings(runs) {
		if w.Kind != bench.WarnLate && w.Kind != bench.WarnNoPolicy {
			out = append(out, phrase(w))
		}
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
