package result

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ErrMismatch is wrapped by the errors Merge returns for inputs that cannot
// be combined: different policies, bins of different widths, or runs that
// are not in every input.
var ErrMismatch = errors.New("results do not match")

// Input is one result to merge and the name it is listed under in
// meta.hosts (typically the folder it was read from).
type Input struct {
	Name   string
	Result *Result
}

// Merge combines runs of the same plan made on several machines, the way a
// load test that outgrows one machine is combined. Runs are matched by
// (algorithm, backend, replicas) and must be in every input; the policies
// must be equal. For each run:
//
//   - counts, costs, false admits/rejects, throughput, status codes and
//     error kinds are summed, and so are the live engine's counts, workers
//     and rates and attack's responses, connections and Retry-After
//     values (the 429 share is recomputed);
//   - latency histograms are merged (HdrHistogram merge) and the
//     percentiles read off the merged one, and so are the live service
//     time and lateness; the live calibration is the first input's;
//   - series are summed bin by bin (bin i covers the same offset from each
//     machine's start); bins must have the same width;
//   - the most admitted in any span W (with its end and span) is the
//     largest of the inputs': a lower bound of the combined maximum, since
//     the machines' admits are not interleaved in time here. Merge says so
//     in a warning (WarnMaxLowerBound, in Meta.Warnings) when it merges more
//     than one input. When the inputs' traces (requests.csv) are at hand,
//     SetRecounted replaces the bound, for every run, by the exact maximum
//     counted over the traces put on one clock, with the series, per-key
//     table and disagreement recounted there, and drops the warning:
//     `ratebench merge` does so when every input folder has its trace;
//   - disagreement is the mean of the inputs weighted by offered;
//   - per-key counts are summed by key and Jain's index recomputed; when an
//     input has no per-key table, the index is the mean weighted by
//     offered.
//
// The meta of the first input is kept, with Hosts listing the inputs (or
// the hosts an input was itself merged from), CPUs summed, the earliest
// start, the longest elapsed time, and the inputs' warnings; Meta.Merge
// says whether the inputs are the shards of one schedule, and how far
// apart their clocks may be (added to every run's timing uncertainty).
// Merge does not modify its inputs. Runs are matched in order: run n of
// the result merges run RunIndex(inputs, n, i) of each input i.
func Merge(inputs []Input) (*Result, error) {
	if len(inputs) == 0 {
		return nil, errors.New("result: merge: no results")
	}
	if err := checkShards(inputs); err != nil {
		return nil, err
	}
	first := inputs[0].Result
	out := &Result{Meta: first.Meta, Policy: first.Policy, Workload: maps.Clone(first.Workload)}
	out.Meta.Hosts, out.Meta.Warnings, out.Meta.CPUs, out.Meta.Shard = nil, nil, 0, nil
	info := &MergeInfo{Inputs: len(inputs)}
	if sh := first.Meta.Shard; sh != nil {
		info.Shards = sh.Count
		info.ClockErrorNS = clockError(inputs)
	}
	for _, in := range inputs {
		r := in.Result
		if r.Policy != first.Policy {
			return nil, fmt.Errorf("result: merge: %w: %s has policy %s, %s has %s",
				ErrMismatch, inputs[0].Name, first.Policy, in.Name, r.Policy)
		}
		if len(r.Runs) != len(first.Runs) {
			return nil, fmt.Errorf("result: merge: %w: %s has %d runs, %s has %d",
				ErrMismatch, inputs[0].Name, len(first.Runs), in.Name, len(r.Runs))
		}
		mergeMeta(&out.Meta, r.Meta, in.Name)
		if r.WorkloadName() != first.WorkloadName() {
			out.Meta.Warnings = append(out.Meta.Warnings, Warning{Kind: WarnMergeWorkloads,
				Inputs: []string{inputs[0].Name, in.Name}, Workloads: []string{first.WorkloadName(), r.WorkloadName()}})
		}
	}
	for n, run := range first.Runs {
		runs := make([]Run, len(inputs))
		k := occurrence(first.Runs, n)
		for i, in := range inputs {
			j := nth(in.Result.Runs, run, k)
			if j < 0 {
				return nil, fmt.Errorf("result: merge: %w: %s has no run of %s (runs are matched by algorithm, backend and replicas)",
					ErrMismatch, in.Name, run.Label())
			}
			runs[i] = in.Result.Runs[j]
		}
		m, warns, err := mergeRuns(runs, out.Policy)
		if err != nil {
			return nil, fmt.Errorf("result: merge: %s: %w", run.Label(), err)
		}
		for _, w := range warns {
			w.Run = run.Label()
			out.Meta.Warnings = append(out.Meta.Warnings, w)
		}
		if info.ClockErrorNS > 0 {
			m.TimingUncertaintyNS += info.ClockErrorNS
		}
		out.Runs = append(out.Runs, m)
	}
	out.Meta.Merge = info
	if info.ClockErrorNS < 0 {
		out.Meta.Warnings = append(out.Meta.Warnings, Warning{Kind: WarnClockUnknown})
	}
	if len(inputs) > 1 && !out.Meta.Warned(WarnMaxLowerBound) {
		out.Meta.Warnings = append(out.Meta.Warnings, Warning{Kind: WarnMaxLowerBound})
	}
	return out, nil
}

