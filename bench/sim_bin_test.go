package bench

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// TestSeriesBin: a run's series bin is W/10 (widened to at most 4000
// bins), and for the boundary workload each half of an attack, so that a
// zoom on an edge shows the attack rather than a bin ten times its size.
func TestSeriesBin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		span   time.Duration
		spec   workload.Source
		want   time.Duration
	}{
		{name: "W/10", window: time.Second, span: 20 * time.Second, spec: &workload.Poisson{Rate: 1}, want: 100 * time.Millisecond},
		{name: "at most 4000 bins", window: time.Second, span: time.Hour, spec: &workload.Constant{Rate: 1}, want: 900 * time.Millisecond},
		{name: "boundary: the default edge, W/100", window: time.Second, span: 10 * time.Second, spec: &workload.Boundary{Window: time.Second, Edge: 10 * time.Millisecond}, want: 10 * time.Millisecond},
		{name: "boundary: the edge given", window: time.Second, span: 10 * time.Second, spec: &workload.Boundary{Window: time.Second, Edge: 40 * time.Millisecond}, want: 40 * time.Millisecond},
		{name: "boundary: too many edges for fine bins", window: time.Second, span: 10 * time.Hour, spec: &workload.Boundary{Window: time.Second, Edge: 10 * time.Millisecond}, want: 9 * time.Second},
	} {
		if got := time.Duration(SeriesBin(tc.window, tc.span, tc.spec)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
