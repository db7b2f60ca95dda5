// Package probe finds out what rate limiter an HTTP service runs, from
// outside: a few designed, bounded experiments (a burst after idle for the
// capacity, sustained load for the rate, overload at multiples of it,
// recovery after idle, a sweep for window edges, and several keys or
// client addresses for the scope), then a fit of every model to all the
// answers (package fit).
package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
)

// Config is a probe's target and bounds.
type Config struct {
	Client      *httpexec.Client
	Connections int // at most this many connections; 0 means 64
	// Keys are sent round-robin in the scope experiments (the client's
	// key header, or its source addresses, tell them apart); 1 probes one
	// client's limit only.
	Keys int
	// Limit and Window, when set, are what the user believes the policy
	// to be: they size the first burst and add the window to those tried.
	Limit  int64
	Window time.Duration
	// EdgeOffset and FirstRequest place the boundary experiment's edges:
	// EdgeOffset after each multiple of the window on the Unix clock, or,
	// with FirstRequest, a window after a key's first request.
	EdgeOffset   time.Duration
	FirstRequest bool
	// RejectStatuses mean "rejected by the limiter"; nil: the probe finds
	// them (429 when seen, else the non-2xx status the first burst drew).
	RejectStatuses []int
	// MaxRequests and MaxDuration bound the whole probe: 0 means 10,000
	// and one minute.
	MaxRequests int64
	MaxDuration time.Duration
	// Trace, when set, receives every request on one timeline from the
	// first experiment's start, outcomes as finally classified.
	Trace call.Tracer
	// Log, when set, gets a line per experiment.
	Log      io.Writer
	Progress call.Progress
}

// Outcome is what a probe measured and found.
type Outcome struct {
	Runs   []result.Run // one per experiment, named probe-<experiment>
	Probe  *result.Probe
	Fit    *fit.Result
	Policy algorithms.Policy // the best fit's
	Start  time.Time         // the first experiment's start
}

// ErrNoLimit: the service admitted everything the probe could send.
var ErrNoLimit = errors.New("the service admitted every request the probe sent: no limit reached within its bounds")

const (
	defaultMaxRequests = 10000
	defaultMaxDuration = time.Minute
	defaultConnections = 64
)

// prober runs the experiments one after the other.
type prober struct {
	cfg      Config
	reject   []int
	found    bool
	used     int64         // requests sent so far
	elapsed  time.Duration // wall time so far
	start    time.Time
	rows     []call.Row // every request, on the first start's timeline
	runEnds  []int      // per run of out.Runs: the end of its rows in rows
	adv      *algorithms.Policy
	measured algorithms.Policy // the runs' policy: their window is W of their most admitted
	out      Outcome
}

// Run probes the service.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	cfg.MaxRequests = cmp.Or(cfg.MaxRequests, defaultMaxRequests)
	cfg.MaxDuration = cmp.Or(cfg.MaxDuration, defaultMaxDuration)
	cfg.Connections = cmp.Or(cfg.Connections, defaultConnections)
	cfg.Keys = max(cfg.Keys, 1)
	p := &prober{cfg: cfg, reject: cfg.RejectStatuses}
	capacity, err := p.capacity(ctx)
	if err != nil {
		return p.partial(err)
	}
	rate, err := p.rate(ctx, capacity)
	if err != nil {
		return p.partial(err)
	}
	if err := p.model(ctx, capacity, rate); err != nil {
		return p.partial(err)
	}
	if err := p.boundary(ctx, capacity, rate); err != nil {
		return p.partial(err)
	}
	return p.finish(capacity, rate)
}

// partial returns what ran when an experiment failed or was interrupted,
// its rows classified and traced, measured against the runs' policy.
func (p *prober) partial(err error) (*Outcome, error) {
	if len(p.out.Runs) == 0 {
		return nil, err
	}
	p.classify()
	p.out.Policy = p.measured
	return &p.out, err
}