// RunIndex returns the index, among the runs of inputs[i], of the run that
// run n of Merge(inputs) merges, or -1 when that input has none (Merge
// then fails).
func RunIndex(inputs []Input, n, i int) int {
	first := inputs[0].Result.Runs
	return nth(inputs[i].Result.Runs, first[n], occurrence(first, n))
}

// clockError is how far apart the clocks of the shards inputs may be, in
// ns: 0 for simulations (one virtual clock) and for shards all run on one
// host; the sum of the two largest Shard.ClockErrorNS when every shard
// gave one (two hosts may err in opposite directions); -1 otherwise.
func clockError(inputs []Input) int64 {
	hosts := map[string]bool{}
	var errs []int64
	for _, in := range inputs {
		if in.Result.Meta.Mode == "sim" {
			return 0
		}
		sh := in.Result.Meta.Shard
		hosts[sh.Host] = true
		if sh.ClockErrorNS > 0 {
			errs = append(errs, sh.ClockErrorNS)
		}
	}
	switch {
	case len(hosts) == 1 && !hosts[""]:
		return 0
	case len(errs) < len(inputs):
		return -1
	}
	slices.Sort(errs)
	n := len(errs)
	if n == 1 {
		return errs[0]
	}
	return errs[n-1] + errs[n-2]
}

// Recounted is one merged run as counted over its inputs' traces put on
// one clock (a measure.Summary over the merged rows), and that clock's
// zero in Unix ns (0 for simulations, whose zero is virtual).
type Recounted struct {
	StartUnixNS int64
	Run         Run
}

// SetRecounted replaces, in a result of Merge, the measures of every run
// that the inputs' results can only bound or approximate by those of
// recounted[n], counted over the inputs' traces on one clock: the most
// admitted in any span W (with its end and span) and the shortest span
// over the theory, the series on the common clock, the per-key table, key
// count and Jain's index; and, when the inputs are the shards of one
// schedule (Meta.Merge.Shards), the disagreement when the recount had a
// reference (DisagreementPct >= 0) and an HTTP run's header checks (one
// shard's answers are followed by the others' requests for the same key).
// Runs that are not shards are each judged against their own arrivals. It sets StartUnixNS to the clock's
// zero, recomputes the burst ratio, drops WarnMaxLowerBound and marks
// Meta.Merge traced. Latency stays the merge of the inputs' histograms.
// recounted must have one entry per run, each with the run's counts
// (offered, admitted, rejected, errors): otherwise the traces are not the
// results' and it returns an error, changing nothing.
func (r *Result) SetRecounted(recounted []Recounted) error {
	if len(recounted) != len(r.Runs) {
		return fmt.Errorf("result: %d recounted runs for %d runs", len(recounted), len(r.Runs))
	}
	for n, x := range recounted {
		m, c := r.Runs[n], x.Run
		if c.Offered != m.Offered || c.Admitted != m.Admitted || c.Rejected != m.Rejected || c.Errors != m.Errors {
			return fmt.Errorf("result: %s: the traces count %d offered, %d admitted, %d rejected, %d errors; the results %d, %d, %d, %d",
				m.Label(), c.Offered, c.Admitted, c.Rejected, c.Errors, m.Offered, m.Admitted, m.Rejected, m.Errors)
		}
	}
	shards := r.Meta.Merge != nil && r.Meta.Merge.Shards > 0
	for n, x := range recounted {
		m, c := &r.Runs[n], x.Run
		m.StartUnixNS = x.StartUnixNS
		m.MaxAdmittedInWindow, m.MaxWindowEndNS, m.MaxWindowSpanNS = c.MaxAdmittedInWindow, c.MaxWindowEndNS, c.MaxWindowSpanNS
		m.OverTheorySpanNS = c.OverTheorySpanNS
		m.Series = c.Series
		m.Keys, m.KeyCount, m.JainFairness = c.Keys, c.KeyCount, c.JainFairness
		if r.Policy.Limit > 0 {
			m.BurstRatio = float64(m.MaxAdmittedInWindow) / float64(r.Policy.Limit)
		}
		if !shards {
			continue
		}
		if c.DisagreementPct >= 0 {
			m.DisagreementPct, m.FalseAdmits, m.FalseRejects = c.DisagreementPct, c.FalseAdmits, c.FalseRejects
		}
		if c.HTTP != nil && c.HTTP.Headers != nil && m.HTTP != nil {
			h := *m.HTTP
			h.Headers = c.HTTP.Headers
			m.HTTP = &h
		}
	}
	r.Meta.Warnings = slices.DeleteFunc(r.Meta.Warnings, func(w Warning) bool { return w.Kind == WarnMaxLowerBound })
	if r.Meta.Merge == nil {
		r.Meta.Merge = &MergeInfo{}
	}
	r.Meta.Merge.Traced = true
	return nil
}

