package fit

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

type rowsOf []Request

func (r *rowsOf) Row(row call.Row) {
	*r = append(*r, Request{Sent: row.Sent, Done: row.Done, Key: row.Key, Admitted: row.Outcome == call.Admitted})
}

// TestModelsMatchAlgorithms: each model, given the policy, predicts every
// decision of the algorithm it stands for over a simulated trace: the
// fit's models are the algorithms' own semantics. (One instance limits
// all keys of a trace here: the keys only vary the arrivals.)
func TestModelsMatchAlgorithms(t *testing.T) {
	for _, f := range families {
		algo := f.name
		if _, err := all.Lookup(algo); err != nil {
			t.Errorf("model %s: not in the list", algo)
			continue
		}
		for _, p := range []algorithms.Policy{
			{Limit: 50, Window: time.Second, Burst: 20},
			{Limit: 7, Window: 300 * time.Millisecond, Burst: 3},
		} {
			for _, keys := range []int{1, 3} {
				e, _ := all.Lookup(algo)
				var reqs rowsOf
				spec := &workload.Poisson{Rate: 2 * p.Rate() * float64(keys), Duration: 20 * time.Second, Keys: keys, Cost: 1, Seed: 9}
				cfg := bench.Config{Policy: p, Workload: spec, Trace: &reqs}
				tgt := call.Target{Name: algo, New: func() (algorithms.Limiter, error) { return e.New(p) }}
				if _, err := bench.Simulate(context.Background(), cfg, []call.Target{tgt}); err != nil {
					t.Fatal(err)
				}
				d := newData(reqs, 0, Options{})
				s := d.scopes[0] // one instance limits every key
				pp := params{interval: int64(p.Interval()), burst: p.WithDefaults().Burst, limit: p.Limit, window: int64(p.Window)}
				m := f.new()
				m.reset(pp, s.n)
				for i, r := range reqs {
					k := s.key[i]
					if pred := m.decide(k, int64(r.Sent)); pred != r.Admitted {
						t.Errorf("%s %v, %d keys: request %d (key %s) at %v: model %v, algorithm %v", algo, p, keys, i, r.Key, r.Sent, pred, r.Admitted)
						break
					}
					m.apply(k, int64(r.Sent), r.Admitted)
				}
			}
		}
	}
}

// TestFamiliesInTheList: every model is an algorithm of the list and
// counts denied requests as the list says it does; every algorithm of the
// list is a model, one that a model stands for (standsFor, deciding alike
// with it), or a shaper, which the fit tells by its delays.
func TestFamiliesInTheList(t *testing.T) {
	entries := map[string]all.Entry{}
	for _, e := range all.Entries() {
		entries[e.Name] = e
	}
	covered := map[string]bool{}
	for _, f := range families {
		for _, name := range append([]string{f.name}, standsFor[f.name]...) {
			e, ok := entries[name]
			switch {
			case !ok:
				t.Errorf("model %s: %s is not in the list", f.name, name)
			case e.CountsDenied != f.countsDenied:
				t.Errorf("model %s: counts denied %v, the list's %s %v", f.name, f.countsDenied, name, e.CountsDenied)
			}
			covered[name] = true
		}
	}
	for name, e := range entries {
		if !covered[name] && !e.Shaper {
			t.Errorf("%s is in the list, and no model of the fit stands for it", name)
		}
	}
}
