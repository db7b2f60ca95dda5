package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxTraceLine bounds one line of a trace (a JSON line, or a CSV record,
// which may span lines inside quotes), in bytes.
const maxTraceLine = 1 << 20

// traceFormat is the syntax of a trace file.
type traceFormat int

const (
	formatSniff traceFormat = iota // decided by the first non-blank byte: '{' is JSON lines
	formatCSV
	formatJSONL
)

// formatOf chooses the format from the file extension: .csv, .jsonl or
// .ndjson; anything else is sniffed from the content.
func formatOf(path string) traceFormat {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return formatCSV
	case ".jsonl", ".ndjson":
		return formatJSONL
	}
	return formatSniff
}

// Replay is the replay workload: the arrivals of a trace file, CSV with
// the header at_ns,key,cost or JSON lines with the same fields (see
// Spec.Name). Open reads the file afresh each time. Its fields are plain
// values, with no defaults: Spec.Source fills them in. It is safe for
// concurrent Opens as long as its fields do not change.
type Replay struct {
	// Path is the trace's file: .csv, .jsonl or .ndjson, or sniffed from
	// its first byte otherwise.
	Path string
	// Duration ends the trace early: arrivals at or after it are not
	// played. 0 plays the whole trace.
	Duration time.Duration
	// Keys is how many distinct keys the trace uses, >= 1, as Inspect
	// counts them: recorded in result.json, and a trace of one key is
	// split over shards by arrival index, one of several by key.
	Keys int
}

// replayOf makes the replay workload of a "replay:PATH" spec.
func replayOf(s Spec) (generated, error) {
	return &Replay{Path: strings.TrimPrefix(s.Name, replayName+":"), Duration: s.Duration, Keys: s.Keys}, nil
}

// Validate returns nil or an error wrapping ErrInvalid that names the
// first bad field. It does not open the trace: Open and Inspect do.
func (r *Replay) Validate() error {
	if r.Path == "" {
		return invalid("Path", `""`, "needs a trace file")
	}
	return firstError(nonNegative(r.Duration), checkKeys(r.Keys))
}

// Open implements Source: it opens the trace. A missing or unreadable
// file, an empty one or a bad CSV header is an error wrapping ErrInvalid;
// a bad row later ends the stream with an error that names its line.
func (r *Replay) Open(sh Shard) (Stream, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(r.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: replay: %w", ErrInvalid, err)
	}
	st, err := openTrace(r.Path, f, formatOf(r.Path), r.Duration)
	if err != nil {
		f.Close()
		return nil, err
	}
	st.closer = f
	return openShard(r, st, sh), nil
}

// Span implements Source: Duration, 0 for the whole trace (Inspect gives
// its length).
func (r *Replay) Span() time.Duration { return r.Duration }

// Record implements Source: the name as a Spec writes it,
// "replay:PATH", the path, the duration and the keys.
func (r *Replay) Record() map[string]any {
	return map[string]any{"name": replayName + ":" + r.Path, "path": r.Path, "duration_ns": int64(r.Duration), "keys": r.Keys}
}

// replayStream yields the arrivals of a trace read line by line through a
// bufio.Reader: memory stays bounded by the longest line. It checks that
// at_ns is >= 0 and non-decreasing, the key non-empty and the cost >= 1,
// and stops with an error naming the line at the first bad one. It is not
// safe for concurrent use.
type replayStream struct {
	name   string // the path, for messages
	src    traceSource
	closer io.Closer // nil once closed, or for an in-memory trace
	end    time.Duration
	prev   time.Duration
	err    error
	done   bool
}

// traceSource reads the records of one trace syntax.
type traceSource interface {
	// next returns the next record, io.EOF at the end, or a *traceError.
	next() (traceRecord, error)
}

// traceRecord is one record of a trace before its values are checked: at
// and cost hold the text of an integer, quoted in messages when quote is
// set (CSV fields; JSON values are shown as written).
type traceRecord struct {
	line      int
	at, cost  string
	key       string
	quoteText bool
}

