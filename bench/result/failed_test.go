package result

import "testing"

func TestMostFailed(t *testing.T) {
	tests := []struct {
		name string
		runs []Run
		want string // "": no error
	}{
		{name: "no runs"},
		{name: "nothing offered", runs: []Run{{Algorithm: "gcra"}}},
		{name: "half failed is not most", runs: []Run{{Algorithm: "gcra", Offered: 10, Errors: 5, FirstError: "timeout"}}},
		{name: "most failed", runs: []Run{
			{Algorithm: "gcra", Offered: 10, Errors: 2},
			{Algorithm: "fixed-window", Offered: 10, Errors: 6, FirstError: "timeout"},
		}, want: "most decisions failed, so the results measure the failure policy, not the limiter: fixed-window: 6 of 10 decisions failed (timeout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := MostFailed(tc.runs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
