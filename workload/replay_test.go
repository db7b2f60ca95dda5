package workload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sampleArrivals is a trace worth replaying: zipf keys, varied costs, and
// keys that need quoting in CSV and escaping in JSON.
func sampleArrivals(t testing.TB) []Arrival {
	t.Helper()
	as := collect(t, Spec{Name: "zipf", Rate: 1000, Duration: time.Second, Keys: 20, Seed: 3})
	for i := range as {
		as[i].Cost = int64(1 + i%5)
	}
	odd := []string{"a,b", `q"uote`, "ключ", "tab\there", " spaced "}
	for i, k := range odd {
		as[i*7].Key = k
	}
	return as
}

func writeCSV(t testing.TB, path string, as []Arrival) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"at_ns", "key", "cost"})
	for _, a := range as {
		w.Write([]string{strconv.FormatInt(int64(a.At), 10), a.Key, strconv.FormatInt(a.Cost, 10)})
	}
	w.Flush()
	writeFile(t, path, b.String())
}

func writeJSONL(t testing.TB, path string, as []Arrival) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, a := range as {
		enc.Encode(map[string]any{"at_ns": int64(a.At), "key": a.Key, "cost": a.Cost})
	}
	writeFile(t, path, b.String())
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReplayRoundTrip(t *testing.T) {
	want := sampleArrivals(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		file  string
		write func(testing.TB, string, []Arrival)
	}{
		// CSV chosen by its extension.
		{name: "csv", file: "t.csv", write: writeCSV},
		// JSON lines chosen by its extension.
		{name: "jsonl", file: "t.jsonl", write: writeJSONL},
		// The other common extension for JSON lines.
		{name: "ndjson", file: "t.ndjson", write: writeJSONL},
		// No known extension: the first byte ('a' of the header) says CSV.
		{name: "sniffed csv", file: "trace-csv", write: writeCSV},
		// No known extension: the first byte '{' says JSON lines.
		{name: "sniffed jsonl", file: "trace.txt", write: writeJSONL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			tt.write(t, path, want)
			got := collect(t, Spec{Name: "replay:" + path})
			if !slices.Equal(got, want) {
				t.Fatalf("replayed %d arrivals, want the %d written (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []Arrival) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestReplayDuration: a Duration stops the replay before the first arrival
// at or after it, and closes the file.
func TestReplayDuration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	writeFile(t, path, "at_ns,key,cost\n0,a,1\n5,b,1\n10,c,1\n10,d,1\nnot,read,at all\n")
	got := collect(t, Spec{Name: "replay:" + path, Duration: 10})
	if len(got) != 2 {
		t.Fatalf("%d arrivals, want the 2 before 10ns", len(got))
	}
}

func TestReplayFormats(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		want    []Arrival
	}{
		// Columns in another order, an extra column ignored, spaces around numbers.
		{name: "csv column order", file: "t.csv", content: "cost,extra,key,at_ns\n2,x,a, 5 \n", want: []Arrival{{At: 5, Key: "a", Cost: 2}}},
		// A UTF-8 byte order mark before the header, CRLF line ends.
		{name: "csv BOM CRLF", file: "t.csv", content: "\ufeffat_ns,key,cost\r\n1,a,1\r\n", want: []Arrival{{At: 1, Key: "a", Cost: 1}}},
		// A header alone is a valid, empty trace.
		{name: "csv header only", file: "t.csv", content: "at_ns,key,cost\n", want: nil},
		// Blank lines and extra fields in JSON lines are skipped.
		{name: "jsonl blank and extra", file: "t.jsonl", content: "\n{\"at_ns\":3,\"key\":\"a\",\"cost\":1,\"x\":[1]}\n  \n{\"cost\":4,\"key\":\"b\\u00e9\",\"at_ns\":3}\n", want: []Arrival{{At: 3, Key: "a", Cost: 1}, {At: 3, Key: "bé", Cost: 4}}},
		// Sniffing skips a BOM and blank space before the '{'.
		{name: "sniff BOM", file: "t", content: "\ufeff \n{\"at_ns\":1,\"key\":\"a\",\"cost\":1}", want: []Arrival{{At: 1, Key: "a", Cost: 1}}},
		// Equal instants are fine: the order is non-decreasing.
		{name: "equal instants", file: "t.csv", content: "at_ns,key,cost\n7,a,1\n7,b,1\n", want: []Arrival{{At: 7, Key: "a", Cost: 1}, {At: 7, Key: "b", Cost: 1}}},
		// No cost column: every arrival costs 1.
		{name: "csv without cost", file: "t.csv", content: "key,at_ns\na,4\n", want: []Arrival{{At: 4, Key: "a", Cost: 1}}},
		// A requests.csv: intended_ns is the instant, the first algorithm's
		// rows are the workload, the other passes' rows are not read.
		{name: "requests.csv", file: "requests.csv", content: "algorithm,intended_ns,sent_ns,done_ns,key,source,status,outcome,attempts,retry_after_ns,ratelimit_remaining,ratelimit_reset_ns,error_kind\n" +
			"gcra,0,3,9,k0,,0,admitted,0,-1,4,100,\ngcra,5,8,12,\"k,1\",,0,rejected,0,50,-1,-1,\nfixed-window,0,2,3,k0,,0,admitted,0,-1,-1,-1,\n",
			want: []Arrival{{At: 0, Key: "k0", Cost: 1}, {At: 5, Key: "k,1", Cost: 1}}},
		// at_ns wins over intended_ns when a trace has both.
		{name: "at_ns over intended_ns", file: "t.csv", content: "intended_ns,at_ns,key\n9,1,a\n", want: []Arrival{{At: 1, Key: "a", Cost: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			writeFile(t, path, tt.content)
			got := collect(t, Spec{Name: "replay:" + path})
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		atNew   bool   // New fails (with ErrInvalid); otherwise Err after Next
		good    int    // arrivals yielded before the error
		want    string // the whole message, after "workload: "
	}{
		// The brief's example: a cost that is not a number names line and value.
		{name: "cost not integer", file: "trace.csv", content: "at_ns,key,cost\n0,a,1\n1,b,x\n", good: 1, want: `trace.csv line 3: cost "x" is not an integer`},
		// at_ns that is not a number.
		{name: "at not integer", file: "trace.csv", content: "at_ns,key,cost\n1.5,a,1\n", want: `trace.csv line 2: at_ns "1.5" is not an integer`},
		// at_ns past int64.
		{name: "at out of range", file: "trace.csv", content: "at_ns,key,cost\n99999999999999999999,a,1\n", want: `trace.csv line 2: at_ns "99999999999999999999" is out of range`},
		// Negative instants are before the run.
		{name: "negative at", file: "trace.csv", content: "at_ns,key,cost\n-5,a,1\n", want: `trace.csv line 2: at_ns -5 is negative`},
		// Time going backwards.
		{name: "decreasing at", file: "trace.csv", content: "at_ns,key,cost\n10,a,1\n20,a,1\n15,a,1\n", good: 2, want: `trace.csv line 4: at_ns 15 is before the previous arrival's 20: a trace must be in time order`},
		// A limiter key cannot be empty.
		{name: "empty key", file: "trace.csv", content: "at_ns,key,cost\n1,,1\n", want: `trace.csv line 2: key is empty`},
		// Cost 0 would be an invalid request.
		{name: "zero cost", file: "trace.csv", content: "at_ns,key,cost\n1,a,0\n", want: `trace.csv line 2: cost 0 must be >= 1`},
		// A missing cost is an error, not a default of 1.
		{name: "missing cost column value", file: "trace.csv", content: "at_ns,key,cost\n1,a,\n", want: `trace.csv line 2: cost "" is not an integer`},
		// A short record.
		{name: "csv field count", file: "trace.csv", content: "at_ns,key,cost\n1,a,1\n\n2,b\n", good: 1, want: `trace.csv line 4: has 2 fields, want 3 as in the header`},
		// CSV syntax: a stray quote.
		{name: "csv bad quote", file: "trace.csv", content: "at_ns,key,cost\n1,a\"b,1\n", want: `trace.csv line 2: column 4: bare " in non-quoted-field`},
		// The header must name the columns.
		{name: "csv no header", file: "trace.csv", content: "0,a,1\n", atNew: true, want: `trace.csv line 1: header "0,a,1" must name the columns at_ns (or intended_ns), key and, optionally, cost`},
		// A column named twice is ambiguous.
		{name: "csv duplicate column", file: "trace.csv", content: "at_ns,key,cost,key\n", atNew: true, want: `trace.csv line 1: header names column "key" twice`},
		// An empty file is not a trace.
		{name: "empty file", file: "trace.csv", content: "", atNew: true, want: `invalid workload: replay: trace.csv is empty`},
		// Blank lines only: no CSV header.
		{name: "csv blank", file: "trace.csv", content: "\n\n", atNew: true, want: `trace.csv line 1: no header: want a first line at_ns,key,cost`},
		// JSON lines: line numbers count blank lines too.
		{name: "jsonl cost string", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":\"a\",\"cost\":1}\n\n{\"at_ns\":2,\"key\":\"a\",\"cost\":\"x\"}\n", good: 1, want: `trace.jsonl line 3: cost "x" is not an integer`},
		// Not JSON at all.
		{name: "jsonl syntax", file: "trace.jsonl", content: "{\"at_ns\":1,\n", want: `trace.jsonl line 1: is not valid JSON: unexpected end of JSON input`},
		// JSON but not an object.
		{name: "jsonl array", file: "trace.jsonl", content: "[1,\"a\",1]\n", want: `trace.jsonl line 1: is not a JSON object`},
		// A missing field.
		{name: "jsonl missing cost", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":\"a\"}\n", want: `trace.jsonl line 1: has no cost`},
		// null is missing.
		{name: "jsonl null key", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":null,\"cost\":1}\n", want: `trace.jsonl line 1: has no key`},
		// Missing instant.
		{name: "jsonl missing at", file: "trace.jsonl", content: "{\"key\":\"a\",\"cost\":1}\n", want: `trace.jsonl line 1: has no at_ns`},
		// Keys are strings, not numbers.
		{name: "jsonl key number", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":5,\"cost\":1}\n", want: `trace.jsonl line 1: key 5 is not a JSON string`},
		// Instants are integers of nanoseconds, not seconds with a fraction.
		{name: "jsonl at float", file: "trace.jsonl", content: "{\"at_ns\":1.5,\"key\":\"a\",\"cost\":1}\n", want: `trace.jsonl line 1: at_ns 1.5 is not an integer`},
		// Exponent notation is not an integer literal either.
		{name: "jsonl at exponent", file: "trace.jsonl", content: "{\"at_ns\":1e3,\"key\":\"a\",\"cost\":1}\n", want: `trace.jsonl line 1: at_ns 1e3 is not an integer`},
		// Negative cost in JSON.
		{name: "jsonl negative cost", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":\"a\",\"cost\":-1}\n", want: `trace.jsonl line 1: cost -1 must be >= 1`},
		// A line over the 1 MiB bound.
		{name: "jsonl long line", file: "trace.jsonl", content: "{\"at_ns\":1,\"key\":\"a\",\"cost\":1}\n{\"key\":\"" + strings.Repeat("x", maxTraceLine) + "\"}\n", good: 1, want: `trace.jsonl line 2: is longer than 1048576 bytes`},
		// A CSV line has the same bound: a 1 GiB key would otherwise be
		// read whole into memory.
		{name: "csv long line", file: "trace.csv", content: "at_ns,key,cost\n1,a,1\n2," + strings.Repeat("x", maxTraceLine) + ",1\n3,b,1\n", good: 1, want: `trace.csv line 3: is longer than 1048576 bytes`},
		// The bound is on a record, so quoted line breaks do not reset it.
		{name: "csv long quoted record", file: "trace.csv", content: "at_ns,key,cost\n1,\"" + strings.Repeat("xxxxxxx\n", maxTraceLine/8+1) + "\",1\n", want: `trace.csv line 2: is longer than 1048576 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, tt.file), tt.content)
			t.Chdir(dir) // so that the message names the file as given
			st, err := New(Spec{Name: "replay:" + tt.file})
			if tt.atNew {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("New: %v, want an error wrapping ErrInvalid", err)
				}
				if got := strings.TrimPrefix(err.Error(), "workload: "); got != tt.want {
					t.Fatalf("New: %q\nwant    %q", got, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			n := 0
			for _, ok := st.Next(); ok; _, ok = st.Next() {
				n++
			}
			err = st.Err()
			if err == nil {
				t.Fatalf("Err() = nil after %d arrivals, want %q", n, tt.want)
			}
			if got := strings.TrimPrefix(err.Error(), "workload: "); got != tt.want {
				t.Fatalf("Err() = %q\nwant    %q", got, tt.want)
			}
			if errors.Is(err, ErrInvalid) {
				t.Errorf("a bad line found by Next matches ErrInvalid; that is for New")
			}
			if n != tt.good {
				t.Errorf("%d arrivals before the error, want %d", n, tt.good)
			}
			if _, ok := st.Next(); ok {
				t.Error("Next after an error returned an arrival")
			}
		})
	}
}

// closeCounter counts Close calls on the trace file.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestReplayClose: the file is closed exactly once, whether the stream ends,
// fails or is stopped early, and Close may be called again.
func TestReplayClose(t *testing.T) {
	tests := []struct {
		name    string
		content string
		reads   int // calls to Next before Close
	}{
		// Read to the end: the stream closes the file itself.
		{name: "end", content: "at_ns,key,cost\n1,a,1\n", reads: 5},
		// Stopped by an error: closed too.
		{name: "error", content: "at_ns,key,cost\n1,a,x\n", reads: 5},
		// Stopped early by the caller.
		{name: "early", content: "at_ns,key,cost\n1,a,1\n2,a,1\n", reads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := &closeCounter{Reader: strings.NewReader(tt.content)}
			st, err := openTrace("t", cc, formatCSV, 0)
			if err != nil {
				t.Fatal(err)
			}
			st.closer = cc
			for range tt.reads {
				st.Next()
			}
			var s Stream = st
			c, ok := s.(io.Closer)
			if !ok {
				t.Fatal("the replay stream is not an io.Closer")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if cc.closed != 1 {
				t.Fatalf("file closed %d times, want 1", cc.closed)
			}
			if _, ok := st.Next(); ok {
				t.Fatal("Next after Close returned an arrival")
			}
		})
	}
}

// FuzzReplay feeds arbitrary bytes to both trace parsers: they never panic,
// and every arrival they yield has a non-empty key, Cost >= 1 and an At
// that is >= 0 and non-decreasing.
func FuzzReplay(f *testing.F) {
	f.Add([]byte("at_ns,key,cost\n0,a,1\n5,b,2\n"))
	f.Add([]byte("cost,key,at_ns\n1,\"a,b\",3\n"))
	f.Add([]byte("at_ns,key,cost\n1,a,x\n"))
	f.Add([]byte("{\"at_ns\":1,\"key\":\"a\",\"cost\":1}\n{\"at_ns\":2,\"key\":\"b\",\"cost\":3}\n"))
	f.Add([]byte("{\"at_ns\":-1,\"key\":\"a\",\"cost\":0}\n"))
	f.Add([]byte("\ufeff{\"at_ns\":1e3}\n[]\nnull\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []traceFormat{formatSniff, formatCSV, formatJSONL} {
			st, err := openTrace("fuzz", bytes.NewReader(data), format, 0)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("openTrace error %v does not wrap ErrInvalid", err)
				}
				continue
			}
			prev := time.Duration(0)
			for {
				a, ok := st.Next()
				if !ok {
					break
				}
				if a.Cost < 1 || a.At < prev || a.Key == "" {
					t.Fatalf("format %d yielded %+v after At %v", format, a, prev)
				}
				prev = a.At
			}
			if err := st.Err(); err != nil && !strings.HasPrefix(err.Error(), "workload: fuzz line ") {
				t.Fatalf("error %q does not name the line", err)
			}
		}
	})
}

// endless is an io.Reader of endless zero bytes, as /dev/zero.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.read += len(p)
	return len(p), nil
}

// TestReplayEndlessLine: a trace that is one endless line (replay:/dev/zero)
// fails at the line bound instead of growing until the machine runs out.
func TestReplayEndlessLine(t *testing.T) {
	for _, format := range []traceFormat{formatCSV, formatJSONL} {
		src := &endless{}
		st, err := openTrace("zero", src, format, 0)
		if err == nil {
			_, ok := st.Next()
			if ok {
				t.Fatalf("format %d: an endless line gave an arrival", format)
			}
			err = st.Err()
		}
		if err == nil || !strings.Contains(err.Error(), "zero line 1: ") {
			t.Fatalf("format %d: %v, want an error at line 1", format, err)
		}
		if src.read > 4*maxTraceLine {
			t.Errorf("format %d: read %d bytes of an endless line, want at most about %d", format, src.read, maxTraceLine)
		}
	}
}
