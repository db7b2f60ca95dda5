package tracefile_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/workload"
)

// TestWriter: the rows read back with encoding/csv field for field, keys
// that need quoting included, and the file replays as the workload of its
// first algorithm.
func TestWriter(t *testing.T) {
	dir := t.TempDir()
	w, err := tracefile.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := []call.Row{
		{Algorithm: "gcra", Intended: 0, Sent: 10, Done: 25, Key: "k0", Outcome: call.Admitted, RetryAfter: -1, Remaining: 4, ResetAfter: time.Second},
		{Algorithm: "gcra", Intended: 5, Sent: 12, Done: 30, Key: `a,"b"`, Source: "127.0.0.2:40000", Status: 429, Outcome: call.Rejected, Attempts: 1, RetryAfter: 2 * time.Second, Remaining: 0, ResetAfter: -1},
		{Algorithm: "gcra", Intended: 7, Sent: 7, Done: 9, Key: " lead\nline", Outcome: call.Failed, RetryAfter: -1, Remaining: -1, ResetAfter: -1, ErrorKind: "timeout"},
		{Algorithm: "fixed-window", Intended: 0, Sent: 1, Done: 2, Key: "k0", Outcome: call.Admitted, RetryAfter: -1, Remaining: -1, ResetAfter: -1},
	}
	for _, r := range rows {
		w.Row(r)
	}
	if _, err := os.Stat(filepath.Join(dir, tracefile.Name)); err == nil {
		t.Fatal("requests.csv exists before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Rows() != int64(len(rows)) {
		t.Errorf("Rows() = %d, want %d", w.Rows(), len(rows))
	}
	f, err := os.Open(filepath.Join(dir, tracefile.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		strings.Split(tracefile.Header, ","),
		{"gcra", "0", "10", "25", "k0", "", "0", "admitted", "0", "-1", "4", "1000000000", ""},
		{"gcra", "5", "12", "30", `a,"b"`, "127.0.0.2:40000", "429", "rejected", "1", "2000000000", "0", "-1", ""},
		{"gcra", "7", "7", "9", " lead\nline", "", "0", "error", "0", "-1", "-1", "-1", "timeout"},
		{"fixed-window", "0", "1", "2", "k0", "", "0", "admitted", "0", "-1", "-1", "-1", ""},
	}
	if !slices.EqualFunc(recs, want, slices.Equal) {
		t.Errorf("read back\n%q\nwant\n%q", recs, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d files, want requests.csv alone", len(entries))
	}

	s, err := (&workload.Replay{Path: filepath.Join(dir, tracefile.Name), Keys: 1}).Open(workload.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	var got []workload.Arrival
	for a, ok := s.Next(); ok; a, ok = s.Next() {
		got = append(got, a)
	}
	wantArr := []workload.Arrival{{At: 0, Key: "k0", Cost: 1}, {At: 5, Key: `a,"b"`, Cost: 1}, {At: 7, Key: " lead\nline", Cost: 1}}
	if !slices.Equal(got, wantArr) {
		t.Errorf("replayed %v, want %v", got, wantArr)
	}
}

// TestAbort: an aborted trace leaves nothing, and an earlier requests.csv
// stays as it was.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, tracefile.Name)
	if err := os.WriteFile(old, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := tracefile.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Row(call.Row{Algorithm: "gcra", Key: "k"})
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d files after Abort, want the earlier trace alone", len(entries))
	}
	if b, _ := os.ReadFile(old); string(b) != "earlier" {
		t.Errorf("earlier trace now %q", b)
	}
}

// TestCreateError: a folder that cannot be written is an error from
// Create, not from the first row.
func TestCreateError(t *testing.T) {
	if _, err := tracefile.Create(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Create in a missing folder: no error")
	}
}
