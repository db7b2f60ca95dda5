package tracefile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
)

// MergePlan is how the traces of several run folders combine into one
// for the merge of their results (result.Merge): for each merged run,
// the inputs' rows and how they count. Make one with PlanMerge. Not safe
// for concurrent use.
type MergePlan struct {
	runs []mergedRun
}

// mergedRun is one merged run's share of a MergePlan.
type mergedRun struct {
	parts []Part
	count measure.Counting
	start int64 // the common clock's zero, Unix ns (0 for simulations)
	span  int64 // ns of the common clock the inputs' series cover
	label string
}

// planInputs is what PlanMerge learns of its inputs' traces.
type planInputs struct {
	dirs   []string
	paths  []string // each folder's trace
	inputs []result.Input
	// first[i][j] is the first row of run j of input i: a trace holds its
	// passes one after the other, one row per request offered.
	first [][]int64
	http  [][]bool // run j of input i has HTTP rows
}

// PlanMerge plans the merge of the traces (Name) of the run folders dirs
// into res, the result.Merge of inputs (input i read from dirs[i]). It
// returns a nil plan and why when they cannot be merged (a folder
// without its trace, a trace that does not match its result, starts not
// on one clock, costs a trace does not hold), and an error for a trace
// that is not well formed (a *FormatError naming its line) or cannot be
// read. It reads the traces and writes nothing.
func PlanMerge(dirs []string, inputs []result.Input, res *result.Result) (plan *MergePlan, why string, err error) {
	in := &planInputs{dirs: dirs, paths: make([]string, len(dirs)), inputs: inputs,
		first: make([][]int64, len(dirs)), http: make([][]bool, len(dirs))}
	for i, d := range dirs {
		in.paths[i] = filepath.Join(d, Name)
		if _, err := os.Stat(in.paths[i]); err != nil {
			return nil, fmt.Sprintf("%s has no %s", d, Name), nil
		}
	}
	for i := range dirs {
		if why, err := in.scan(i); why != "" || err != nil {
			return nil, why, err
		}
	}
	plan = &MergePlan{}
	for n := range res.Runs {
		tr, why, err := in.planRun(n, res)
		if why != "" || err != nil {
			return nil, why, err
		}
		plan.runs = append(plan.runs, tr)
	}
	return plan, "", nil
}

// scan reads input i's trace: where each of its runs starts, and whether
// its rows are an HTTP run's; or why it does not match its result.
func (in *planInputs) scan(i int) (why string, err error) {
	p := in.paths[i]
	idx, err := Scan(p)
	if err != nil {
		return "", err
	}
	runs := in.inputs[i].Result.Runs
	var offered int64
	for _, r := range runs {
		offered += r.Offered
		if r.OfferedCost != r.Offered || idx.CostNot1 {
			return fmt.Sprintf("%s's requests cost other than 1, which merged traces do not record", in.dirs[i]), nil
		}
	}
	if idx.Rows != offered {
		return fmt.Sprintf("%s has %d rows for the %d requests its result.json offered", p, idx.Rows, offered), nil
	}
	in.first[i], in.http[i] = make([]int64, len(runs)), make([]bool, len(runs))
	var row int64
	for j, r := range runs {
		in.first[i][j] = row
		for _, s := range idx.Segments {
			if s.First >= row+r.Offered || s.First+s.Count <= row {
				continue
			}
			if s.Algorithm != r.Algorithm {
				return fmt.Sprintf("%s's rows %d to %d are of %s, not of its run %s", p, row+1, row+r.Offered, s.Algorithm, r.Label()), nil
			}
			in.http[i][j] = in.http[i][j] || s.HTTP
		}
		row += r.Offered
	}
	return "", nil
}

