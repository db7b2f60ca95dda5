package tracefile_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// TestFitRequests: the fit reads the first algorithm's answered rows in
// order, stops at the next pass, leaves failed requests out, and names
// the line of a malformed row.
func TestFitRequests(t *testing.T) {
	row := func(algo string, sent int64, key string, c call.Class) call.Row {
		return call.Row{Algorithm: algo, Intended: time.Duration(sent), Sent: time.Duration(sent), Done: time.Duration(sent + 5),
			Key: key, Source: "127.0.0.2:1", Status: 200, Outcome: c, Attempts: 1, RetryAfter: -1, Remaining: -1, ResetAfter: -1}
	}
	for _, tc := range []struct {
		name    string
		rows    []call.Row
		edit    func([]string) []string
		want    []fit.Request
		wantErr string // in a *FormatError
	}{
		{name: "one pass, a failure left out",
			rows: []call.Row{row("http", 10, "k0", call.Admitted), row("http", 20, "k1", call.Failed), row("http", 30, "k0", call.Rejected)},
			want: []fit.Request{{Sent: 10, Done: 15, Key: "k0", Source: "127.0.0.2:1", Admitted: true}, {Sent: 30, Done: 35, Key: "k0", Source: "127.0.0.2:1"}}},
		{name: "the second pass ignored",
			rows: []call.Row{row("gcra", 10, "k0", call.Admitted), row("fixed-window", 5, "k0", call.Admitted)},
			want: []fit.Request{{Sent: 10, Done: 15, Key: "k0", Source: "127.0.0.2:1", Admitted: true}}},
		{name: "a malformed row", rows: []call.Row{row("http", 10, "k0", call.Admitted)}, wantErr: "line 2",
			edit: func(lines []string) []string { return []string{lines[0], "http,x"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := tracefile.Create(dir)
			must(t, err)
			for _, r := range tc.rows {
				w.Row(r)
			}
			must(t, w.Close())
			if tc.edit != nil {
				rewriteTrace(t, dir, tc.edit)
			}
			got, err := tracefile.FitRequests(filepath.Join(dir, tracefile.Name))
			if tc.wantErr != "" {
				var fe *tracefile.FormatError
				if !errors.As(err, &fe) || got != nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("requests %v, err %v: want a *FormatError at %s", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("requests %+v, err %v; want %+v", got, err, tc.want)
			}
		})
	}
}
