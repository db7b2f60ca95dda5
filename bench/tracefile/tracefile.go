// Package tracefile writes requests.csv, the per-request trace of a run:
// one row per request, each pass's rows in send order, streamed to disk so
// that memory stays bounded however long the run.
//
// The columns are algorithm, intended_ns, sent_ns, done_ns, key, source,
// status, outcome, attempts, retry_after_ns, ratelimit_remaining,
// ratelimit_reset_ns and error_kind. Times are nanoseconds since the
// pass's start (result.Run.StartUnixNS in a live or HTTP run, the virtual
// zero in a simulation); -1 stands for a value not known. The workload
// package replays such a file: intended_ns is its at_ns, and the first
// algorithm's rows are the arrivals.
package tracefile

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ratebench/ratebench/bench/call"
)

// Name is the file's name in a run folder.
const Name = "requests.csv"

// Header is the file's first line, without its line end.
const Header = "algorithm,intended_ns,sent_ns,done_ns,key,source,status,outcome,attempts,retry_after_ns,ratelimit_remaining,ratelimit_reset_ns,error_kind"

// Writer writes a trace to a temporary file in its folder and renames it
// to Name on Close, so that a folder never holds half a trace under that
// name. It implements call.Tracer: Row may be called from one goroutine
// at a time; Close after the last Row.
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	dir  string
	line []byte
	rows int64
	err  error // the first write error; later rows are dropped
}

// Create starts a trace in dir.
func Create(dir string) (*Writer, error) {
	f, err := os.CreateTemp(dir, ".requests-*.csv")
	if err != nil {
		return nil, err
	}
	t := &Writer{f: f, w: bufio.NewWriterSize(f, 256<<10), dir: dir}
	t.w.WriteString(Header + "\n")
	return t, nil
}

// Row implements call.Tracer.
func (t *Writer) Row(r call.Row) {
	if t.err != nil {
		return
	}
	b := appendField(t.line[:0], r.Algorithm)
	for _, v := range [...]int64{int64(r.Intended), int64(r.Sent), int64(r.Done)} {
		b = strconv.AppendInt(append(b, ','), v, 10)
	}
	b = appendField(append(b, ','), r.Key)
	b = appendField(append(b, ','), r.Source)
	b = strconv.AppendInt(append(b, ','), int64(r.Status), 10)
	b = append(append(b, ','), outcomeName(r.Outcome)...)
	for _, v := range [...]int64{int64(r.Attempts), int64(r.RetryAfter), r.Remaining, int64(r.ResetAfter)} {
		b = strconv.AppendInt(append(b, ','), v, 10)
	}
	b = appendField(append(b, ','), r.ErrorKind)
	b = append(b, '\n')
	t.line = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
	}
	t.rows++
}

// Rows is how many rows Row was given.
func (t *Writer) Rows() int64 { return t.rows }

// Close writes what is buffered and renames the file to Name, replacing
// an earlier one; on an error it removes the temporary file and returns
// the first error, the earlier trace (if any) left as it was.
func (t *Writer) Close() error {
	err := t.err
	if err == nil {
		err = t.w.Flush()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(t.f.Name(), filepath.Join(t.dir, Name))
	}
	if err != nil {
		os.Remove(t.f.Name())
		return fmt.Errorf("write %s: %w", Name, err)
	}
	return nil
}

// Abort removes the temporary file: the run wrote nothing.
func (t *Writer) Abort() {
	t.f.Close()
	os.Remove(t.f.Name())
}

// outcomeName is the outcome column's value.
func outcomeName(c call.Class) string {
	switch c {
	case call.Admitted:
		return "admitted"
	case call.Rejected:
		return "rejected"
	}
	return "error"
}

// appendField appends s as a CSV field, quoted when it holds a comma, a
// quote, a line end or leading space (as encoding/csv reads it back).
func appendField(b []byte, s string) []byte {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := range len(s) {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
