package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInspectSynthetic: the expected count bounds a run before it starts,
// so it must match what the stream yields: to within one for the
// deterministic generators, within 5% for the random ones.
func TestInspectSynthetic(t *testing.T) {
	for _, s := range synthetic {
		t.Run(specName(s), func(t *testing.T) {
			info, err := Inspect(context.Background(), source(t, s), 0)
			if err != nil {
				t.Fatal(err)
			}
			got := float64(len(collect(t, s)))
			tol := 1.0
			if s.Name == "poisson" || s.Name == "zipf" {
				tol = 0.05 * got
			}
			if math.Abs(info.Arrivals-got) > tol {
				t.Errorf("Inspect says %.1f arrivals, the stream yields %.0f", info.Arrivals, got)
			}
			if info.Keys != s.Keys || info.Span != s.Duration || info.KeysOver {
				t.Errorf("Inspect = %+v, want Keys %d, Span %v", info, s.Keys, s.Duration)
			}
		})
	}
}

// TestInspectHugeRate: a rate no run could hold gives a count that a bound
// can refuse, not an overflow.
func TestInspectHugeRate(t *testing.T) {
	info, err := Inspect(context.Background(), &Constant{Rate: 1e300, Duration: 2562047 * time.Hour, Keys: 1, Cost: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !(info.Arrivals > 1e300) {
		t.Fatalf("Arrivals = %v, want above 1e300", info.Arrivals)
	}
}

func TestInspectTrace(t *testing.T) {
	// 10 arrivals, 1 per ms, over keys a0..a3; a bad row is appended by
	// the cases that need one.
	var rows strings.Builder
	rows.WriteString("at_ns,key,cost\n")
	for i := range 10 {
		fmt.Fprintf(&rows, "%d,a%d,1\n", i*1e6, i%4)
	}
	tests := []struct {
		name     string
		extra    string        // appended to the 10 rows
		duration time.Duration // Spec.Duration
		maxKeys  int
		want     Info
		wantErr  string // a line-naming error wrapping ErrInvalid
	}{
		// The whole trace: its span ends just after its last instant.
		{name: "whole", want: Info{Arrivals: 10, Keys: 4, Span: 9e6 + 1}},
		// A duration cuts the count and the keys.
		{name: "cut", duration: 2e6, want: Info{Arrivals: 2, Keys: 2, Span: 2e6}},
		// Keys are counted up to the bound only.
		{name: "keys over", maxKeys: 3, want: Info{Arrivals: 10, Keys: 3, KeysOver: true, Span: 9e6 + 1}},
		// A bad row anywhere is found before anything runs...
		{name: "bad last row", extra: "10000000,a1,zero\n", wantErr: `t.csv line 12: cost "zero" is not an integer`},
		// ...even past the duration the run will play.
		{name: "bad row past duration", extra: "10000000,a1,0\n", duration: 2e6, wantErr: `t.csv line 12: cost 0 must be >= 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "t.csv"), rows.String()+tt.extra)
			t.Chdir(dir)
			info, err := Inspect(context.Background(), &Replay{Path: "t.csv", Duration: tt.duration, Keys: 1}, tt.maxKeys)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalid) || err.Error() != "workload: "+tt.wantErr {
					t.Fatalf("Inspect: %v, want %q wrapping ErrInvalid", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info != tt.want {
				t.Fatalf("Inspect = %+v, want %+v", info, tt.want)
			}
		})
	}
}

// TestInspectCancel: reading a long trace stops when the context is done.
func TestInspectCancel(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("at_ns,key,cost\n")
	for i := range 3 * inspectEvery {
		fmt.Fprintf(&rows, "%d,k,1\n", i)
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	writeFile(t, path, rows.String())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inspect(ctx, &Replay{Path: path, Keys: 1}, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Inspect with a cancelled context: %v, want context.Canceled", err)
	}
}