// traceError is an error at one line of a trace, printed
// "workload: NAME line N: MSG". Those returned by New also match ErrInvalid.
type traceError struct {
	name    string
	line    int
	msg     string
	err     error // the cause, if any
	invalid bool
}

func (e *traceError) Error() string {
	return fmt.Sprintf("workload: %s line %d: %s", e.name, e.line, e.msg)
}

func (e *traceError) Unwrap() error { return e.err }

func (e *traceError) Is(target error) bool { return e.invalid && target == ErrInvalid }

// openTrace starts reading a trace from r; name appears in messages. end is
// Spec.Duration: arrivals at or after it end the stream, 0 means none.
func openTrace(name string, r io.Reader, format traceFormat, end time.Duration) (*replayStream, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if _, err := br.Peek(1); err == io.EOF {
		return nil, fmt.Errorf("%w: replay: %s is empty", ErrInvalid, name)
	} else if err != nil {
		return nil, fmt.Errorf("%w: replay: read %s: %w", ErrInvalid, name, err)
	}
	if format == formatSniff {
		format = sniff(br)
	}
	rs := &replayStream{name: name, end: end}
	if format == formatJSONL {
		sc := bufio.NewScanner(br)
		sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
		rs.src = &jsonlSource{name: name, sc: sc}
		return rs, nil
	}
	src, err := newCSVSource(name, br)
	if err != nil {
		return nil, err
	}
	rs.src = src
	return rs, nil
}

var utf8BOM = []byte("\ufeff")

// sniff returns formatJSONL when the first non-blank byte is '{'.
func sniff(br *bufio.Reader) traceFormat {
	b, _ := br.Peek(512) // fewer bytes at the end of a short file
	b = bytes.TrimLeft(bytes.TrimPrefix(b, utf8BOM), " \t\r\n")
	if len(b) > 0 && b[0] == '{' {
		return formatJSONL
	}
	return formatCSV
}

// Next returns the next arrival of the trace, or false at its end, at
// Duration, or at the first bad line (see Err).
func (r *replayStream) Next() (Arrival, bool) {
	if r.done {
		return Arrival{}, false
	}
	rec, err := r.src.next()
	if err != nil {
		if err == io.EOF {
			err = nil
		}
		r.finish(err)
		return Arrival{}, false
	}
	a, err := r.check(rec)
	if err != nil {
		r.finish(err)
		return Arrival{}, false
	}
	if r.end > 0 && a.At >= r.end {
		r.finish(nil)
		return Arrival{}, false
	}
	r.prev = a.At
	return a, true
}

// check turns a record into an arrival, in column order.
func (r *replayStream) check(rec traceRecord) (Arrival, error) {
	at, err := r.intField(rec, "at_ns", rec.at)
	if err != nil {
		return Arrival{}, err
	}
	switch {
	case at < 0:
		return Arrival{}, r.lineErr(rec.line, "at_ns %d is negative", at)
	case time.Duration(at) < r.prev:
		return Arrival{}, r.lineErr(rec.line, "at_ns %d is before the previous arrival's %d: a trace must be in time order", at, int64(r.prev))
	case rec.key == "":
		return Arrival{}, r.lineErr(rec.line, "key is empty")
	}
	cost, err := r.intField(rec, "cost", rec.cost)
	if err != nil {
		return Arrival{}, err
	}
	if cost < 1 {
		return Arrival{}, r.lineErr(rec.line, "cost %d must be >= 1", cost)
	}
	return Arrival{At: time.Duration(at), Key: rec.key, Cost: cost}, nil
}

func (r *replayStream) intField(rec traceRecord, field, text string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err == nil {
		return v, nil
	}
	shown := text
	if rec.quoteText {
		shown = strconv.Quote(text)
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, r.lineErr(rec.line, "%s %s is out of range", field, shown)
	}
	return 0, r.lineErr(rec.line, "%s %s is not an integer", field, shown)
}

