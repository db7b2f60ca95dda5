package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Info is what a workload holds, known before it runs: what bounds a run
// and sizes its per-key tables. It is a plain value.
type Info struct {
	// Arrivals is how many arrivals come before Duration: counted for a
	// trace, the exact count (to within one) for the deterministic
	// generators, the mean for poisson and zipf.
	Arrivals float64
	// Keys is how many distinct keys the arrivals use: Spec.Keys, or for a
	// trace those of its arrivals before Duration, counted up to the bound
	// given to Inspect; KeysOver then says that there are more.
	Keys     int
	KeysOver bool
	// Span is the run's length in virtual time: Duration, or for a whole
	// trace (Duration 0) its last instant plus 1ns.
	Span time.Duration
}

// inspectEvery is how many trace rows Inspect reads between two looks at
// its context.
const inspectEvery = 4096

// Inspect returns the Info of src, a Source of this package's
// generators, after checking it as Open does. For a trace it reads the
// whole file once, checking every row as the stream will, so that a bad
// row anywhere is an error wrapping ErrInvalid that names the line,
// before anything runs; it counts distinct keys up to maxKeys (0: no
// bound), so that its memory stays bounded by maxKeys keys. It returns
// ctx.Err() when ctx is done first. Another Source is an error wrapping
// ErrInvalid.
func Inspect(ctx context.Context, src Source, maxKeys int) (Info, error) {
	switch s := src.(type) {
	case expected:
		if err := s.Validate(); err != nil {
			return Info{}, err
		}
		return s.info(), nil
	case *Replay:
		if err := s.Validate(); err != nil {
			return Info{}, err
		}
		return s.inspect(ctx, maxKeys)
	}
	return Info{}, fmt.Errorf("%w: cannot inspect a %T", ErrInvalid, src)
}

// inspect reads the whole trace.
func (r *Replay) inspect(ctx context.Context, maxKeys int) (Info, error) {
	path := r.Path
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("%w: replay: %w", ErrInvalid, err)
	}
	defer f.Close()
	tr, err := openTrace(path, f, formatOf(path), 0) // every row, past Duration too
	if err != nil {
		return Info{}, err
	}
	info := Info{Span: r.Duration}
	keys := map[string]struct{}{}
	var last time.Duration
	for n := 1; ; n++ {
		a, ok := tr.Next()
		if !ok {
			break
		}
		if n%inspectEvery == 0 && ctx.Err() != nil {
			return Info{}, ctx.Err()
		}
		if r.Duration > 0 && a.At >= r.Duration {
			continue
		}
		info.Arrivals++
		last = a.At
		if _, seen := keys[a.Key]; !seen && !info.KeysOver {
			if maxKeys > 0 && len(keys) == maxKeys {
				info.KeysOver = true
				continue
			}
			keys[strings.Clone(a.Key)] = struct{}{}
		}
	}
	if err := tr.Err(); err != nil {
		var te *traceError
		if errors.As(err, &te) {
			te.invalid = true
		}
		return Info{}, err
	}
	info.Keys = max(len(keys), 1)
	if r.Duration == 0 {
		info.Span = last + 1
	}
	return info, nil
}
