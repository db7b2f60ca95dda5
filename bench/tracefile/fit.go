package tracefile

import (
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/fit"
)

// FitRequests reads the answered requests of the trace at path for a fit
// (fit.Run): the first algorithm's rows (a trace holds its passes one
// after the other), failed ones left out, in send order. A trace that is
// not well formed is a *FormatError naming its line.
func FitRequests(path string) ([]fit.Request, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var reqs []fit.Request
	var first string
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return reqs, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case row.Seq == 0:
			first = row.Algorithm
		case row.Algorithm != first:
			return reqs, nil // the next pass
		}
		if row.Outcome == call.Failed {
			continue
		}
		reqs = append(reqs, fit.Request{Sent: row.Sent, Done: row.Done, Key: row.Key, Source: row.Source, Admitted: row.Outcome == call.Admitted})
	}
}

// FitPolicy is the policy of the best fit in dir's fit.json (fit.File),
// to measure dir's trace against when nothing else says under which
// policy it was made. ok is false when there is no fit.json, or its best
// fit holds no valid policy; a fit.json that cannot be read is an error.
func FitPolicy(dir string) (p algorithms.Policy, ok bool, err error) {
	f, err := fit.ReadResult(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, false, nil
	case err != nil:
		return p, false, err
	case f.Best.Limit <= 0 || f.Best.WindowNS <= 0:
		return p, false, nil
	}
	p, err = algorithms.Policy{Limit: f.Best.Limit, Window: time.Duration(f.Best.WindowNS), Burst: f.Best.Burst}.Validate()
	return p, err == nil, nil
}