// capacity sends bursts at once, four times larger while everything is
// admitted (up to a third of the request budget),
// and returns what the first limited burst admitted. The first burst also
// names the reject status when it was not given.
func (p *prober) capacity(ctx context.Context) (int64, error) {
	n := max(2*p.cfg.Limit, 100)
	wait, grown := time.Duration(0), 0
	for {
		n = min(n, p.cfg.MaxRequests/3)
		s := newSchedule()
		s.idle(wait)
		s.burst(s.at, n, 1)
		rows, err := p.experiment(ctx, "capacity", s)
		if err != nil {
			return 0, err
		}
		p.burstSpread(rows)
		if p.reject == nil {
			p.findReject(rows)
		}
		admitted, rejected := p.count(rows)
		if admitted == 0 && rejected > 0 && wait < 4*time.Second {
			// Still limited by earlier traffic: wait for it to pass.
			wait = max(2*wait, time.Second)
			continue
		}
		if rejected > 0 {
			return max(admitted, 1), nil
		}
		if grown == 4 || n == p.cfg.MaxRequests/3 {
			return 0, fmt.Errorf("%w (the largest burst, %d at once, was admitted whole); raise -max-requests (now %d) to three times the limit you expect",
				ErrNoLimit, n, p.cfg.MaxRequests)
		}
		// A second's rest first: a window may end, a bucket refill,
		// so that the larger burst finds the quota the smaller took.
		n, wait = n*4, time.Second
		grown++
	}
}

// burstSpread says when a burst took long to leave: over too few
// connections it reaches the service spread out, and a bucket refills
// meanwhile, so its capacity reads high.
func (p *prober) burstSpread(rows []call.Row) {
	if len(rows) == 0 {
		return
	}
	first, last := rows[0].Sent, rows[0].Sent
	for _, r := range rows {
		first, last = min(first, r.Sent), max(last, r.Sent)
	}
	if spread := last - first; spread > 20*time.Millisecond {
		p.logf("probe: capacity: the burst of %d took %v to leave over %d connections, so a bucket's capacity may read high; raise -connections to send it at once",
			len(rows), result.Readable(spread), p.cfg.Connections)
	}
}

// findReject names the reject status from the answers to a burst: 429
// when seen, else the most frequent non-2xx status.
func (p *prober) findReject(rows []call.Row) {
	seen := map[int]int{}
	for _, r := range rows {
		if r.Status >= 300 {
			seen[r.Status]++
		}
	}
	if len(seen) == 0 { // all admitted: the next burst tells
		return
	}
	p.found = true
	if seen[429] > 0 {
		p.reject = []int{429}
		return
	}
	codes := slices.Sorted(maps.Keys(seen))
	best := slices.MaxFunc(codes, func(a, b int) int { return cmp.Compare(seen[a], seen[b]) })
	p.reject = []int{best}
}

// rate sends at a steady rate above the capacity per second until the
// service rejects part of it, and returns what it admitted per ns in the
// last two thirds: the long-run rate.
func (p *prober) rate(ctx context.Context, capacity int64) (float64, error) {
	r := max(3.7*float64(capacity), 40) // per second, no whole multiple of the capacity
	const span = 3 * time.Second
	for try := 0; ; try++ {
		room := float64(p.budget()) / span.Seconds() / 2
		capped := r >= room
		r = min(r, room)
		s := newSchedule()
		s.idle(p.idleFor(capacity, 0))
		from := s.at
		s.constant(r, span, 1)
		rows, err := p.experiment(ctx, "rate", s)
		if err != nil {
			return 0, err
		}
		var admitted int64
		tail := from + span/3
		for _, row := range rows {
			if row.Intended >= tail && p.admitted(row) {
				admitted++
			}
		}
		got := float64(admitted) / (span - span/3).Seconds()
		if got < 0.9*r || try == 2 {
			if got < 0.05*r {
				// Starved: a limiter that counts denied requests
				// admits nothing under steady overload, or its window
				// is longer than the span.
				p.logf("probe: rate: %d of a steady %.3g/s for %v admitted after the first second: the service seems to count denied requests; stepping the rate up from below instead",
					admitted, r, result.Readable(span))
				return p.steps(ctx, capacity, r)
			}
			return got / 1e9, nil
		}
		if capped {
			p.logf("probe: rate: every request of a steady %.4g/s admitted, the most -max-requests (now %d) leaves room for: the rate is above that; raise -max-requests to about ten times the limit",
				r, p.cfg.MaxRequests)
			return got / 1e9, nil
		}
		r *= 4
	}
}

