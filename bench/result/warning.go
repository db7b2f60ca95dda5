package result

import (
	"bytes"
	"encoding/json"
	"slices"
)

// WarningKind is what a Warning is about. Its values are stable: they are
// written to result.json.
type WarningKind string

// The kinds of Warning; the fields each sets are in brackets (Run is set
// whenever the warning concerns one run).
const (
	// WarnLate: the sender started LatePct percent of the calls more than
	// LateAfterNS late [LatePct, LateAfterNS, LatenessP99NS]; the
	// machine, not the limiter, was the bottleneck.
	WarnLate WarningKind = "late"
	// WarnBackendLate: as WarnLate, but a shared backend timed out on N
	// decisions meanwhile, holding the workers: the backend made the
	// calls late [LatePct, LateAfterNS, LatenessP99NS, N, Backend,
	// FirstError].
	WarnBackendLate WarningKind = "backend-late"
	// WarnDropped: N of Of arrivals were dropped at the in-flight cap
	// [N, Of, MaxInFlight].
	WarnDropped WarningKind = "dropped"
	// WarnUnsent: the sender fell behind and stopped at the end of the
	// pass with N of Of arrivals not sent [N, Of].
	WarnUnsent WarningKind = "unsent"
	// WarnAbandoned: N workers were still busy after the interrupt and
	// were given up on; their decisions are missing [N].
	WarnAbandoned WarningKind = "abandoned"
	// WarnUnserved: N shaper waits were still pending at the end and were
	// not awaited; their latency is the promised one [N].
	WarnUnserved WarningKind = "unserved"
	// WarnCalibrationLate: even the no-op limiter was started late for
	// LatePct percent of the calls: the machine cannot hold the schedule
	// [LatePct].
	WarnCalibrationLate WarningKind = "calibration-late"
	// WarnLossy: the key table forgot the state of N keys to take new
	// ones; they came back with a fresh quota [N].
	WarnLossy WarningKind = "lossy"
	// WarnTableFull: N requests of new keys were refused because the key
	// table was full of keys it could not forget [N].
	WarnTableFull WarningKind = "table-full"
	// WarnNoPolicy: the limiter's limit was neither given nor advertised:
	// no ratio or theory [].
	WarnNoPolicy WarningKind = "no-policy"
	// WarnFailed: N of Of requests failed [N, Of, ErrorKinds].
	WarnFailed WarningKind = "failed"
	// WarnStartLag: the shard began StartLagNS after the start planned
	// for it, more than MaxStartLagNS; its requests left late against the
	// other shards' [Shard, StartLagNS, MaxStartLagNS].
	WarnStartLag WarningKind = "start-lag"
	// WarnTraceOnly: the result was built from a trace alone, which does
	// not tell a run's backend, replicas, start time, fail-open policy,
	// disagreement or live measures [PolicyFrom].
	WarnTraceOnly WarningKind = "trace-only"
	// WarnReordered: N requests of a trace came more than Rows rows out
	// of send order; each counts at the instant of the one before it
	// [N, Rows].
	WarnReordered WarningKind = "reordered"
	// WarnMergeReordered: as WarnReordered, in the inputs' traces of a
	// merge [N, Rows].
	WarnMergeReordered WarningKind = "merge-reordered"
	// WarnMergeWorkloads: merged inputs ran different workloads; the
	// result keeps the first's [Inputs, Workloads: one each].
	WarnMergeWorkloads WarningKind = "merge-workloads"
	// WarnMergeLatency: an input of a merged run had latency percentiles
	// but no histogram, so the run has no latency [].
	WarnMergeLatency WarningKind = "merge-latency"
	// WarnMergeURLs: the inputs of a merged run attacked different URLs;
	// the result keeps the first's [URLs: the first and the first other].
	WarnMergeURLs WarningKind = "merge-urls"
	// WarnClockUnknown: merged live shards ran on several hosts (or did
	// not say which) and not all gave their clock error: how far apart
	// their clocks were is not in the timing uncertainty [].
	WarnClockUnknown WarningKind = "clock-unknown"
	// WarnMaxLowerBound: the most admitted in any span W of each merged
	// run is the largest of the inputs' maxima, a lower bound of the
	// combined one, since the inputs' admits are not interleaved [].
	WarnMaxLowerBound WarningKind = "max-lower-bound"
	// WarnText: a warning read from a result.json that stored warnings as
	// sentences [Text].
	WarnText WarningKind = "text"
)

// Warning is one thing that makes a result's figures doubtful, stated as
// data: package report phrases it. Fields a kind does not use are zero and
// left out of JSON. It is a plain value, not safe for concurrent mutation.
type Warning struct {
	Kind WarningKind `json:"kind"`
	// Run names the run it concerns (its algorithm, or its label for
	// the merge kinds); "" for the calibration and the whole result.
	Run string `json:"run,omitempty"`
	// HTTP marks a run of an executor (an attack): its calls are
	// requests to a server.
	HTTP bool `json:"http,omitempty"`
	// N of Of are the counts the kind says (arrivals, requests, keys).
	N  int64 `json:"n,omitempty"`
	Of int64 `json:"of,omitempty"`
	// LatePct is the share of calls started late, in percent, more than
	// LateAfterNS after their instant; LatenessP99NS the sender's
	// lateness at the 99th percentile, in ns.
	LatePct       float64 `json:"late_pct,omitempty"`
	LateAfterNS   int64   `json:"late_after_ns,omitempty"`
	LatenessP99NS int64   `json:"lateness_p99_ns,omitempty"`
	// MaxInFlight is the in-flight cap arrivals were dropped at.
	MaxInFlight int `json:"max_inflight,omitempty"`
	// Backend is the shared backend that timed out; FirstError its first
	// error, as it gave it.
	Backend    string `json:"backend,omitempty"`
	FirstError string `json:"first_error,omitempty"`
	// ErrorKinds counts failed requests by kind of error.
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	// Shard is the shard that began late, with its planned start;
	// StartLagNS how late it began and MaxStartLagNS the lag allowed, in
	// ns.
	Shard         *Shard `json:"shard,omitempty"`
	StartLagNS    int64  `json:"start_lag_ns,omitempty"`
	MaxStartLagNS int64  `json:"max_start_lag_ns,omitempty"`
	// PolicyFrom is where the policy of a result built from a trace came
	// from: "flags" (given on the command line) or "fit" (fit.json's
	// best fit).
	PolicyFrom string `json:"policy_from,omitempty"`
	// Rows is how far out of send order, in rows, a request had to come
	// to be counted as reordered.
	Rows int `json:"rows,omitempty"`
	// Inputs and Workloads are the merged inputs that ran different
	// workloads, and their workloads' names, in the same order.
	Inputs    []string `json:"inputs,omitempty"`
	Workloads []string `json:"workloads,omitempty"`
	// URLs are the different URLs the inputs of a merged run attacked.
	URLs []string `json:"urls,omitempty"`
	// Text is the sentence of a WarnText warning, from an older
	// result.json.
	Text string `json:"text,omitempty"`
}

// UnmarshalJSON reads a warning in either form result.json has held: an
// object, or (from older files) a sentence, read as a WarnText warning.
func (w *Warning) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		*w = Warning{Kind: WarnText}
		return json.Unmarshal(b, &w.Text)
	}
	type plain Warning // without this method
	*w = Warning{}
	return json.Unmarshal(b, (*plain)(w))
}

// Warned reports whether m holds a warning of kind k.
func (m Meta) Warned(k WarningKind) bool {
	return slices.ContainsFunc(m.Warnings, func(w Warning) bool { return w.Kind == k })
}