func (r *replayStream) lineErr(line int, format string, args ...any) error {
	return &traceError{name: r.name, line: line, msg: fmt.Sprintf(format, args...)}
}

// finish ends the stream with err (nil at a clean end) and closes the file.
func (r *replayStream) finish(err error) {
	r.done = true
	r.err = err
	if cerr := r.Close(); cerr != nil && r.err == nil {
		r.err = fmt.Errorf("workload: %s: close: %w", r.name, cerr)
	}
}

// Err returns nil after a clean end or an early Close, or the error that
// stopped the stream, naming the file and line.
func (r *replayStream) Err() error { return r.err }

// Close stops the stream early and closes the trace file. It is safe to
// call more than once, and after the stream has ended on its own.
func (r *replayStream) Close() error {
	r.done = true
	c := r.closer
	r.closer = nil
	if c == nil {
		return nil
	}
	return c.Close()
}

// csvSource reads a CSV trace whose header names the columns at_ns (or
// intended_ns), key and, optionally, cost, in any order; other columns are
// ignored. Without a cost column every arrival costs 1. With an algorithm
// column (a requests.csv, which holds one pass per algorithm) it reads the
// first algorithm's rows only: the workload that every pass was sent.
type csvSource struct {
	name                string
	r                   *csv.Reader
	lim                 *recordLimit
	at, key, cost, algo int    // column indexes; cost and algo -1 when absent
	first               string // the first row's algorithm
	started             bool   // first is set
	lastLine            int
}

func newCSVSource(name string, br *bufio.Reader) (*csvSource, error) {
	c := &csvSource{name: name, at: -1, key: -1, cost: -1, algo: -1}
	c.lim = &recordLimit{r: br, max: maxTraceLine, line: 1}
	c.r = csv.NewReader(c.lim)
	c.r.ReuseRecord = true
	header, err := c.r.Read()
	if err == io.EOF {
		return nil, &traceError{name: name, line: 1, msg: "no header: want a first line at_ns,key,cost", invalid: true}
	}
	if err != nil {
		e := c.readErr(header, err)
		e.invalid = true
		return nil, e
	}
	line, _ := c.r.FieldPos(0)
	intended := -1
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		var col *int
		switch h {
		case "at_ns":
			col = &c.at
		case "intended_ns":
			col = &intended
		case "key":
			col = &c.key
		case "cost":
			col = &c.cost
		case "algorithm":
			col = &c.algo
		default:
			continue
		}
		if *col >= 0 {
			return nil, &traceError{name: name, line: line, msg: fmt.Sprintf("header names column %q twice", h), invalid: true}
		}
		*col = i
	}
	if c.at < 0 {
		c.at = intended
	}
	if c.at < 0 || c.key < 0 {
		return nil, &traceError{name: name, line: line, invalid: true,
			msg: fmt.Sprintf("header %q must name the columns at_ns (or intended_ns), key and, optionally, cost", strings.Join(header, ","))}
	}
	c.lastLine = line
	return c, nil
}

func (c *csvSource) next() (traceRecord, error) {
	rec, err := c.r.Read()
	if err != nil {
		if err == io.EOF {
			return traceRecord{}, io.EOF
		}
		return traceRecord{}, c.readErr(rec, err)
	}
	c.lastLine, _ = c.r.FieldPos(0)
	if c.algo >= 0 {
		if !c.started {
			c.first, c.started = strings.Clone(rec[c.algo]), true
		} else if rec[c.algo] != c.first {
			return traceRecord{}, io.EOF // the next pass: the same arrivals again
		}
	}
	cost := "1"
	if c.cost >= 0 {
		cost = rec[c.cost]
	}
	return traceRecord{line: c.lastLine, at: rec[c.at], key: rec[c.key], cost: cost, quoteText: true}, nil
}

