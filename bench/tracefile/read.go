package tracefile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/call"
)

// CostColumn is the name of an optional last column holding each
// request's cost (>= 1). Writer does not write it; without it every
// request costs 1.
const CostColumn = "cost"

// Row is one row of a trace as read back.
type Row struct {
	// Row is the row; its Seq is the row's number in the file, from 0,
	// and its Cost the cost column's value, 1 without one.
	call.Row
	// Line is the line of the file the row starts on (the header is 1).
	Line int
}

// FormatError is a trace that is not a well-formed requests.csv: a header
// that is not Header, or a row with a field that does not parse. It names
// the file and the line.
type FormatError struct {
	Name string // the file, as given to NewReader
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s line %d: %s", e.Name, e.Line, e.Msg)
}

// Reader reads a trace row by row, streamed: its memory does not grow with
// the file. Not safe for concurrent use.
type Reader struct {
	cr   *csv.Reader
	c    io.Closer // the file Open opened; nil from NewReader
	name string
	cost bool
	n    int64
}

// NewReader checks that r starts with a requests.csv header (Header,
// optionally followed by the cost column) and returns a Reader of its
// rows; name names r in errors (its path).
func NewReader(r io.Reader, name string) (*Reader, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, &FormatError{Name: name, Line: 1, Msg: "empty: no header"}
	case err != nil:
		return nil, formatErr(name, 1, err)
	}
	got := strings.Join(header, ",")
	tr := &Reader{cr: cr, name: name}
	switch got {
	case Header:
	case Header + "," + CostColumn:
		tr.cost = true
	default:
		return nil, &FormatError{Name: name, Line: 1, Msg: fmt.Sprintf("header %q is not requests.csv's %q", got, Header)}
	}
	return tr, nil
}

// Open opens the trace at path and checks its header; Close closes it.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.c = f
	return r, nil
}

// Close closes the file Open opened; a no-op for NewReader's.
func (r *Reader) Close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// HasCost reports whether the trace has the cost column.
func (r *Reader) HasCost() bool { return r.cost }

// Read returns the next row, or io.EOF after the last. A row that does not
// parse is a *FormatError naming its line; so is a CSV syntax error.
func (r *Reader) Read() (Row, error) {
	rec, err := r.cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Row{}, io.EOF
		}
		return Row{}, formatErr(r.name, 0, err)
	}
	line, _ := r.cr.FieldPos(0)
	row := Row{Row: call.Row{Cost: 1}, Line: line}
	p := fieldParser{rec: rec}
	row.Seq = r.n
	row.Algorithm = rec[0]
	row.Intended = time.Duration(p.int(1, "intended_ns", -1))
	row.Sent = time.Duration(p.int(2, "sent_ns", 0))
	row.Done = time.Duration(p.int(3, "done_ns", -1))
	row.Key = rec[4]
	row.Source = rec[5]
	row.Status = int(p.int(6, "status", 0))
	switch rec[7] {
	case "admitted":
		row.Outcome = call.Admitted
	case "rejected":
		row.Outcome = call.Rejected
	case "error":
		row.Outcome = call.Failed
	default:
		if p.err == "" {
			p.err = fmt.Sprintf("outcome %q is not admitted, rejected or error", rec[7])
		}
	}
	row.Attempts = int(p.int(8, "attempts", 0))
	row.RetryAfter = time.Duration(p.int(9, "retry_after_ns", -1))
	row.Remaining = p.int(10, "ratelimit_remaining", -1)
	row.ResetAfter = time.Duration(p.int(11, "ratelimit_reset_ns", -1))
	row.ErrorKind = rec[12]
	if r.cost {
		row.Cost = p.int(13, CostColumn, 1)
	}
	switch {
	case p.err != "":
		return Row{}, &FormatError{Name: r.name, Line: line, Msg: p.err}
	case row.Algorithm == "":
		return Row{}, &FormatError{Name: r.name, Line: line, Msg: "the algorithm is empty"}
	case row.Status > 999:
		return Row{}, &FormatError{Name: r.name, Line: line, Msg: fmt.Sprintf("status %d is not an HTTP status", row.Status)}
	}
	r.n++
	return row, nil
}

// fieldParser parses a record's integer fields, keeping the first error.
type fieldParser struct {
	rec []string
	err string
}

// int parses field i, named name, which must be >= least.
func (p *fieldParser) int(i int, name string, least int64) int64 {
	if p.err != "" {
		return 0
	}
	v, err := strconv.ParseInt(p.rec[i], 10, 64)
	switch {
	case err != nil:
		p.err = fmt.Sprintf("%s %q is not an integer", name, p.rec[i])
	case v < least:
		p.err = fmt.Sprintf("%s %d is below %d", name, v, least)
	}
	return v
}

// formatErr turns a CSV syntax error into a FormatError at its line (line
// when the error does not say); other errors (reading) are wrapped.
func formatErr(name string, line int, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.Line > 0 {
			line = pe.Line
		}
		return &FormatError{Name: name, Line: line, Msg: pe.Err.Error()}
	}
	return fmt.Errorf("%s: %w", name, err)
}