// steps finds the rate of a limiter that starves a client above its
// rate: after an idle gap long enough to forget, a staircase of steady
// rates from a fifth of the capacity per second up by a third each step,
// each step as long as the capacity takes to send at its rate (1s to 3s),
// to below the rate that starved. The rate is the geometric mean of the
// last step admitted whole and the first with rejections; per ns.
func (p *prober) steps(ctx context.Context, capacity int64, starved float64) (float64, error) {
	var rates []float64
	var bounds []time.Duration // each step's end
	s := newSchedule()
	s.idle(5 * time.Second)
	for r := float64(capacity) / 5; r < starved && len(rates) < 10; r *= 4.0 / 3 {
		step := min(max(time.Duration(float64(capacity)/r*1e9), time.Second), 3*time.Second)
		s.constant(r, step, 1)
		rates, bounds = append(rates, r), append(bounds, s.at)
	}
	if len(rates) == 0 {
		return float64(capacity) / 3e9, nil
	}
	rows, err := p.experiment(ctx, "rate-steps", s)
	if err != nil {
		return 0, err
	}
	rejected := make([]int, len(rates))
	for _, row := range rows {
		if i, _ := slices.BinarySearch(bounds, row.Intended+1); i < len(rates) && p.rejected(row) {
			rejected[i]++
		}
	}
	first := slices.IndexFunc(rejected, func(n int) bool { return n > 0 })
	switch first {
	case -1:
		p.logf("probe: rate-steps: every step admitted whole, up to %.3g/s", rates[len(rates)-1])
		return rates[len(rates)-1] / 1e9, nil
	case 0:
		p.logf("probe: rate-steps: rejections from the first step on, at %.3g/s", rates[0])
		return rates[0] * 3 / 4 / 1e9, nil
	}
	p.logf("probe: rate-steps: admitted whole at %.3g/s, rejections from %.3g/s on", rates[first-1], rates[first])
	return math.Sqrt(rates[first-1]*rates[first]) / 1e9, nil
}

// logf writes a line to the log, if there is one.
func (p *prober) logf(format string, a ...any) {
	if p.cfg.Log != nil {
		fmt.Fprintf(p.cfg.Log, format+"\n", a...)
	}
}

// model runs the experiments that tell the models apart, in one schedule:
// recovery after idle, overload at about 1.5 and 2.3 times the rate, load
// below it, and overload long enough to cross window edges; with several
// keys, each key at those rates. The steady overloads are at rates that
// are no whole multiple of the rate found: at a whole multiple a bucket's
// admissions fall right on its refills, every one too close to call.
func (p *prober) model(ctx context.Context, capacity int64, rate float64) error {
	k := p.cfg.Keys
	perS := rate * 1e9
	w := time.Duration(float64(capacity) / rate) // a window's length if it is one
	gap := p.idleFor(capacity, rate)
	s := newSchedule()
	s.idle(gap)
	s.burst(s.at, 2*capacity*int64(k), k)
	s.idle(gap)
	s.poisson(1.5*perS*float64(k), 3*time.Second, k, 1)
	s.idle(gap)
	s.constant(2.3*perS*float64(k), 2*time.Second, k)
	s.idle(gap)
	s.constant(0.8*perS*float64(k), 2*time.Second, k)
	s.idle(gap)
	s.constant(3.3*perS*float64(k), min(max(2*w+w/3, time.Second), 4*time.Second), k)
	_, err := p.experiment(ctx, "model", s)
	return err
}