// occurrence counts the runs before runs[n] of the same target.
func occurrence(runs []Run, n int) int {
	k := 0
	for _, r := range runs[:n] {
		if sameTarget(r, runs[n]) {
			k++
		}
	}
	return k
}

// nth returns the index of the k-th (from 0) run of run's target, or -1.
func nth(runs []Run, run Run, k int) int {
	for i, r := range runs {
		if sameTarget(r, run) {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return -1
}

// sameTarget reports whether two runs are of the same target.
func sameTarget(a, b Run) bool {
	return a.Algorithm == b.Algorithm && backendOf(a) == backendOf(b) && max(a.Replicas, 1) == max(b.Replicas, 1)
}

func backendOf(r Run) string {
	if r.Backend == "" {
		return "memory"
	}
	return r.Backend
}

// mergeMeta folds one input's meta into m.
func mergeMeta(m *Meta, in Meta, name string) {
	if len(in.Hosts) > 0 {
		m.Hosts = append(m.Hosts, in.Hosts...)
	} else {
		m.Hosts = append(m.Hosts, name)
	}
	m.CPUs += in.CPUs
	if !in.StartedAt.IsZero() && (m.StartedAt.IsZero() || in.StartedAt.Before(m.StartedAt)) {
		m.StartedAt = in.StartedAt
	}
	m.ElapsedNS = max(m.ElapsedNS, in.ElapsedNS)
	m.Interrupted = m.Interrupted || in.Interrupted
	if in.Mode != m.Mode {
		m.Mode = "mixed"
	}
	m.Warnings = append(m.Warnings, in.Warnings...)
}

// mergeRuns combines the runs of one target, and says what it could not
// combine in warnings (without their Run).
func mergeRuns(runs []Run, pol PolicyJSON) (Run, []Warning, error) {
	m := runs[0]
	m.Offered, m.Admitted, m.Rejected, m.Errors = 0, 0, 0, 0
	m.OfferedCost, m.AdmittedCost, m.RejectedCost = 0, 0, 0
	m.FalseAdmits, m.FalseRejects, m.ThroughputPerS = 0, 0, 0
	m.StatusCodes, m.ErrorKinds, m.Keys = nil, nil, nil
	m.Series = Series{BinNS: runs[0].Series.BinNS}
	// Each part's spans are its own keys' (a key sent from several hosts
	// splits across parts): the merged run has none to show, and is above
	// its theory when its largest part's maximum is.
	m.OverTheorySpanNS = nil
	var disagree, disagreeW float64
	for _, r := range runs {
		m.Offered += r.Offered
		m.Admitted += r.Admitted
		m.Rejected += r.Rejected
		m.Errors += r.Errors
		m.OfferedCost += r.OfferedCost
		m.AdmittedCost += r.AdmittedCost
		m.RejectedCost += r.RejectedCost
		m.FalseAdmits += r.FalseAdmits
		m.FalseRejects += r.FalseRejects
		m.ThroughputPerS += r.ThroughputPerS
		m.StatusCodes = sumCounts(m.StatusCodes, r.StatusCodes)
		m.ErrorKinds = sumCounts(m.ErrorKinds, r.ErrorKinds)
		if r.MaxAdmittedInWindow > m.MaxAdmittedInWindow {
			m.MaxAdmittedInWindow, m.MaxWindowEndNS, m.MaxWindowSpanNS = r.MaxAdmittedInWindow, r.MaxWindowEndNS, r.MaxWindowSpanNS
		}
		m.TheoryMaxInWindow = max(m.TheoryMaxInWindow, r.TheoryMaxInWindow)
		m.TimingUncertaintyNS = max(m.TimingUncertaintyNS, r.TimingUncertaintyNS)
		if r.DisagreementPct >= 0 {
			disagree += r.DisagreementPct * float64(r.Offered)
			disagreeW += float64(r.Offered)
		}
		if r.Series.BinNS != m.Series.BinNS && (len(r.Series.Admitted) > 0 || len(r.Series.Rejected) > 0) {
			return m, nil, fmt.Errorf("%w: series bins of %d ns and %d ns", ErrMismatch, m.Series.BinNS, r.Series.BinNS)
		}
		m.Series.Admitted = sumBins(m.Series.Admitted, r.Series.Admitted)
		m.Series.Rejected = sumBins(m.Series.Rejected, r.Series.Rejected)
	}
	m.DisagreementPct = -1
	if disagreeW > 0 {
		m.DisagreementPct = disagree / disagreeW
	}
	m.BurstRatio, m.TheoryRatio = 0, 0
	if pol.Limit > 0 { // else no limit is known
		m.BurstRatio = float64(m.MaxAdmittedInWindow) / float64(pol.Limit)
		m.TheoryRatio = float64(m.TheoryMaxInWindow) / float64(pol.Limit)
	}
	mergeKeys(&m, runs)
	var warns []Warning
	complete, err := mergeLatency(&m, runs)
	if err != nil {
		return m, nil, err
	}
	if !complete {
		warns = append(warns, Warning{Kind: WarnMergeLatency})
	}
	if m.Live, err = mergeLive(m, runs); err != nil {
		return m, nil, err
	}
	var urls []string
	if m.HTTP, urls, err = mergeHTTP(m, runs); err != nil {
		return m, nil, err
	}
	if urls != nil {
		warns = append(warns, Warning{Kind: WarnMergeURLs, URLs: urls})
	}
	return m, warns, nil
}

// sumCounts adds b into a, allocating a when needed.
func sumCounts(a, b map[string]int64) map[string]int64 {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]int64, len(b))
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}

