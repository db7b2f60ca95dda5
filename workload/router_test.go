package workload_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// TestRouterShardsRouteAsTheWholeRun: every arrival a shard plays goes to
// the replica the one-process run sends it to, and the one-process run
// goes round the replicas in arrival order.
func TestRouterShardsRouteAsTheWholeRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     workload.Source
		shards   int
		replicas int
	}{
		{name: "keyed poisson", spec: &workload.Poisson{Rate: 400, Duration: time.Second, Keys: 9, Seed: 2, Cost: 1}, shards: 3, replicas: 4},
		{name: "one key", spec: &workload.Constant{Rate: 200, Duration: time.Second, Keys: 1, Cost: 1}, shards: 2, replicas: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type routed struct {
				a       workload.Arrival
				replica int
			}
			read := func(sh workload.Shard) []routed {
				s, err := tc.spec.Open(sh)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				r := workload.NewRouter(s, tc.replicas)
				var out []routed
				for a, ok := s.Next(); ok; a, ok = s.Next() {
					out = append(out, routed{a, r.Next()})
				}
				return out
			}
			whole := read(workload.Shard{})
			want := map[workload.Arrival][]int{}
			for i, w := range whole {
				if w.replica != i%tc.replicas {
					t.Fatalf("whole run: arrival %d to replica %d, want %d", i, w.replica, i%tc.replicas)
				}
				want[w.a] = append(want[w.a], w.replica)
			}
			n := 0
			for i := range tc.shards {
				for _, g := range read(workload.Shard{I: i, N: tc.shards}) {
					rs := want[g.a]
					if len(rs) == 0 || !slices.Contains(rs, g.replica) {
						t.Fatalf("shard %d/%d: %+v to replica %d; the whole run sends it to %v", i, tc.shards, g.a, g.replica, rs)
					}
					n++
				}
			}
			if n != len(whole) {
				t.Errorf("shards played %d arrivals, the whole run %d", n, len(whole))
			}
		})
	}
}
