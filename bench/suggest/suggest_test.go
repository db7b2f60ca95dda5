package suggest

import (
	"fmt"
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	algos := []string{"token-bucket", "gcra", "leaky-bucket", "fixed-window", "sliding-log", "sliding-counter"}
	cmds := []string{"list", "run", "boundary", "report", "compare", "merge", "serve", "attack", "fit", "probe"}
	for _, tc := range []struct {
		name, typed string
		valid       []string
		want        []string
		why         string
	}{
		{name: "swap", typed: "gcar", valid: algos, want: []string{"gcra"}, why: "two neighbours swapped is one edit"},
		{name: "case", typed: "GCRA", valid: algos, want: []string{"gcra"}, why: "case is no edit"},
		{name: "command swap", typed: "rnu", valid: cmds, want: []string{"run"}, why: "rnu is run with u and n swapped"},
		{name: "slip", typed: "poison", valid: []string{"constant", "poisson", "burst"}, want: []string{"poisson"}, why: "one letter left out"},
		{name: "prefix", typed: "sliding", valid: algos, want: []string{"sliding-log", "sliding-counter"}, why: "no name within two edits, but two start with it"},
		{name: "far", typed: "zzzzzz", valid: algos, want: nil, why: "nothing alike is suggested"},
		{name: "short prefix", typed: "fi", valid: cmds, want: []string{"fit"}, why: "fit is one edit from fi; the prefix rule needs three letters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.typed, tc.valid); !slices.Equal(got, tc.want) {
				t.Errorf("Closest(%q) = %q, want %q: %s", tc.typed, got, tc.want, tc.why)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"run", "rnu", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func ExampleDidYouMean() {
	fmt.Println("unknown algorithm gcar" + DidYouMean("gcar", []string{"gcra", "token-bucket"}))
	// Output: unknown algorithm gcar (did you mean gcra?)
}