// sumBins adds b into a bin by bin, growing a to the longer length.
func sumBins(a, b []int64) []int64 {
	if len(b) > len(a) {
		a = append(a, make([]int64, len(b)-len(a))...)
	}
	for i, v := range b {
		a[i] += v
	}
	return a
}

// mergeKeys sums the per-key tables by key and recomputes Jain's index;
// without a table in every input it weights the inputs' indexes by offered.
func mergeKeys(m *Run, runs []Run) {
	complete := true
	for _, r := range runs {
		complete = complete && (len(r.Keys) > 0 || r.KeyCount == 0)
	}
	if !complete {
		var jain, w float64
		for _, r := range runs {
			jain += r.JainFairness * float64(r.Offered)
			w += float64(r.Offered)
			m.KeyCount = max(m.KeyCount, r.KeyCount)
		}
		if w > 0 {
			m.JainFairness = jain / w
		}
		return
	}
	byKey := map[string]*KeyCount{}
	for _, r := range runs {
		for _, k := range r.Keys {
			kc := byKey[k.Key]
			if kc == nil {
				kc = &KeyCount{Key: k.Key}
				byKey[k.Key] = kc
			}
			kc.Offered += k.Offered
			kc.Admitted += k.Admitted
			kc.MaxInWindow = max(kc.MaxInWindow, k.MaxInWindow)
		}
	}
	names := slices.Sorted(maps.Keys(byKey))
	m.KeyCount = len(names)
	admitted := make([]int64, len(names))
	if len(names) <= MaxKeysReported {
		m.Keys = make([]KeyCount, len(names))
	}
	for i, k := range names {
		admitted[i] = byKey[k].Admitted
		if m.Keys != nil {
			m.Keys[i] = *byKey[k]
		}
	}
	m.JainFairness = Jain(admitted)
}