// planRun plans merged run n of res: its parts on the common clock and
// how they count; or why its inputs' traces cannot share one clock.
func (in *planInputs) planRun(n int, res *result.Result) (mergedRun, string, error) {
	m := res.Runs[n]
	tr := mergedRun{label: m.Label(), start: math.MaxInt64}
	var zero, clocked, isHTTP bool
	keys := 0 // an upper bound of the distinct keys, for the reference
	for i, input := range in.inputs {
		j := result.RunIndex(in.inputs, n, i)
		r := input.Result.Runs[j]
		keys += max(r.KeyCount, 1)
		tr.start = min(tr.start, r.StartUnixNS)
		zero, clocked = zero || r.StartUnixNS == 0, clocked || r.StartUnixNS != 0
		isHTTP = isHTTP || r.HTTP != nil || in.http[i][j]
	}
	if zero && clocked {
		return tr, fmt.Sprintf("%s: some inputs have no start time (a simulation) and others do: their traces cannot be put on one clock", m.Label()), nil
	}
	for i, input := range in.inputs {
		// Only a simulation's zero is shared (virtual); a run without
		// its start (a result built from a trace) has a zero of its own.
		if input.Result.Runs[result.RunIndex(in.inputs, n, i)].StartUnixNS == 0 && input.Result.Meta.Mode != "sim" {
			return tr, fmt.Sprintf("%s: %s's run has no start time: its trace cannot be put on the others' clock", m.Label(), in.dirs[i]), nil
		}
	}
	bin := m.Series.BinNS
	if bin <= 0 {
		return tr, fmt.Sprintf("%s has no series bin width", m.Label()), nil
	}
	for i, input := range in.inputs {
		j := result.RunIndex(in.inputs, n, i)
		r := input.Result.Runs[j]
		shift := r.StartUnixNS - tr.start
		tr.parts = append(tr.parts, Part{Path: in.paths[i], First: in.first[i][j], Count: r.Offered, Shift: shift})
		tr.span = max(tr.span, shift+int64(max(len(r.Series.Admitted), len(r.Series.Rejected)))*bin)
	}
	served := false
	if a, err := all.Lookup(m.Algorithm); err == nil && !isHTTP {
		served = a.Shaper
	}
	tr.count = measure.Counting{Policy: res.Policy, Bin: bin, Theory: m.TheoryMaxInWindow, Over: m.TheoryFor(),
		Served: served, HTTP: isHTTP, FailOpen: m.FailOpen, Latency: true}
	if isHTTP {
		tr.count.Check = httpexec.NewHeaderCheck()
	}
	// Only shards share one exact log. As in the engines, an HTTP run's
	// instants are send instants, not the server's: it has no
	// disagreement to recount.
	if res.Policy.Limit > 0 && !isHTTP && res.Meta.Merge != nil && res.Meta.Merge.Shards > 0 {
		ref, err := backend.Reference(res.Policy.Policy(), keys)()
		if err != nil {
			return tr, "", fmt.Errorf("merge: reference: %w", err)
		}
		tr.count.Reference = ref
	}
	return tr, "", nil
}

// Write hands the merged trace's rows to tw (a Writer, usually), each
// run's rows in send order on the common clock, and puts what it
// recounts there into res (result.Result.SetRecounted): the exact most
// admitted in any W, the series, per-key shares and the disagreement
// with the exact log over every input's requests. It warns of each run
// whose rows came out of send order. On an error
// tw may hold part of the rows: abort it.
func (p *MergePlan) Write(tw call.Tracer, res *result.Result) (warnings []result.Warning, err error) {
	recounted := make([]result.Recounted, len(p.runs))
	for n, tr := range p.runs {
		s := measure.New(tr.count)
		err := MergeRows(tr.parts, func(r Row) error {
			tw.Row(r.Row)
			s.Add(&r.Row)
			return nil
		})
		if err != nil {
			return nil, err
		}
		run, err := s.Finish(tr.span)
		if err != nil {
			return nil, err
		}
		recounted[n] = result.Recounted{StartUnixNS: tr.start, Run: run}
		if k := s.Reordered(); k > 0 {
			warnings = append(warnings, result.Warning{Kind: result.WarnMergeReordered, Run: tr.label, N: k, Rows: Lookahead})
		}
	}
	if err := res.SetRecounted(recounted); err != nil {
		return nil, err
	}
	return warnings, nil
}
