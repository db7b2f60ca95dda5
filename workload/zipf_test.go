package workload

import (
	"math"
	"testing"
	"time"
)

func TestZipfKeys(t *testing.T) {
	tests := []struct {
		name string
		keys int
		s    float64 // 0: the default 1.1
	}{
		// The default exponent over a modest key space.
		{name: "default s", keys: 20},
		// A steep exponent: k0 takes most of the traffic.
		{name: "steep", keys: 10, s: 2},
		// Many keys: the tail is long but k0 still leads.
		{name: "many keys", keys: 1000, s: 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Name: "zipf", Rate: 20000, Duration: 10 * time.Second, Keys: tt.keys, ZipfS: tt.s, Seed: 5}
			as := collect(t, spec)
			count := map[string]int{}
			for _, a := range as {
				count[a.Key]++
			}
			keys := keyNames(0, tt.keys)
			for _, k := range keys[1:] {
				if count[k] >= count[keys[0]] {
					t.Fatalf("key %s has %d arrivals, k0 only %d: k0 must be the most popular", k, count[k], count[keys[0]])
				}
			}
			s := spec.Params()["zipf_s"].(float64)
			var h float64 // normalising constant
			for i := range tt.keys {
				h += math.Pow(float64(i+1), -s)
			}
			n := float64(len(as))
			for i := range min(tt.keys, 5) { // the head has counts large enough to test
				p := math.Pow(float64(i+1), -s) / h
				sd := math.Sqrt(n * p * (1 - p))
				if dev := math.Abs(float64(count[keys[i]]) - n*p); dev > 5*sd {
					t.Errorf("key %s: %d arrivals, want %.0f +- %.0f (1/k^s)", keys[i], count[keys[i]], n*p, 5*sd)
				}
			}
		})
	}
}

// TestZipfOneKey: with a single key every arrival has it.
func TestZipfOneKey(t *testing.T) {
	for _, a := range collect(t, Spec{Name: "zipf", Rate: 100, Duration: time.Second, Seed: 1}) {
		if a.Key != "k0" {
			t.Fatalf("key %q, want k0", a.Key)
		}
	}
}