// boundary attacks window edges: after an idle gap, the capacity just
// before an edge and again just after, three times, so that a window that
// restarts its count at an edge shows twice its capacity in a span far
// shorter than the window, and the fit sees where the edges are. The
// window is -window, or else the capacity over the rate (a fixed window's
// length); edges are multiples of it on the Unix clock shifted by
// EdgeOffset, tried at that phase and a third and two thirds of the
// window later (the service's clock may not be the epoch's), or with
// FirstRequest a window after an opening request. It is skipped when that
// window is under 20ms or over 5s, or the bounds leave too little.
func (p *prober) boundary(ctx context.Context, capacity int64, rate float64) error {
	w := p.cfg.Window
	if w == 0 {
		w = time.Duration(float64(capacity) / rate).Round(time.Millisecond)
	}
	k := p.cfg.Keys
	n := 6 * capacity * int64(k)
	gap := p.idleFor(capacity, rate)
	if why := p.skipBoundary(w, n, 3*(gap+2*w)); why != "" {
		p.logf("probe: boundary: skipped: %s", why)
		return nil
	}
	delta := max(w/50, 2*time.Millisecond)
	s := newSchedule()
	for i := range 3 {
		s.idle(gap)
		var edge time.Duration
		if p.cfg.FirstRequest {
			s.burst(s.at, int64(k), k) // opens each key's window
			edge = s.at + w
		} else {
			s.align = w
			base := p.cfg.EdgeOffset + time.Duration(i)*w/3
			edge = base + (s.at+delta-base+w-1)/w*w
		}
		s.burst(edge-delta, capacity*int64(k), k)
		s.burst(edge+delta, capacity*int64(k), k)
		s.at = edge + delta
	}
	_, err := p.experiment(ctx, "boundary", s)
	return err
}

// skipBoundary says why the boundary experiment cannot run for window w
// with n requests over about span, or "" when it can.
func (p *prober) skipBoundary(w time.Duration, n int64, span time.Duration) string {
	left := p.cfg.MaxDuration - p.elapsed
	switch {
	case w < 20*time.Millisecond:
		return fmt.Sprintf("the window the rate and capacity imply, %v, is under 20ms: too short to aim at its edges from here", result.Readable(w))
	case w > 5*time.Second:
		return fmt.Sprintf("the window the rate and capacity imply, %v, is over 5s; give -window if you know it", result.Readable(w))
	case n > p.budget()/2:
		return fmt.Sprintf("it needs %d requests and %d are left; raise -max-requests (now %d)", n, p.budget(), p.cfg.MaxRequests)
	case p.elapsed+span > p.cfg.MaxDuration:
		return fmt.Sprintf("it needs about %v and %v is left; raise -max-duration (now %v)", result.Readable(span), result.Readable(max(left, 0)), p.cfg.MaxDuration)
	}
	return ""
}

// idleFor is how long to wait for a limiter to forget: a fifth more than
// its capacity takes to refill (a bucket's, or a window's length), between
// 300ms and five seconds.
func (p *prober) idleFor(capacity int64, rate float64) time.Duration {
	d := time.Second
	if rate > 0 {
		d = time.Duration(1.2 * float64(capacity) / rate)
	}
	if p.cfg.Window > 0 {
		d = max(d, p.cfg.Window+p.cfg.Window/5)
	}
	return min(max(d, 300*time.Millisecond), 5*time.Second)
}

// budget is how many requests the probe may still send.
func (p *prober) budget() int64 { return max(p.cfg.MaxRequests-p.used, 0) }