// readErr turns an error of csv.Reader.Read into a *traceError.
func (c *csvSource) readErr(rec []string, err error) *traceError {
	if errors.Is(err, errRecordTooLong) {
		return &traceError{name: c.name, line: c.lim.start, err: err,
			msg: fmt.Sprintf("is longer than %d bytes", maxTraceLine)}
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return &traceError{name: c.name, line: c.lastLine + 1, msg: "read: " + err.Error(), err: err}
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return &traceError{name: c.name, line: pe.StartLine, err: pe.Err,
			msg: fmt.Sprintf("has %d fields, want %d as in the header", len(rec), c.r.FieldsPerRecord)}
	}
	return &traceError{name: c.name, line: pe.Line, err: pe.Err,
		msg: fmt.Sprintf("column %d: %v", pe.Column, pe.Err)}
}

// jsonlSource reads a JSON lines trace: one object per line with the fields
// at_ns and cost (integers) and key (a string); blank lines are skipped,
// other fields ignored.
type jsonlSource struct {
	name string
	sc   *bufio.Scanner
	line int
}

func (j *jsonlSource) next() (traceRecord, error) {
	for j.sc.Scan() {
		j.line++
		b := bytes.TrimSpace(j.sc.Bytes())
		if j.line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if len(b) == 0 {
			continue
		}
		return j.parse(b)
	}
	err := j.sc.Err()
	switch {
	case err == nil:
		return traceRecord{}, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return traceRecord{}, &traceError{name: j.name, line: j.line + 1, err: err,
			msg: fmt.Sprintf("is longer than %d bytes", maxTraceLine)}
	}
	return traceRecord{}, &traceError{name: j.name, line: j.line + 1, msg: "read: " + err.Error(), err: err}
}

func (j *jsonlSource) parse(b []byte) (traceRecord, error) {
	var v struct {
		At   json.RawMessage `json:"at_ns"`
		Key  json.RawMessage `json:"key"`
		Cost json.RawMessage `json:"cost"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return traceRecord{}, j.errorf(err, "is not a JSON object")
		}
		return traceRecord{}, j.errorf(err, "is not valid JSON: %v", err)
	}
	switch {
	case isNull(v.At):
		return traceRecord{}, j.errorf(nil, "has no at_ns")
	case isNull(v.Key):
		return traceRecord{}, j.errorf(nil, "has no key")
	case isNull(v.Cost):
		return traceRecord{}, j.errorf(nil, "has no cost")
	}
	rec := traceRecord{line: j.line, at: string(v.At), cost: string(v.Cost)}
	if v.Key[0] != '"' || json.Unmarshal(v.Key, &rec.key) != nil {
		return traceRecord{}, j.errorf(nil, "key %s is not a JSON string", v.Key)
	}
	return rec, nil
}

func (j *jsonlSource) errorf(err error, format string, args ...any) error {
	return &traceError{name: j.name, line: j.line, msg: fmt.Sprintf(format, args...), err: err}
}

// isNull reports whether a JSON field is absent or null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// errRecordTooLong is what recordLimit returns for a record over its bound.
var errRecordTooLong = errors.New("record too long")

// recordLimit passes a CSV text through and fails with errRecordTooLong
// as soon as one record (a line, or several inside quotes) exceeds max
// bytes, so that encoding/csv, which would hold a whole record in memory,
// never sees one larger than that. It follows quotes as CSV does: a quote
// toggles the quoted state, and a doubled quote toggles it twice.
type recordLimit struct {
	r      io.Reader
	max    int
	n      int  // bytes of the current record so far
	quoted bool // inside a quoted field
	line   int  // the current physical line, from 1
	start  int  // the line the current record started on
	err    error
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if l.n == 0 {
			l.start = l.line
		}
		l.n++
		switch {
		case b == '"':
			l.quoted = !l.quoted
		case b == '\n':
			l.line++
			if !l.quoted {
				l.n = 0
			}
		}
		if l.n > l.max {
			// Hand over what precedes the record, so that the records
			// before it are read whole; the next Read fails.
			l.err = errRecordTooLong
			return i, nil
		}
	}
	return n, err
}
