package tracefile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// writeTrace writes rows with a Writer into dir and returns the path.
func writeTrace(t *testing.T, dir string, rows []call.Row) string {
	t.Helper()
	w, err := tracefile.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w.Row(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, tracefile.Name)
}

// readAll reads every row of path.
func readAll(t *testing.T, path string) ([]tracefile.Row, error) {
	t.Helper()
	r, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var rows []tracefile.Row
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

// TestReaderRoundTrip: what the Writer writes reads back field for field,
// keys that need quoting included, each row numbered in file order, with
// the line it starts on and a cost of 1.
func TestReaderRoundTrip(t *testing.T) {
	rows := []call.Row{
		{Algorithm: "gcra", Intended: 0, Sent: 10, Done: 25, Key: "k0", Outcome: call.Admitted, Attempts: 1, RetryAfter: -1, Remaining: 4, ResetAfter: time.Second},
		{Algorithm: "gcra", Intended: 5, Sent: 12, Done: 30, Key: `a,"b"`, Source: "127.0.0.2:40000", Status: 429, Outcome: call.Rejected, Attempts: 1, RetryAfter: 2 * time.Second, Remaining: 0, ResetAfter: -1},
		{Algorithm: "gcra", Intended: 7, Sent: 7, Done: 9, Key: " lead\nline", Outcome: call.Failed, RetryAfter: -1, Remaining: -1, ResetAfter: -1, ErrorKind: "timeout"},
		{Algorithm: "fixed-window", Intended: 0, Sent: 1, Done: 2, Key: "k0", Status: 200, Outcome: call.Admitted, Attempts: 3, RetryAfter: -1, Remaining: -1, ResetAfter: -1},
	}
	path := writeTrace(t, t.TempDir(), rows)
	got, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]tracefile.Row, len(rows))
	for i, r := range rows {
		r.Seq, r.Cost = int64(i), 1
		want[i] = tracefile.Row{Row: r, Line: []int{2, 3, 4, 6}[i]} // the third row's key spans two lines
	}
	if !slices.Equal(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
}

// TestReaderCostColumn: a trailing cost column is read; without it every
// row costs 1.
func TestReaderCostColumn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		wantCost []int64
		hasCost  bool
	}{
		{name: "no cost column", body: tracefile.Header + "\ngcra,0,0,0,k,,0,admitted,1,-1,-1,-1,\n", wantCost: []int64{1}},
		{name: "cost column", body: tracefile.Header + ",cost\ngcra,0,0,0,k,,0,admitted,1,-1,-1,-1,,3\ngcra,1,1,1,k,,0,rejected,1,-1,-1,-1,,1\n",
			wantCost: []int64{3, 1}, hasCost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tracefile.NewReader(strings.NewReader(tc.body), "x.csv")
			if err != nil {
				t.Fatal(err)
			}
			if r.HasCost() != tc.hasCost {
				t.Errorf("HasCost() = %v, want %v", r.HasCost(), tc.hasCost)
			}
			var costs []int64
			for {
				row, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				costs = append(costs, row.Cost)
			}
			if !slices.Equal(costs, tc.wantCost) {
				t.Errorf("costs %v, want %v", costs, tc.wantCost)
			}
		})
	}
}

// TestReaderMalformed: a bad header or row is a FormatError naming the
// file and the line, with what is wrong.
func TestReaderMalformed(t *testing.T) {
	const ok = "gcra,0,0,0,k,,0,admitted,1,-1,-1,-1,\n"
	for _, tc := range []struct {
		name     string
		body     string
		wantLine int
		want     string // in the message
	}{
		{name: "empty file", body: "", wantLine: 1, want: "no header"},
		{name: "other header", body: "at_ns,key\n0,k\n", wantLine: 1, want: "is not requests.csv's"},
		{name: "header with a column less", body: strings.TrimSuffix(tracefile.Header, ",error_kind") + "\n", wantLine: 1, want: "header"},
		{name: "sent not an integer", body: tracefile.Header + "\n" + ok + "gcra,0,soon,0,k,,0,admitted,1,-1,-1,-1,\n", wantLine: 3, want: `sent_ns "soon" is not an integer`},
		{name: "negative sent", body: tracefile.Header + "\n" + "gcra,0,-5,0,k,,0,admitted,1,-1,-1,-1,\n", wantLine: 2, want: "sent_ns -5 is below 0"},
		{name: "unknown outcome", body: tracefile.Header + "\n" + ok + ok + "gcra,0,0,0,k,,0,maybe,1,-1,-1,-1,\n", wantLine: 4, want: `outcome "maybe"`},
		{name: "too few fields", body: tracefile.Header + "\n" + ok + "gcra,0,0\n", wantLine: 3, want: "number of fields"},
		{name: "bad quote", body: tracefile.Header + "\n" + "gcra,0,0,0,\"k\"x,,0,admitted,1,-1,-1,-1,\n", wantLine: 2, want: "quote"},
		{name: "empty algorithm", body: tracefile.Header + "\n" + ",0,0,0,k,,0,admitted,1,-1,-1,-1,\n", wantLine: 2, want: "algorithm is empty"},
		{name: "status too large", body: tracefile.Header + "\n" + "gcra,0,0,0,k,,4290,rejected,1,-1,-1,-1,\n", wantLine: 2, want: "status 4290"},
		{name: "cost below one", body: tracefile.Header + ",cost\n" + "gcra,0,0,0,k,,0,admitted,1,-1,-1,-1,,0\n", wantLine: 2, want: "cost 0 is below 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tracefile.Name)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readAll(t, path)
			var fe *tracefile.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FormatError", err)
			}
			if fe.Line != tc.wantLine || fe.Name != path || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "line ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q (line %d), want one line naming %s, line %d and %q", err, fe.Line, path, tc.wantLine, tc.want)
			}
			// Scan finds the same error before anything is made of the file.
			if _, serr := tracefile.Scan(path); serr == nil || serr.Error() != err.Error() {
				t.Errorf("Scan: %v, want %v", serr, err)
			}
		})
	}
}
