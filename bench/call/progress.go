package call

// Progress is told how far each pass of an engine has got, for progress
// bars; a nil Progress is silent. Implementations must be safe for
// concurrent use by the passes.
type Progress interface {
	// Pass starts a bar for one target; total is the run's length in
	// virtual (sim) or wall (live) nanoseconds, 0 when unknown.
	Pass(name string, total int64) Bar
}

// Bar is one pass's progress.
type Bar interface {
	// Update reports the instant reached (ns since start) and the
	// arrivals offered and admitted so far.
	Update(at, offered, admitted int64)
	// Done ends the bar; aborted is true when the pass stopped early.
	Done(aborted bool)
}

type silentBar struct{}

func (silentBar) Update(int64, int64, int64) {}
func (silentBar) Done(bool)                  {}

// StartBar starts p's bar for a pass of name, or a silent one when p is
// nil; total as Progress.Pass.
func StartBar(p Progress, name string, total int64) Bar {
	if p == nil {
		return silentBar{}
	}
	return p.Pass(name, total)
}
