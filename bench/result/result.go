// Package result is ratebench's record of a run, as data: the result.json
// schema, the HdrHistogram codec its latencies use, atomic reading and
// writing, and Merge, which combines runs made on several machines. The
// engines fill it; package report presents it.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// Result is what a run writes to result.json . Field names
// in JSON are stable; new fields may be added. Runs are in the order the
// targets were given. A Result is a plain value, not safe for concurrent
// mutation.
type Result struct {
	Meta     Meta           `json:"meta"`
	Policy   PolicyJSON     `json:"policy"`
	Workload map[string]any `json:"workload"`
	Runs     []Run          `json:"runs"`
	// Probe is what `ratebench probe` found; nil in other results.
	Probe *Probe `json:"probe,omitempty"`
	// Checks are the outcomes of the run's pass/fail conditions (-check),
	// one per condition and run it applies to; empty when none was given.
	Checks []Check `json:"checks,omitempty"`
}

// Check is one pass/fail condition evaluated on one run: Metric of the
// run named Run compared by Op with Threshold. Value and Threshold are in
// the metric's own unit (ns for latencies, percent for *_pct, plain
// ratios otherwise).
type Check struct {
	// Expr is the condition as the user wrote it, e.g. "gcra.p99<2ms".
	Expr string `json:"expr"`
	// Run is the label of the run it was evaluated on.
	Run       string  `json:"run"`
	Metric    string  `json:"metric"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
	// Value is the run's measure; Pass whether Value Op Threshold holds.
	Value float64 `json:"value"`
	Pass  bool    `json:"pass"`
}

// Meta describes how and where a run was made. It is the only part of a
// sim result that may differ between two runs with the same seed and flags.
type Meta struct {
	Version     string    `json:"version"`
	Go          string    `json:"go"`
	GOOS        string    `json:"goos"`
	GOARCH      string    `json:"goarch"`
	CPUs        int       `json:"cpus"`
	Seed        uint64    `json:"seed"`
	Mode        string    `json:"mode"`
	StartedAt   time.Time `json:"started_at"`
	Args        []string  `json:"args"`
	ElapsedNS   int64     `json:"elapsed_ns"`
	Interrupted bool      `json:"interrupted,omitempty"`
	// Warnings are what makes the figures doubtful, as records (older
	// files hold sentences, read as WarnText warnings).
	Warnings []Warning `json:"warnings,omitempty"`
	// Hosts lists the hosts of the runs that `ratebench merge` combined.
	Hosts []string `json:"hosts,omitempty"`
	// Shard is the part of a schedule split over several processes that
	// this run played (ratebench -shard I/N); nil for a whole schedule.
	Shard *Shard `json:"shard,omitempty"`
	// Merge says how `ratebench merge` made this result; nil for a run.
	Merge *MergeInfo `json:"merge,omitempty"`
}

// MergeInfo says what a merged result is: one run of several generators
// (the shards of one schedule), or a plain sum of runs that are not.
type MergeInfo struct {
	// Inputs is the number of results merged.
	Inputs int `json:"inputs"`
	// Shards is N when the inputs are the N shards of one schedule; 0 for
	// a plain sum of runs.
	Shards int `json:"shards,omitempty"`
	// Traced: the measures were recounted over the inputs' requests.csv
	// put on one clock (SetRecounted); otherwise the most admitted in any
	// W is a lower bound.
	Traced bool `json:"traced"`
	// ClockErrorNS is how far apart the shards' clocks may be, added to
	// every run's timing uncertainty: 0 for a simulation or shards on one
	// host, the sum of the two largest -clock-error otherwise, and -1 when
	// the hosts differ and that is unknown.
	ClockErrorNS int64 `json:"clock_error_ns"`
}

// Shard identifies one part of a schedule split over Count processes:
// Index in [0, Count), all started at StartAtUnixNS (0 for a simulation's
// virtual zero).
type Shard struct {
	Index         int   `json:"index"`
	Count         int   `json:"count"`
	StartAtUnixNS int64 `json:"start_at_unix_ns"`
	// Host is the name of the machine that ran the shard.
	Host string `json:"host,omitempty"`
	// ClockErrorNS bounds how far that machine's clock was from true time
	// (-clock-error); 0 when not given.
	ClockErrorNS int64 `json:"clock_error_ns,omitempty"`
}

// PolicyJSON is the policy as written to result.json.
type PolicyJSON struct {
	Limit    int64 `json:"limit"`
	WindowNS int64 `json:"window_ns"`
	Burst    int64 `json:"burst"`
}

// PolicyOf converts a policy for result.json.
func PolicyOf(p algorithms.Policy) PolicyJSON {
	p = p.WithDefaults()
	return PolicyJSON{Limit: p.Limit, WindowNS: int64(p.Window), Burst: p.Burst}
}

// String is "limit L per W, burst B".
func (p PolicyJSON) String() string {
	if p.Limit == 0 {
		return fmt.Sprintf("no limit known; most admitted counted per %v", time.Duration(p.WindowNS))
	}
	return fmt.Sprintf("limit %d per %v, burst %d", p.Limit, time.Duration(p.WindowNS), p.Burst)
}

// Policy converts back.
func (p PolicyJSON) Policy() algorithms.Policy {
	return algorithms.Policy{Limit: p.Limit, Window: time.Duration(p.WindowNS), Burst: p.Burst}
}

// Run holds the measures of one algorithm (one target) over the workload.
// Counts are of requests; the *_cost fields sum their costs.
type Run struct {
	Algorithm string `json:"algorithm"`
	Backend   string `json:"backend"`
	Replicas  int    `json:"replicas"`
	// StartUnixNS is when a live or HTTP pass started, in Unix ns: the
	// zero of its rows in requests.csv. 0 for a simulation, whose zero is
	// virtual.
	StartUnixNS int64 `json:"start_unix_ns,omitempty"`

	Offered  int64 `json:"offered"`
	Admitted int64 `json:"admitted"`
	Rejected int64 `json:"rejected"`
	Errors   int64 `json:"errors"`
	// TableFull counts the requests rejected because a per-key table was
	// full of keys it could not forget without loss (Decision.TableFull):
	// they are among Rejected, and never admitted by a fail-open policy.
	TableFull int64 `json:"table_full,omitempty"`
	// LossyEvictions counts the keys whose state a per-key table forgot to
	// take a new key (lossy eviction, only when chosen): such a key came
	// back with a fresh quota, so the run may admit more than its theory.
	LossyEvictions int64 `json:"lossy_evictions,omitempty"`
	// FailOpen reports that errors were admitted rather than rejected.
	FailOpen bool `json:"fail_open,omitempty"`
	// FirstError is the text of the first limiter error of the run.
	FirstError   string `json:"first_error,omitempty"`
	OfferedCost  int64  `json:"offered_cost"`
	AdmittedCost int64  `json:"admitted_cost"`
	RejectedCost int64  `json:"rejected_cost"`

	// MaxAdmittedInWindow is the most cost admitted (served, for shapers)
	// for one key in any span (t-W, t], computed exactly; MaxWindowEndNS is
	// the t of the first such span and MaxWindowSpanNS the time from the
	// first to the last admit inside it.
	MaxAdmittedInWindow int64   `json:"max_admitted_in_window"`
	MaxWindowEndNS      int64   `json:"max_window_end_ns"`
	MaxWindowSpanNS     int64   `json:"max_window_span_ns"`
	TheoryMaxInWindow   int64   `json:"theory_max_in_window"`
	BurstRatio          float64 `json:"burst_ratio"`
	TheoryRatio         float64 `json:"theory_ratio"`
	// OverTheorySpanNS is the shortest span, first to last admit of one
	// key inside one W, that holds more than the theory (TheoryFor);
	// absent when none does (or the theory is unknown).
	OverTheorySpanNS *int64 `json:"over_theory_span_ns,omitempty"`
	// TimingUncertaintyNS is how far the run's instants may lie from those
	// the limiter decided at: in an HTTP run, whose instants are send
	// instants, the p99 of answer minus send (the server decided in
	// between); 0 when the instants are the limiter's own.
	TimingUncertaintyNS int64 `json:"timing_uncertainty_ns,omitempty"`

	// DisagreementPct is the share of decisions, in percent, that differ
	// from the exact reference (sliding-log) on the same arrivals; -1 when
	// no reference ran.
	DisagreementPct float64 `json:"disagreement_pct"`
	// FalseAdmits and FalseRejects split the disagreements.
	FalseAdmits  int64 `json:"false_admits"`
	FalseRejects int64 `json:"false_rejects"`

	JainFairness   float64 `json:"jain_fairness"`
	ThroughputPerS float64 `json:"throughput_per_s"`

	// Latency holds percentiles in ns: in sim mode the delay a shaper put
	// on admitted requests (meters decide instantly in virtual time); in
	// live mode done minus intended send time. LatencyHDR is the same
	// histogram, HdrHistogram V2 compressed and base64, for merging.
	Latency    *Percentiles `json:"latency_ns,omitempty"`
	LatencyHDR string       `json:"latency_hdr,omitempty"`

	Series      Series           `json:"series"`
	StatusCodes map[string]int64 `json:"status_codes,omitempty"`
	ErrorKinds  map[string]int64 `json:"error_kinds,omitempty"`
	// Keys holds admitted and offered per key, sorted by key, when there
	// are at most MaxKeysReported keys.
	Keys     []KeyCount `json:"keys,omitempty"`
	KeyCount int        `json:"key_count"`

	// Live holds what only the live engine measures (service time, sender
	// lateness, drops, offered and achieved rates, calibration); nil in
	// sim runs.
	Live *LiveStats `json:"live,omitempty"`
	// HTTP holds what only an HTTP run (`ratebench attack`) measures.
	HTTP *HTTPStats `json:"http,omitempty"`
}

// MaxKeysReported bounds the per-key table written to result.json.
const MaxKeysReported = 10000

// Percentiles of a latency distribution, in ns.
type Percentiles struct {
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	P999  int64 `json:"p999"`
	P9999 int64 `json:"p9999"`
	Max   int64 `json:"max"`
	Count int64 `json:"count"`
}

// Series is admitted and rejected cost per time bin of BinNS from the
// start of the run.
type Series struct {
	BinNS    int64   `json:"bin_ns"`
	Admitted []int64 `json:"admitted"`
	Rejected []int64 `json:"rejected"`
}

// KeyCount is one key's share.
type KeyCount struct {
	Key      string `json:"key"`
	Offered  int64  `json:"offered"`
	Admitted int64  `json:"admitted"`
	// MaxInWindow is the most cost admitted for the key in any span W
	// (Run.MaxAdmittedInWindow is the largest over the keys); in a merge
	// without traces, the largest of the inputs' (a lower bound).
	MaxInWindow int64 `json:"max_in_window"`
}

// WriteFile writes r as indented JSON to path through a temporary file in
// the same folder and a rename, so a reader never sees half a file.
func (r *Result) WriteFile(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("result: encode result: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("result: write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		tmp.Close()
		return fmt.Errorf("result: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("result: sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("result: close %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// ReadFile reads a result.json.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("result: %s is not a valid result.json: %w", path, err)
	}
	if len(r.Runs) == 0 || r.Policy.Limit < 0 || r.Policy.Limit == 0 && !r.NoPolicy() || r.Policy.WindowNS < 1 {
		return nil, fmt.Errorf("result: %s is not a valid result.json: no runs or no policy", path)
	}
	return &r, nil
}

// NoPolicy reports whether no limit is known: HTTP runs against a server
// that advertised none, with no -limit given. Policy.Limit is then 0 and
// Policy.WindowNS only the span the most admitted is counted in.
func (r *Result) NoPolicy() bool {
	for _, run := range r.Runs {
		if run.HTTP == nil || run.HTTP.PolicySource != "none" {
			return false
		}
	}
	return len(r.Runs) > 0
}

// SharesState reports whether the run's replicas shared one limiter state
// (a shared backend) rather than each keeping its own in memory.
func (r Run) SharesState() bool {
	return r.Backend != "" && r.Backend != "memory"
}

// TheoryFor is the worst case admitted in any span W for the whole run:
// one instance's theory, times the replicas when each kept its own state.
func (r Run) TheoryFor() int64 {
	if r.SharesState() {
		return r.TheoryMaxInWindow
	}
	return r.TheoryMaxInWindow * int64(max(r.Replicas, 1))
}

// AboveTheory reports whether the run admitted more than its theory in a
// span W (window, in ns) beyond doubt: in a span shorter than W by more
// than its timing uncertainty, so that no shift of its instants by that
// much puts the excess outside W. A run from before the span was recorded
// counts when its maximum exceeds the theory.
func (r Run) AboveTheory(window int64) bool {
	if r.TheoryFor() <= 0 || r.MaxAdmittedInWindow <= r.TheoryFor() {
		return false
	}
	return r.OverTheorySpanNS == nil || *r.OverTheorySpanNS+r.TimingUncertaintyNS < window
}

// Label names a run in tables, legends and file names: the algorithm,
// " xN" for N replicas, "@backend" for a backend other than memory, e.g.
// "gcra", "gcra x4", "gcra x4@redis".
func (r Run) Label() string {
	name := r.Algorithm
	if r.Replicas > 1 {
		name = fmt.Sprintf("%s x%d", name, r.Replicas)
	}
	if r.Backend != "" && r.Backend != "memory" {
		name += "@" + r.Backend
	}
	return name
}

// Labels returns the label of every run of r, made unique by a "#2",
// "#3" suffix when two runs share one.
func (r *Result) Labels() []string {
	out := make([]string, len(r.Runs))
	seen := map[string]int{}
	for i, run := range r.Runs {
		l := run.Label()
		seen[l]++
		if n := seen[l]; n > 1 {
			l = fmt.Sprintf("%s #%d", l, n)
		}
		out[i] = l
	}
	return out
}

// WorkloadName is r's workload name, or "unknown".
func (r *Result) WorkloadName() string {
	if name, _ := r.Workload["name"].(string); name != "" {
		return name
	}
	return "unknown"
}
