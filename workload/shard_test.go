package workload

import (
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{in: "0/1", want: Shard{I: 0, N: 1}, ok: true},
		{in: "2/3", want: Shard{I: 2, N: 3}, ok: true},
		{in: "3/2"},
		{in: "-1/2"},
		{in: "0/0"},
		{in: "x"},
		{in: "1/"},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// drainShard returns every arrival of s's shard sh.
func drainShard(t *testing.T, s Spec, sh Shard) []Arrival {
	t.Helper()
	st, err := source(t, s).Open(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []Arrival
	for a, ok := st.Next(); ok; a, ok = st.Next() {
		out = append(out, a)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenShardPartitions checks that the shards of a schedule are a
// partition of it, each in the whole's order, every key in one shard only
// (but for a one-key workload, split by arrival index).
func TestOpenShardPartitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		n    int
	}{
		{name: "poisson keyed", spec: Spec{Name: "poisson", Rate: 500, Duration: 2 * time.Second, Keys: 20, Seed: 3}, n: 3},
		{name: "zipf keyed", spec: Spec{Name: "zipf", Rate: 500, Duration: 2 * time.Second, Keys: 50, Seed: 3}, n: 7},
		{name: "one key", spec: Spec{Name: "constant", Rate: 100, Duration: time.Second}, n: 4},
		{name: "more shards than keys", spec: Spec{Name: "constant", Rate: 100, Duration: time.Second, Keys: 2}, n: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := drainShard(t, tc.spec, Shard{})
			parts := make([][]Arrival, tc.n)
			owner := map[string]int{}
			total := 0
			for i := range parts {
				parts[i] = drainShard(t, tc.spec, Shard{I: i, N: tc.n})
				total += len(parts[i])
				for _, a := range parts[i] {
					if o, ok := owner[a.Key]; ok && o != i && tc.spec.Keys > 1 {
						t.Fatalf("key %s in shards %d and %d", a.Key, o, i)
					}
					owner[a.Key] = i
				}
			}
			if total != len(whole) {
				t.Fatalf("shards hold %d arrivals, the whole %d", total, len(whole))
			}
			// Walk the whole: each arrival is the next of exactly one shard.
			next := make([]int, tc.n)
			for j, a := range whole {
				found := false
				for i := range parts {
					if next[i] < len(parts[i]) && parts[i][next[i]] == a {
						next[i]++
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("arrival %d %+v is not the next of any shard", j, a)
				}
			}
		})
	}
}

func TestPlanShardsBalances(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     Spec
		n        int
		maxShare float64
	}{
		{name: "uniform keys", spec: Spec{Name: "poisson", Rate: 1, Duration: time.Second, Keys: 21}, n: 3, maxShare: 1.0/3 + 1e-9},
		{name: "zipf many keys", spec: Spec{Name: "zipf", Rate: 1, Duration: time.Second, Keys: 10000}, n: 2, maxShare: 0.51},
		{name: "zipf few keys", spec: Spec{Name: "zipf", Rate: 1, Duration: time.Second, Keys: 20}, n: 7, maxShare: 1},
		{name: "one key", spec: Spec{Name: "constant", Rate: 1, Duration: time.Second}, n: 4, maxShare: 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanShards(source(t, tc.spec), tc.n)
			var sum float64
			for _, s := range p.Share {
				sum += s
			}
			if sum < 0.999 || sum > 1.001 {
				t.Errorf("shares %v sum to %v", p.Share, sum)
			}
			if m := p.MaxShare(); m > tc.maxShare {
				t.Errorf("largest share %v, want at most %v", m, tc.maxShare)
			}
		})
	}
}
