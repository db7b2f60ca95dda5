package all_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
)

func TestNeverAdmit(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 5}
	for _, tc := range []struct {
		name  string
		names []string
		cost  int64
		want  []string
	}{
		{name: "a cost every one admits", names: []string{"gcra", "fixed-window"}, cost: 1},
		{name: "above the burst, within the limit", names: []string{"gcra", "fixed-window", "token-bucket"}, cost: 7, want: []string{"gcra", "token-bucket"}},
		{name: "above the limit too", names: []string{"gcra", "fixed-window"}, cost: 11, want: []string{"gcra", "fixed-window"}},
		{name: "names in any case, unknown ones skipped", names: []string{" GCRA", "redis-only"}, cost: 7, want: []string{"gcra"}},
	} {
		if got := all.NeverAdmit(tc.names, tc.cost, p); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := all.NeverAdmit(nil, 1, p); len(got) != 0 {
		t.Errorf("every algorithm at cost 1: %q refuse it forever", got)
	}
}