// experiment runs one schedule against the service and returns its rows
// on the schedule's own timeline; the probe keeps them on its own, from
// the first experiment's start.
func (p *prober) experiment(ctx context.Context, name string, s *schedule) ([]call.Row, error) {
	if int64(len(s.arrivals)) > p.budget() {
		s.thin(float64(p.budget()) / float64(len(s.arrivals)))
	}
	if len(s.arrivals) == 0 || p.elapsed+s.span() > p.cfg.MaxDuration {
		return nil, fmt.Errorf("%s: the probe's bounds (%d requests, %v) are spent; raise -max-requests or -max-duration", name, p.cfg.MaxRequests, p.cfg.MaxDuration)
	}
	var rows rowBuffer
	cfg := live.Config{
		Config:      bench.Config{Workload: s.source("probe-" + name), Trace: &rows, Progress: p.cfg.Progress},
		MaxInFlight: 1 << 16, Connections: p.cfg.Connections, AlignStart: s.align,
	}
	exec := httpexec.NewExecutor(p.cfg.Client, p.cfg.Connections, cfg.MaxInFlight, p.rejectOr429())
	began := time.Now()
	run, pol, err := live.RunExecutor(ctx, cfg, call.Target{Name: "probe-" + name, Backend: "http"}, exec)
	exec.Close()
	p.elapsed += time.Since(began)
	if p.start.IsZero() {
		p.start = time.Unix(0, run.StartUnixNS)
		p.out.Start = p.start
	}
	shift := time.Duration(run.StartUnixNS - p.start.UnixNano())
	for _, r := range rows {
		r.Intended += shift
		r.Sent += shift
		r.Done += shift
		p.rows = append(p.rows, r)
	}
	p.used += int64(len(rows))
	if run.Offered > 0 {
		run.HTTP.RejectStatuses = p.rejectOr429()
		p.out.Runs = append(p.out.Runs, run)
		p.runEnds = append(p.runEnds, len(p.rows))
		if run.HTTP.PolicySource == result.PolicyFromServer && p.adv == nil {
			p.adv = &pol
		}
		p.measured = pol
	}
	if p.cfg.Log != nil {
		adm, rej := p.count(rows)
		fmt.Fprintf(p.cfg.Log, "probe: %s: %d requests over %v: %d admitted, %d rejected\n", name, len(rows), result.Readable(s.span()), adm, rej)
	}
	if run.Live != nil && run.Live.Unsent+run.Live.Dropped > 0 {
		p.logf("probe: %s: %d of %d requests were not sent (the sender fell behind, or more than %d were in flight); the fit has the rest",
			name, run.Live.Unsent+run.Live.Dropped, len(s.arrivals), cfg.MaxInFlight)
	}
	return rows, err
}

func (p *prober) rejectOr429() []int {
	if p.reject == nil {
		return []int{429}
	}
	return p.reject
}

// admitted reports whether a row's answer was an admission.
func (p *prober) admitted(r call.Row) bool { return r.Status >= 200 && r.Status < 300 }

// rejected reports whether a row's answer was a rejection, by the reject
// statuses as now known.
func (p *prober) rejected(r call.Row) bool { return slices.Contains(p.rejectOr429(), r.Status) }

func (p *prober) count(rows []call.Row) (admitted, rejected int64) {
	for _, r := range rows {
		switch {
		case p.admitted(r):
			admitted++
		case p.rejected(r):
			rejected++
		}
	}
	return admitted, rejected
}

// longFit is the size of a trace whose fit is announced: from about this
// many requests on it takes long enough for a person to wonder.
const longFit = 50000

// finish classifies every row by the reject statuses found, hands the
// rows to the trace, fits them and says what the service is.
func (p *prober) finish(capacity int64, rate float64) (*Outcome, error) {
	p.classify()
	var reqs []fit.Request
	for _, r := range p.rows {
		if r.Outcome != call.Failed {
			reqs = append(reqs, fit.Request{Sent: r.Sent, Done: r.Done, Key: r.Key, Source: r.Source, Admitted: r.Outcome == call.Admitted})
		}
	}
	opts := fit.Options{StartUnixNS: p.start.UnixNano(), Windows: []time.Duration{time.Duration(float64(capacity) / rate)}, RatesPerS: []float64{rate * 1e9}}
	if p.cfg.Window > 0 {
		opts.Windows = append(opts.Windows, p.cfg.Window)
	}
	if len(reqs) >= longFit {
		p.logf("probe: fit: %s requests to replay through every model; at this size that takes minutes", result.Group(int64(len(reqs))))
	}
	f, err := fit.Run(reqs, opts)
	if err != nil {
		return &p.out, err
	}
	p.out.Fit = f
	pr := &result.Probe{RejectStatuses: p.rejectOr429(), RejectFound: p.found}
	for _, run := range p.out.Runs {
		if run.HTTP.Headers != nil {
			if pr.Headers == nil {
				pr.Headers = &result.HeaderStats{}
			}
			pr.Headers.Add(run.HTTP.Headers)
		}
	}
	if p.adv != nil {
		adv := result.PolicyOf(*p.adv)
		pr.Advertised = &adv
	}
	SetFit(pr, f)
	p.out.Probe = pr
	p.out.Policy = p.measured
	if fitted, ok := inWindow(f, p.measured.Window); ok {
		// The runs' most admitted in a span W can now be read against
		// the fitted limit.
		p.out.Policy = fitted
		for i := range p.out.Runs {
			r := &p.out.Runs[i]
			r.BurstRatio = float64(r.MaxAdmittedInWindow) / float64(fitted.Limit)
			if r.HTTP.PolicySource == result.PolicyNone {
				r.HTTP.PolicySource = result.PolicyFromFit
			}
		}
	}
	return &p.out, nil
}

