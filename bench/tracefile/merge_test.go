package tracefile_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// sentRows are rows of algorithm "a" and key key sent at the instants
// given, each done 1 ns later.
func sentRows(key string, sent ...int64) []call.Row {
	rows := make([]call.Row, len(sent))
	for i, s := range sent {
		rows[i] = call.Row{Algorithm: "a", Intended: time.Duration(s), Sent: time.Duration(s), Done: time.Duration(s + 1),
			Key: key, Outcome: call.Admitted, Attempts: 1, RetryAfter: -1, Remaining: -1, ResetAfter: -1}
	}
	return rows
}

// TestMergeRows: the parts' rows come in send order on the common clock,
// ties to the earlier part, a row a few rows out of place put back, only
// the part's range read, and unknown instants left unknown.
func TestMergeRows(t *testing.T) {
	type out struct {
		key  string // p0, p1: the part it came from
		seq  int64  // its row in that file
		sent int64  // on the common clock
		done int64
	}
	unknown := sentRows("p0", 3)
	unknown[0].Intended = -1
	for _, tc := range []struct {
		name   string
		files  [][]call.Row
		first  []int64 // per part; 0 when nil
		count  []int64 // per part; the whole file when nil
		shifts []int64
		// unknown: the files' intended instants are -1, not known.
		unknown bool
		want    []out
	}{
		{name: "interleaved", files: [][]call.Row{sentRows("p0", 0, 10, 20), sentRows("p1", 5, 15, 25)}, shifts: []int64{0, 0},
			want: []out{{"p0", 0, 0, 1}, {"p1", 0, 5, 6}, {"p0", 1, 10, 11}, {"p1", 1, 15, 16}, {"p0", 2, 20, 21}, {"p1", 2, 25, 26}}},
		{name: "shifted onto one clock", files: [][]call.Row{sentRows("p0", 0, 10, 20), sentRows("p1", 5, 15)}, shifts: []int64{0, 12},
			want: []out{{"p0", 0, 0, 1}, {"p0", 1, 10, 11}, {"p1", 0, 17, 18}, {"p0", 2, 20, 21}, {"p1", 1, 27, 28}}},
		{name: "ties go to the earlier part, then file order", files: [][]call.Row{sentRows("p0", 7, 7), sentRows("p1", 7)}, shifts: []int64{0, 0},
			want: []out{{"p0", 0, 7, 8}, {"p0", 1, 7, 8}, {"p1", 0, 7, 8}}},
		{name: "a row out of place is put back", files: [][]call.Row{sentRows("p0", 0, 30, 20, 40)}, shifts: []int64{0},
			want: []out{{"p0", 0, 0, 1}, {"p0", 2, 20, 21}, {"p0", 1, 30, 31}, {"p0", 3, 40, 41}}},
		{name: "a range of the file", files: [][]call.Row{sentRows("p0", 0, 10, 20, 30), sentRows("p1", 1, 2)},
			first: []int64{1, 0}, count: []int64{2, 2}, shifts: []int64{0, 0},
			want: []out{{"p1", 0, 1, 2}, {"p1", 1, 2, 3}, {"p0", 1, 10, 11}, {"p0", 2, 20, 21}}},
		{name: "unknown instants stay unknown", files: [][]call.Row{unknown}, shifts: []int64{100}, unknown: true,
			want: []out{{"p0", 0, 103, 104}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []tracefile.Part
			for i, rows := range tc.files {
				p := tracefile.Part{Path: writeTrace(t, t.TempDir(), rows), Count: int64(len(rows)), Shift: tc.shifts[i]}
				if tc.first != nil {
					p.First, p.Count = tc.first[i], tc.count[i]
				}
				parts = append(parts, p)
			}
			var got []out
			err := tracefile.MergeRows(parts, func(r tracefile.Row) error {
				if want := map[bool]time.Duration{false: r.Sent, true: -1}[tc.unknown]; r.Intended != want {
					t.Errorf("row %d: intended %d, want %d", r.Seq, r.Intended, want)
				}
				got = append(got, out{r.Key, r.Seq, int64(r.Sent), int64(r.Done)})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("merged %v, want %v", got, tc.want)
			}
		})
	}
	// A part that claims more rows than its file holds is an error.
	p := tracefile.Part{Path: writeTrace(t, t.TempDir(), sentRows("p0", 1, 2)), Count: 3}
	if err := tracefile.MergeRows([]tracefile.Part{p}, func(tracefile.Row) error { return nil }); err == nil {
		t.Error("a part of 3 rows from a file of 2: no error")
	}
}

// bruteMax is the most cost admitted for one key in any (t-w, t], checked
// at every admit: instants are at, keys key.
func bruteMax(at []int64, key []string, w int64) int64 {
	var best int64
	for i := range at {
		var n int64
		for j := range at {
			if key[j] == key[i] && at[j] > at[i]-w && at[j] <= at[i] {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// TestSummaryExactOverMergedParts: two hosts' admits of the same keys,
// interleaved on one clock, count exactly: the merged maximum is the
// brute-force count over the merged rows, above either host's own, and a
// shaper's admits count when served.
func TestSummaryExactOverMergedParts(t *testing.T) {
	const w = 1000
	for _, tc := range []struct {
		name   string
		keys   int
		served bool
		shift  int64
	}{
		{name: "one key", keys: 1},
		{name: "one key, second host started later", keys: 1, shift: 333},
		{name: "three keys", keys: 3},
		{name: "a shaper, counted when served", keys: 2, served: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(tc.keys)))
			var parts []tracefile.Part
			var solo []int64
			for host := range 2 {
				var rows []call.Row
				var now int64
				for range 300 {
					now += rng.Int64N(40)
					r := call.Row{Algorithm: "a", Intended: time.Duration(now), Sent: time.Duration(now), Done: time.Duration(now + rng.Int64N(3)),
						Key: string(rune('a' + rng.IntN(tc.keys))), Outcome: call.Admitted, Attempts: 1, RetryAfter: -1, Remaining: -1, ResetAfter: -1}
					if tc.served {
						r.Done += time.Duration(rng.Int64N(500))
					}
					if rng.IntN(3) == 0 {
						r.Outcome = call.Rejected
					}
					rows = append(rows, r)
				}
				p := tracefile.Part{Path: writeTrace(t, t.TempDir(), rows), Count: int64(len(rows)), Shift: int64(host) * tc.shift}
				parts = append(parts, p)
				one := summarize(t, []tracefile.Part{{Path: p.Path, Count: p.Count}}, tc.served)
				solo = append(solo, one.MaxAdmittedInWindow)
			}
			var at []int64
			var keys []string
			var offered, admitted int64
			err := tracefile.MergeRows(parts, func(r tracefile.Row) error {
				offered++
				if r.Outcome == call.Admitted {
					admitted++
					at = append(at, map[bool]int64{false: int64(r.Sent), true: int64(r.Done)}[tc.served])
					keys = append(keys, r.Key)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			run := summarize(t, parts, tc.served)
			if want := bruteMax(at, keys, w); run.MaxAdmittedInWindow != want {
				t.Errorf("merged max %d, brute force %d", run.MaxAdmittedInWindow, want)
			}
			if run.MaxAdmittedInWindow <= max(solo[0], solo[1]) {
				t.Errorf("merged max %d, not above the hosts' own %v: the admits do not interleave", run.MaxAdmittedInWindow, solo)
			}
			if run.Offered != offered || run.Admitted != admitted || run.Rejected != offered-admitted || run.AdmittedCost != admitted {
				t.Errorf("counts %d/%d/%d, want %d offered, %d admitted", run.Offered, run.Admitted, run.Rejected, offered, admitted)
			}
			var inSeries int64
			for _, n := range run.Series.Admitted {
				inSeries += n
			}
			if inSeries != admitted || run.Series.BinNS != 100 {
				t.Errorf("series holds %d admits in bins of %d, want %d in bins of 100", inSeries, run.Series.BinNS, admitted)
			}
		})
	}
}

// summarize counts parts with a W of 1000 ns and bins of 100.
func summarize(t *testing.T, parts []tracefile.Part, served bool) result.Run {
	t.Helper()
	s := measure.New(measure.Counting{Policy: result.PolicyJSON{Limit: 10, WindowNS: 1000, Burst: 10}, Bin: 100, Served: served})
	if err := tracefile.MergeRows(parts, func(r tracefile.Row) error { s.Add(&r.Row); return nil }); err != nil {
		t.Fatal(err)
	}
	run, err := s.Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestScan: a trace's stretches of one algorithm, their rows, latest
// instant and whether they are an HTTP run's.
func TestScan(t *testing.T) {
	rows := append(sentRows("k", 0, 5, 9), sentRows("k", 1, 2)...)
	for i := 3; i < 5; i++ {
		rows[i].Algorithm, rows[i].Status = "http", 200
	}
	idx, err := tracefile.Scan(writeTrace(t, t.TempDir(), rows))
	if err != nil {
		t.Fatal(err)
	}
	want := []tracefile.Segment{{Algorithm: "a", First: 0, Count: 3, End: 9}, {Algorithm: "http", First: 3, Count: 2, End: 2, HTTP: true}}
	if !slices.Equal(idx.Segments, want) || idx.Rows != 5 || idx.Cost || idx.CostNot1 {
		t.Errorf("Scan = %+v, want segments %+v of 5 rows, no cost", idx, want)
	}
}

// TestSummaryServed: a shaper's admits count when served (done), a
// meter's when sent: ten admits sent within one W but served 300 ns apart
// are 10 in a W sent, 4 served.
func TestSummaryServed(t *testing.T) {
	var rows []call.Row
	for i := range 10 {
		rows = append(rows, call.Row{Algorithm: "a", Sent: time.Duration(i * 90), Done: time.Duration(i * 300), Key: "k", Outcome: call.Admitted})
	}
	path := writeTrace(t, t.TempDir(), rows)
	for _, tc := range []struct {
		name          string
		served        bool
		want, wantEnd int64
	}{
		{name: "meter: on send instants", want: 10, wantEnd: 810},
		{name: "shaper: on served instants", served: true, want: 4, wantEnd: 900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := summarize(t, []tracefile.Part{{Path: path, Count: 10}}, tc.served)
			if run.MaxAdmittedInWindow != tc.want || run.MaxWindowEndNS != tc.wantEnd {
				t.Errorf("max %d ending at %d, want %d ending at %d", run.MaxAdmittedInWindow, run.MaxWindowEndNS, tc.want, tc.wantEnd)
			}
		})
	}
}