// mergeLatency merges the latency histograms. A run with percentiles but
// no histogram cannot be merged: the merged run then has no latency, and
// the bool is false.
func mergeLatency(m *Run, runs []Run) (bool, error) {
	m.Latency, m.LatencyHDR = nil, ""
	var h *hdrhistogram.Histogram
	for _, r := range runs {
		if r.LatencyHDR == "" {
			if r.Latency != nil && r.Latency.Count > 0 {
				return false, nil
			}
			continue
		}
		in, err := DecodeHistogram(r.LatencyHDR)
		if err != nil {
			return false, err
		}
		if h == nil {
			h = NewHistogram()
		}
		if dropped := h.Merge(in); dropped > 0 {
			return false, fmt.Errorf("latency histogram: %d values out of range", dropped)
		}
	}
	if h != nil && h.TotalCount() > 0 {
		m.Latency, m.LatencyHDR = PercentilesOf(h), EncodeHistogram(h)
	}
	return true, nil
}

// checkShards checks that inputs of which any is a shard (Meta.Shard) are
// the shards of one schedule: each a shard, of the same seed, workload,
// policy, mode, start instant and count N, each index 0..N-1 exactly once.
func checkShards(inputs []Input) error {
	sharded := false
	for _, in := range inputs {
		sharded = sharded || in.Result.Meta.Shard != nil
	}
	if !sharded {
		return nil
	}
	first := inputs[0]
	if first.Result.Meta.Shard == nil {
		return fmt.Errorf("result: merge: %w: %s is not a shard, other inputs are", ErrMismatch, first.Name)
	}
	f := first.Result.Meta
	seen := make(map[int]string, len(inputs))
	for _, in := range inputs {
		m := in.Result.Meta
		sh := m.Shard
		switch {
		case sh == nil:
			return fmt.Errorf("result: merge: %w: %s is not a shard, %s is", ErrMismatch, in.Name, first.Name)
		case sh.Count != f.Shard.Count:
			return fmt.Errorf("result: merge: %w: %s is a shard of %d, %s of %d", ErrMismatch, in.Name, sh.Count, first.Name, f.Shard.Count)
		case m.Seed != f.Seed:
			return fmt.Errorf("result: merge: %w: shard %s has seed %d, %s has %d", ErrMismatch, in.Name, m.Seed, first.Name, f.Seed)
		case m.Mode != f.Mode:
			return fmt.Errorf("result: merge: %w: shard %s ran in mode %s, %s in %s", ErrMismatch, in.Name, m.Mode, first.Name, f.Mode)
		case sh.StartAtUnixNS != f.Shard.StartAtUnixNS:
			return fmt.Errorf("result: merge: %w: shard %s starts at %d ns, %s at %d ns", ErrMismatch, in.Name, sh.StartAtUnixNS, first.Name, f.Shard.StartAtUnixNS)
		case in.Result.Policy != first.Result.Policy:
			return fmt.Errorf("result: merge: %w: shard %s has policy %s, %s has %s", ErrMismatch, in.Name, in.Result.Policy, first.Name, first.Result.Policy)
		case !reflect.DeepEqual(in.Result.Workload, first.Result.Workload):
			return fmt.Errorf("result: merge: %w: shard %s ran workload %v, %s ran %v", ErrMismatch, in.Name, in.Result.Workload, first.Name, first.Result.Workload)
		}
		if prev, ok := seen[sh.Index]; ok {
			return fmt.Errorf("result: merge: %w: %s and %s are both shard %d/%d", ErrMismatch, prev, in.Name, sh.Index, sh.Count)
		}
		seen[sh.Index] = in.Name
	}
	for i := range f.Shard.Count {
		if _, ok := seen[i]; !ok {
			return fmt.Errorf("result: merge: %w: shard %d/%d is missing", ErrMismatch, i, f.Shard.Count)
		}
	}
	return nil
}
