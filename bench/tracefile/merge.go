package tracefile

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"time"
)

// Segment is a stretch of consecutive rows of one algorithm in a trace:
// one pass (a run), or several passes of the same algorithm one after
// the other, which a trace alone does not tell apart.
type Segment struct {
	Algorithm string
	// First is the number of its first row in the file, from 0; Count its
	// rows.
	First, Count int64
	// End is its latest intended or sent instant, ns: about the length of
	// the run's workload (answers and a shaper's services may come later).
	End int64
	// HTTP reports that a row has an HTTP status or a source address: the
	// rows of an HTTP run (`ratebench attack`), not of a limiter's.
	HTTP bool
}

// Index is what Scan found in a trace.
type Index struct {
	Segments []Segment
	Rows     int64
	Cost     bool // the trace has the cost column
	// CostNot1 reports a cost other than 1.
	CostNot1 bool
}

// Scan reads the whole trace at path once, checking every row, and
// returns its segments: a malformed row is a *FormatError naming its
// line, found before anything is made of the trace.
func Scan(path string) (*Index, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	idx := &Index{Cost: r.HasCost()}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return idx, nil
		}
		if err != nil {
			return nil, err
		}
		n := len(idx.Segments)
		if n == 0 || idx.Segments[n-1].Algorithm != row.Algorithm {
			idx.Segments = append(idx.Segments, Segment{Algorithm: row.Algorithm, First: row.Seq})
			n++
		}
		s := &idx.Segments[n-1]
		s.Count++
		s.End = max(s.End, int64(row.Intended), int64(row.Sent))
		s.HTTP = s.HTTP || row.Status != 0 || row.Source != ""
		idx.Rows++
		idx.CostNot1 = idx.CostNot1 || row.Cost != 1
	}
}

// Part is one trace's share of a run to merge: its rows First to
// First+Count-1 (numbered from 0 in file order), whose instants (intended,
// sent and done) Shift ns moves onto the common clock.
type Part struct {
	Path         string
	First, Count int64
	Shift        int64
}

// Lookahead is how many rows of a part MergeRows holds to put back in
// send order a row sent before rows ahead of it in the file (a live run's
// workers read the clock in an order of their own). A row later than that
// comes out of order; Summary counts it as reordered.
const Lookahead = 4096

// MergeRows hands fn the rows of parts, shifted onto the common clock, in
// send order: a k-way merge over the parts, each read once, streamed, its
// rows in send order (up to Lookahead rows out of place). Rows sent at the
// same instant come in the parts' order, then in file order. Its memory
// is Lookahead rows per part. An error of fn or of reading ends it.
func MergeRows(parts []Part, fn func(Row) error) error {
	var h cursorHeap
	defer func() {
		for _, c := range h {
			c.r.Close()
		}
	}()
	for i, p := range parts {
		c, err := openCursor(p, i)
		if err != nil {
			return err
		}
		if err := c.fill(); err != nil {
			c.r.Close()
			return err
		}
		if len(c.ahead) == 0 {
			c.r.Close()
			continue
		}
		h = append(h, c)
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		row := heap.Pop(&c.ahead).(Row)
		if err := c.fill(); err != nil {
			return err
		}
		if len(c.ahead) == 0 {
			heap.Pop(&h)
			c.r.Close()
		} else {
			heap.Fix(&h, 0)
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// cursor reads one part, holding up to Lookahead of its rows in send
// order.
type cursor struct {
	r     *Reader
	p     Part
	index int   // the part's place, for ties
	left  int64 // rows of the part not read yet
	ahead rowHeap
}

// openCursor opens p's trace and skips to its first row.
func openCursor(p Part, index int) (*cursor, error) {
	r, err := Open(p.Path)
	if err != nil {
		return nil, err
	}
	for range p.First {
		if _, err := r.Read(); err != nil {
			r.Close()
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s: %d rows, fewer than %d", p.Path, r.n, p.First+p.Count)
			}
			return nil, err
		}
	}
	return &cursor{r: r, p: p, index: index, left: p.Count}, nil
}

// fill reads rows until Lookahead are held or the part has none left.
func (c *cursor) fill() error {
	for c.left > 0 && len(c.ahead) < Lookahead {
		row, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %d rows, fewer than %d", c.p.Path, c.r.n, c.p.First+c.p.Count)
		}
		if err != nil {
			return err
		}
		c.left--
		row.Intended = shift(row.Intended, c.p.Shift)
		row.Sent = shift(row.Sent, c.p.Shift)
		row.Done = shift(row.Done, c.p.Shift)
		heap.Push(&c.ahead, row)
	}
	return nil
}

// shift moves instant t by d, leaving -1 (not known) as it is.
func shift(t time.Duration, d int64) time.Duration {
	if t < 0 {
		return t
	}
	return t + time.Duration(d)
}

// rowHeap orders one part's rows by send instant, then file order.
type rowHeap []Row

func (h rowHeap) Len() int { return len(h) }
func (h rowHeap) Less(i, j int) bool {
	if h[i].Sent != h[j].Sent {
		return h[i].Sent < h[j].Sent
	}
	return h[i].Seq < h[j].Seq
}
func (h rowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)   { *h = append(*h, x.(Row)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = Row{}
	*h = old[:len(old)-1]
	return x
}

// cursorHeap orders the parts by their next row's send instant, then
// their place.
type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	a, b := h[i].ahead[0], h[j].ahead[0]
	if a.Sent != b.Sent {
		return a.Sent < b.Sent
	}
	return h[i].index < h[j].index
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
