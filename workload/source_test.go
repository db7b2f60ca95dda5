package workload

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// Every generator's type, and Arrivals, are Sources; all but Replay know
// their Info in advance.
var (
	_ expected  = (*Constant)(nil)
	_ expected  = (*Poisson)(nil)
	_ expected  = (*Burst)(nil)
	_ expected  = (*OnOff)(nil)
	_ expected  = (*Boundary)(nil)
	_ expected  = (*Ramp)(nil)
	_ expected  = (*Zipf)(nil)
	_ generated = (*Replay)(nil)
	_ Source    = (*Arrivals)(nil)
)

// TestArrivalsOpen: a schedule in memory plays back as it was given, from
// the start at every Open; split over shards, each arrival goes to one
// shard (by index for one key, by key for several), and together they are
// the whole.
func TestArrivalsOpen(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		list  []Arrival
		keys  int
		split func(i int, a Arrival) int // the shard of arrival i of 3; nil: any
	}{
		{name: "one key, split by index", keys: 1,
			list:  []Arrival{{At: 0, Key: "k0", Cost: 1}, {At: 0, Key: "k0", Cost: 1}, {At: ms, Key: "k0", Cost: 2}, {At: 5 * ms, Key: "k0", Cost: 1}},
			split: func(i int, _ Arrival) int { return i % 3 }},
		{name: "several keys, split by key", keys: 3,
			list: []Arrival{{At: 0, Key: "k0", Cost: 1}, {At: ms, Key: "k1", Cost: 1}, {At: ms, Key: "k2", Cost: 1}, {At: 2 * ms, Key: "k1", Cost: 1}, {At: 3 * ms, Key: "k0", Cost: 1}}},
		{name: "empty", keys: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Arrivals{Name: "test", List: tc.list, Keys: tc.keys, Length: 10 * ms}
			for range 2 { // Open starts again each time
				st, err := a.Open(Shard{})
				if err != nil {
					t.Fatal(err)
				}
				if got := drain(t, st); !slices.Equal(got, tc.list) {
					t.Fatalf("whole: got %v, want %v", got, tc.list)
				}
			}
			var union []Arrival
			shardOf := map[string]int{}
			for i := range 3 {
				st, err := a.Open(Shard{I: i, N: 3})
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range drain(t, st) {
					union = append(union, x)
					if s, ok := shardOf[x.Key]; ok && tc.split == nil && s != i {
						t.Errorf("key %s in shards %d and %d", x.Key, s, i)
					}
					shardOf[x.Key] = i
				}
			}
			if tc.split != nil {
				for j, x := range tc.list {
					st, _ := a.Open(Shard{I: tc.split(j, x), N: 3})
					got := drain(t, st)
					if !slices.Contains(got, x) {
						t.Errorf("arrival %d (%v) not in shard %d: %v", j, x, tc.split(j, x), got)
					}
				}
			}
			if len(union) != len(tc.list) {
				t.Errorf("shards hold %d arrivals, want %d", len(union), len(tc.list))
			}
			if a.Span() != 10*ms {
				t.Errorf("Span() = %v, want 10ms", a.Span())
			}
		})
	}
}

// TestArrivalsInvalid: a list out of time order, or a cost below 1, is
// refused when opened, naming the arrival.
func TestArrivalsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []Arrival
	}{
		{name: "out of order", list: []Arrival{{At: 2, Key: "k0", Cost: 1}, {At: 1, Key: "k0", Cost: 1}}},
		{name: "cost 0", list: []Arrival{{At: 0, Key: "k0", Cost: 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Arrivals{Name: "x", List: tc.list, Keys: 1}).Open(Shard{})
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Open: %v, want an error wrapping ErrInvalid", err)
			}
		})
	}
}

// TestReplayRecord: a trace's Source records its parameters under the
// name its Spec was given, the path and all.
func TestReplayRecord(t *testing.T) {
	s := Spec{Name: "replay:traces/a.csv", Keys: 4, Duration: time.Second}
	src := source(t, s)
	r := src.Record()
	if r["name"] != "replay:traces/a.csv" || r["path"] != "traces/a.csv" {
		t.Errorf("Record() = %v, want name replay:traces/a.csv and path traces/a.csv", r)
	}
	if src.Span() != s.Duration {
		t.Errorf("Span() = %v, want the Duration %v", src.Span(), s.Duration)
	}
}
