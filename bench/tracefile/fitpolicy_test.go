package tracefile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/tracefile"
)

func TestFitPolicy(t *testing.T) {
	tests := []struct {
		name    string
		best    *fit.Fit // nil: no fit.json
		garbage bool     // a fit.json that is not JSON
		want    algorithms.Policy
		wantOK  bool
		wantErr bool
	}{
		{name: "no fit.json"},
		{name: "unreadable fit.json", garbage: true, wantErr: true},
		{name: "no policy fitted", best: &fit.Fit{}},
		{name: "an invalid policy", best: &fit.Fit{Limit: 5, WindowNS: 1}},
		{name: "the best fit", best: &fit.Fit{Limit: 100, WindowNS: int64(time.Second), Burst: 20}, wantOK: true,
			want: algorithms.Policy{Limit: 100, Window: time.Second, Burst: 20}},
		{name: "burst defaults to the limit", best: &fit.Fit{Limit: 100, WindowNS: int64(time.Second)}, wantOK: true,
			want: algorithms.Policy{Limit: 100, Window: time.Second, Burst: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			switch {
			case tc.garbage:
				if err := os.WriteFile(filepath.Join(dir, fit.File), []byte("{"), 0o644); err != nil {
					t.Fatal(err)
				}
			case tc.best != nil:
				if err := (&fit.Result{Best: *tc.best}).WriteFile(dir); err != nil {
					t.Fatal(err)
				}
			}
			p, ok, err := tracefile.FitPolicy(dir)
			if (err != nil) != tc.wantErr || ok != tc.wantOK || ok && p != tc.want {
				t.Fatalf("FitPolicy = %+v, %v, %v; want %+v, %v, error %v", p, ok, err, tc.want, tc.wantOK, tc.wantErr)
			}
		})
	}
}
