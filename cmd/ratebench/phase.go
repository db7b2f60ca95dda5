package main

import (
	"flag"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// phaseFlags place the boundary workload's edges where the limiter's
// windows really start: -edge-offset shifts them, -align says whether
// windows start at multiples of W or at a key's first request.
type phaseFlags struct {
	edgeOffset time.Duration
	align      string
}

func (f *phaseFlags) register(fs *flag.FlagSet) {
	durationVar(fs, &f.edgeOffset, "edge-offset", 0, "boundary workload: shift every attacked window edge later by this, in [0, W)")
	fs.StringVar(&f.align, "align", workload.AlignEpoch, "boundary workload: where the limiter's windows start: epoch (multiples of W) or first-request (a key's first request, as INCR + EXPIRE)")
}

// apply sets the phase on s; an error, a usage error, when it is set for
// another workload than boundary (the spec's own check takes the values).
func (f *phaseFlags) apply(s *workload.Spec) error {
	if s.Name != "boundary" {
		switch {
		case f.edgeOffset != 0:
			return usagef("-edge-offset is for the boundary workload, not %s", s.Name)
		case f.align != workload.AlignEpoch:
			return usagef("-align is for the boundary workload, not %s", s.Name)
		}
		return nil
	}
	s.EdgeOffset, s.Align = f.edgeOffset, f.align
	return nil
}
