package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// rowsTracer keeps the rows it is given.
type rowsTracer struct{ rows []call.Row }

func (r *rowsTracer) Row(row call.Row) { r.rows = append(r.rows, row) }

// TestSimTrace: a simulation's trace holds every arrival of every pass, in
// send order, each row with its decision: as many admitted and rejected
// rows as the run counts, a shaper's row done when it is served.
func TestSimTrace(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	var targets []call.Target
	for _, name := range []string{"gcra", "leaky-queue"} {
		e, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, call.Target{Name: name, New: func() (algorithms.Limiter, error) { return e.New(p) }})
	}
	var tr rowsTracer
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 40, Duration: 2 * time.Second, Keys: 2, Cost: 1}, Trace: &tr}
	runs, err := bench.Simulate(context.Background(), cfg, targets)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, run := range runs {
		var admitted, rejected int64
		for seq := int64(0); seq < run.Offered; seq++ {
			if i == len(tr.rows) {
				t.Fatalf("%s: %d rows, want %d", run.Algorithm, seq, run.Offered)
			}
			r := tr.rows[i]
			i++
			wantAt := time.Duration(seq) * 25 * time.Millisecond
			if r.Seq != seq || r.Algorithm != run.Algorithm || r.Intended != wantAt || r.Sent != wantAt || r.Attempts != 1 {
				t.Fatalf("%s row %d: %+v; want seq %d, sent at %v", run.Algorithm, seq, r, seq, wantAt)
			}
			switch r.Outcome {
			case call.Admitted:
				admitted++
				if r.Remaining < 0 || r.RetryAfter != -1 {
					t.Errorf("%s row %d admitted with remaining %d, retry after %v", run.Algorithm, seq, r.Remaining, r.RetryAfter)
				}
				if run.Algorithm == "gcra" && r.Done != r.Sent {
					t.Errorf("gcra row %d done at %v, sent at %v: a meter decides at once", seq, r.Done, r.Sent)
				}
			case call.Rejected:
				rejected++
				if r.RetryAfter <= 0 || r.Done != r.Sent {
					t.Errorf("%s row %d rejected with retry after %v, done %v", run.Algorithm, seq, r.RetryAfter, r.Done)
				}
			default:
				t.Errorf("%s row %d: outcome %v", run.Algorithm, seq, r.Outcome)
			}
		}
		if admitted != run.Admitted || rejected != run.Rejected {
			t.Errorf("%s: trace admitted %d rejected %d, run %d and %d", run.Algorithm, admitted, rejected, run.Admitted, run.Rejected)
		}
	}
	if i != len(tr.rows) {
		t.Errorf("%d rows, want %d", len(tr.rows), i)
	}
	// The queue serves its admitted arrivals one per 100ms after the
	// burst: some rows end well after they were sent.
	var delayed int
	for _, r := range tr.rows {
		if r.Algorithm == "leaky-queue" && r.Done-r.Sent >= 100*time.Millisecond {
			delayed++
		}
	}
	if delayed == 0 {
		t.Error("no leaky-queue row served later than sent")
	}
}

// TestSimRebuiltFromTrace: a simulated run and the same run counted again
// from its trace rows by a measure.Summary are the same run, to the byte:
// one set of counting rules serves the engines and the traces. Poisson
// traffic over three keys at twice the limit, for a meter, a shaper and a
// fixed window, with the disagreement the engine computed from its
// reference pass and the Summary from the reference inline.
func TestSimRebuiltFromTrace(t *testing.T) {
	p := algorithms.Policy{Limit: 20, Window: time.Second}
	w := &workload.Poisson{Rate: 120, Duration: 5 * time.Second, Keys: 3, Cost: 1, Seed: 7}
	for _, name := range []string{"gcra", "leaky-queue", "fixed-window"} {
		t.Run(name, func(t *testing.T) {
			targets, err := backend.MemoryTargets([]string{name}, p, backend.Keys{N: 3}, 1)
			if err != nil {
				t.Fatal(err)
			}
			var tr rowsTracer
			cfg := bench.Config{Policy: p, Workload: w, Trace: &tr, Reference: backend.Reference(p, 3)}
			runs, err := bench.Simulate(context.Background(), cfg, targets)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := backend.Reference(p, 3)()
			if err != nil {
				t.Fatal(err)
			}
			run := runs[0]
			sum := measure.New(measure.Counting{Policy: result.PolicyOf(p), Bin: run.Series.BinNS, Theory: run.TheoryMaxInWindow,
				Over: run.TheoryFor(), Served: targets[0].Shaper, Reference: ref})
			for i := range tr.rows {
				sum.Add(&tr.rows[i])
			}
			again, err := sum.Finish(int64(w.Span()))
			if err != nil {
				t.Fatal(err)
			}
			again.Algorithm, again.Backend, again.Replicas = run.Algorithm, run.Backend, run.Replicas
			want, _ := json.Marshal(run)
			got, _ := json.Marshal(again)
			if !bytes.Equal(got, want) {
				t.Errorf("rebuilt from %d rows:\n%s\nthe engine's:\n%s", len(tr.rows), got, want)
			}
			if run.DisagreementPct <= 0 && name == "fixed-window" {
				t.Errorf("fixed-window disagreement %v%%: the test cannot tell a reference from none", run.DisagreementPct)
			}
		})
	}
}
