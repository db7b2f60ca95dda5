package main

import (
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/tracefile"
)

// startTrace begins requests.csv in out when on; nil when off.
func startTrace(out *outDir, on bool) (*tracefile.Writer, error) {
	if !on {
		return nil, nil
	}
	tw, err := tracefile.Create(out.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tracefile.Name, err)
	}
	return tw, nil
}

// endTrace puts the trace in place once result.json is written (which
// removes an earlier run's trace), and says where; err is the writing's
// error so far, returned unless it is nil and the trace's is not.
func (e *env) endTrace(tw *tracefile.Writer, out *outDir, err error) error {
	if tw == nil {
		return err
	}
	if cerr := tw.Close(); cerr != nil {
		if err == nil {
			err = cerr
		}
		return err
	}
	fmt.Fprintf(e.stdout, "trace:   %s (%d requests)\n", filepath.Join(out.Path, tracefile.Name), tw.Rows())
	return err
}
