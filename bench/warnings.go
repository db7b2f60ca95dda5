package bench

import (
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// WarningKind is what a Warning is about.
type WarningKind int

// The kinds of Warning; the fields each sets are in brackets.
const (
	// WarnLate: the sender started Share percent of the calls more than
	// Threshold late [Share, Threshold, P99]; the machine, not the
	// limiter, was the bottleneck.
	WarnLate WarningKind = iota + 1
	// WarnBackendLate: as WarnLate, but a shared backend timed out on N
	// decisions meanwhile, holding the workers: the backend made the
	// calls late [Share, Threshold, P99, N, Backend, Detail: its first
	// error].
	WarnBackendLate
	// WarnDropped: N of Of arrivals were dropped at the in-flight cap
	// [N, Of, Cap].
	WarnDropped
	// WarnUnsent: the sender fell behind and stopped at the end of the
	// pass with N of Of arrivals not sent [N, Of].
	WarnUnsent
	// WarnAbandoned: N workers were still busy after the interrupt and
	// were given up on; their decisions are missing [N].
	WarnAbandoned
	// WarnUnserved: N shaper waits were still pending at the end and were
	// not awaited; their latency is the promised one [N].
	WarnUnserved
	// WarnCalibrationLate: even the no-op limiter was started late for
	// Share percent of the calls: the machine cannot hold the schedule
	// [Share].
	WarnCalibrationLate
	// WarnLossy: the key table forgot the state of N keys to take new
	// ones; they came back with a fresh quota [N].
	WarnLossy
	// WarnTableFull: N requests of new keys were refused because the key
	// table was full of keys it could not forget [N].
	WarnTableFull
	// WarnNoPolicy: the limiter's limit was neither given nor advertised:
	// no ratio or theory.
	WarnNoPolicy
	// WarnFailed: N of Of requests failed [N, Of, Kinds].
	WarnFailed
)

// Warning is one thing that makes a run's figures doubtful, stated as data:
// the command line phrases it and names its own flags. Fields a kind does
// not use are zero. It is a plain value.
type Warning struct {
	Kind WarningKind
	Run  string // the run's algorithm ("http" for an attack); "" for the calibration
	// HTTP marks a run of an executor (an attack): its calls are requests
	// to a server.
	HTTP      bool
	N, Of     int64
	Share     float64       // percent
	Threshold time.Duration // the lateness above which a call counts as late
	P99       time.Duration // the sender's lateness, 99th percentile
	Cap       int           // the in-flight cap
	Backend   string
	Detail    string
	Kinds     map[string]int64 // error kinds
	Limit     int64
	Window    time.Duration
}

// Warnings returns what makes the figures of runs doubtful, in run order:
// a late sender, drops, arrivals not sent, workers given up on, shaper
// waits not awaited, a late calibration, forgotten or refused keys, an
// attack without a policy or with failures. Nil when all is well.
func Warnings(runs []result.Run) []Warning {
	var ws []Warning
	var cal *result.Calibration
	for _, r := range runs {
		ws = append(ws, liveWarnings(r)...)
		if r.Live != nil && r.Live.Calibration != nil {
			cal = r.Live.Calibration
		}
		if r.LossyEvictions > 0 {
			ws = append(ws, Warning{Kind: WarnLossy, Run: r.Algorithm, N: r.LossyEvictions})
		}
		if r.TableFull > 0 {
			ws = append(ws, Warning{Kind: WarnTableFull, Run: r.Algorithm, N: r.TableFull})
		}
		if h := r.HTTP; h != nil {
			if h.PolicySource == PolicyNone {
				ws = append(ws, Warning{Kind: WarnNoPolicy, Run: r.Algorithm, HTTP: true})
			}
			if r.Errors > 0 {
				ws = append(ws, Warning{Kind: WarnFailed, Run: r.Algorithm, HTTP: true, N: r.Errors, Of: r.Offered, Kinds: r.ErrorKinds})
			}
		}
	}
	if cal != nil && cal.LatePct > 100*result.LateShareWarn {
		ws = append(ws, Warning{Kind: WarnCalibrationLate, Share: cal.LatePct})
	}
	return ws
}

// liveWarnings are the warnings about a live run's sender.
func liveWarnings(r result.Run) []Warning {
	l := r.Live
	if l == nil {
		return nil
	}
	var ws []Warning
	http := r.HTTP != nil
	if l.LatePct > 100*result.LateShareWarn {
		w := Warning{Kind: WarnLate, Run: r.Algorithm, HTTP: http, Share: l.LatePct, Threshold: time.Duration(l.LateAfterNS)}
		if l.Lateness != nil {
			w.P99 = time.Duration(l.Lateness.P99)
		}
		// Workers waiting out a backend's timeouts cannot start the
		// calls that are due meanwhile.
		if n := r.ErrorKinds["timeout"]; n > 0 && r.SharesState() && !http {
			w.Kind, w.N, w.Backend, w.Detail = WarnBackendLate, n, r.Backend, r.FirstError
		}
		ws = append(ws, w)
	}
	if l.Dropped > 0 {
		ws = append(ws, Warning{Kind: WarnDropped, Run: r.Algorithm, HTTP: http, N: l.Dropped, Of: l.Scheduled, Cap: l.MaxInFlight})
	}
	if l.Unsent > 0 {
		ws = append(ws, Warning{Kind: WarnUnsent, Run: r.Algorithm, HTTP: http, N: l.Unsent, Of: l.Scheduled})
	}
	if l.Abandoned > 0 {
		ws = append(ws, Warning{Kind: WarnAbandoned, Run: r.Algorithm, HTTP: http, N: int64(l.Abandoned)})
	}
	if l.Unserved > 0 {
		ws = append(ws, Warning{Kind: WarnUnserved, Run: r.Algorithm, N: l.Unserved})
	}
	return ws
}