// SetFit puts what the fit f found into a probe's record: the best fit
// and the others, the sentence, how sure it is, and whether the policy
// the service advertised is the one fitted. A refit of a probe's trace
// calls it too.
func SetFit(pr *result.Probe, f *fit.Result) {
	pr.Best, pr.Fits, pr.Requests, pr.UncertaintyNS = f.Best, f.Fits, f.Requests, f.UncertaintyNS
	pr.Sentence, pr.Confidence, pr.Doubts, pr.Scopes = f.Sentence(), f.Confidence, f.Doubts, f.Scopes
	pr.AdvertisedMatches = nil
	if pr.Advertised != nil {
		m := f.Best.Matches(*pr.Advertised)
		pr.AdvertisedMatches = &m
	}
}

// inWindow is the fitted policy in the window w the runs were measured
// in: a window model's own when it is w, a bucket's rate as a whole limit
// per w; false when the fit cannot be said per w.
func inWindow(f *fit.Result, w time.Duration) (algorithms.Policy, bool) {
	b := f.Best
	rate := float64(b.Limit) / float64(b.WindowNS) // per ns
	switch {
	case w <= 0:
		return algorithms.Policy{}, false
	case f.Shaper:
		rate, b.Burst = f.RatePerS/1e9, 0
	case !b.RateOnly():
		return algorithms.Policy{Limit: b.Limit, Window: w, Burst: b.Burst}, b.WindowNS == int64(w)
	}
	l := rate * float64(w)
	if r := math.Round(l); r >= 1 && math.Abs(l-r) <= 0.001*l {
		return algorithms.Policy{Limit: int64(r), Window: w, Burst: b.Burst}.WithDefaults(), true
	}
	return algorithms.Policy{}, false
}

// classify classifies every row by the reject statuses as finally found
// (an experiment before they were known counted them as errors), counts
// each run's rejections and errors again from its rows, and hands the
// rows to the trace, on one timeline as one pass.
func (p *prober) classify() {
	reject, from := p.rejectOr429(), 0
	for i := range p.out.Runs {
		run := &p.out.Runs[i]
		run.Rejected, run.Errors, run.ErrorKinds = 0, 0, nil
		for j := from; j < p.runEnds[i]; j++ {
			r := &p.rows[j]
			switch {
			case p.admitted(*r):
				r.Outcome, r.ErrorKind = call.Admitted, ""
			case p.rejected(*r):
				r.Outcome, r.ErrorKind = call.Rejected, ""
				run.Rejected++
			default:
				if r.Outcome != call.Failed { // a rejection by a status the probe found was not one
					r.Outcome, r.ErrorKind = call.Failed, httpexec.StatusKind(r.Status)
				}
				run.Errors++
				run.ErrorKinds = addKind(run.ErrorKinds, r.ErrorKind)
			}
		}
		run.RejectedCost = run.Rejected
		run.HTTP.RejectStatuses = reject
		if run.HTTP.Responses > 0 {
			run.HTTP.TooManyPct = 100 * float64(run.Rejected) / float64(run.HTTP.Responses)
		}
		from = p.runEnds[i]
	}
	for i := range p.rows {
		p.rows[i].Algorithm = "probe"
		if p.cfg.Trace != nil {
			p.cfg.Trace.Row(p.rows[i])
		}
	}
}

func addKind(m map[string]int64, k string) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[k]++
	return m
}

// rowBuffer keeps an experiment's rows.
type rowBuffer []call.Row

func (r *rowBuffer) Row(row call.Row) { *r = append(*r, row) }
