package result

// Warnings returns what makes the figures of runs doubtful, in run order:
// a late sender, drops, arrivals not sent, workers given up on, shaper
// waits not awaited, a late calibration, forgotten or refused keys, an
// attack without a policy or with failures. Nil when all is well. Each
// names its run by its algorithm.
func Warnings(runs []Run) []Warning {
	var ws []Warning
	var cal *Calibration
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
				ws = append(ws, Warning{Kind: WarnFailed, Run: r.Algorithm, HTTP: true, N: r.Errors, Of: r.Offered, ErrorKinds: r.ErrorKinds})
			}
		}
	}
	if cal != nil && cal.LatePct > 100*LateShareWarn {
		ws = append(ws, Warning{Kind: WarnCalibrationLate, LatePct: cal.LatePct})
	}
	return ws
}

// liveWarnings are the warnings about a live run's sender.
func liveWarnings(r Run) []Warning {
	l := r.Live
	if l == nil {
		return nil
	}
	var ws []Warning
	http := r.HTTP != nil
	if l.LatePct > 100*LateShareWarn {
		w := Warning{Kind: WarnLate, Run: r.Algorithm, HTTP: http, LatePct: l.LatePct, LateAfterNS: l.LateAfterNS}
		if l.Lateness != nil {
			w.LatenessP99NS = l.Lateness.P99
		}
		// Workers waiting out a backend's timeouts cannot start the
		// calls that are due meanwhile.
		if n := r.ErrorKinds["timeout"]; n > 0 && r.SharesState() && !http {
			w.Kind, w.N, w.Backend, w.FirstError = WarnBackendLate, n, r.Backend, r.FirstError
		}
		ws = append(ws, w)
	}
	if l.Dropped > 0 {
		ws = append(ws, Warning{Kind: WarnDropped, Run: r.Algorithm, HTTP: http, N: l.Dropped, Of: l.Scheduled, MaxInFlight: l.MaxInFlight})
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
