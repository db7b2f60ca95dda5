package tracefile

import (
	"errors"
	"io"

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
