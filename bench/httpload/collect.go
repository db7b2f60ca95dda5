package httpload

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// collectEvery is how often the collector takes the workers' records;
// barEvery how often (in steps) it updates the progress bar; maxEarly
// bounds the records held while the policy is unknown.
const (
	collectEvery = 10 * time.Millisecond
	barEvery     = 10
	maxEarly     = 1 << 17
)

// collector takes the workers' records, measures them (counts and the
// three histograms) as it takes them, and feeds them to one Recorder in
// the order of their done instants. A record is fed once no worker can
// still add an earlier one: its instant is below every worker's floor and
// the clock read before the floors. Until the policy is known (the
// Recorder needs its window) fed records wait in early. Owned by one
// goroutine at a time.
type collector struct {
	p       *pass
	pending []record // taken, not fed yet, sorted by done
	spare   []record
	early   []record
	rec     *bench.Recorder
	policy  algorithms.Policy
	source  string
	bar     bench.Bar

	offered, responses, admitted, rejected, lateCount int64
	codes                                             map[int32]int64
	kinds                                             [numErrKinds]int64
	n5xx                                              int64
	retry                                             map[int32]int64
	unfed                                             map[string]int64 // per key: requests the Recorder did not see
	lastStart                                         int64
	lat, svc, late                                    *hdrhistogram.Histogram
	// lastFed is the instant of the last record fed; reordered counts
	// records that came after a later one was fed (their instant is then
	// raised): 0 unless the floors lie.
	lastFed, reordered int64
}

func newCollector(p *pass) *collector {
	c := &collector{
		p: p, codes: map[int32]int64{}, retry: map[int32]int64{}, unfed: map[string]int64{},
		lat: result.NewHistogram(), svc: result.NewHistogram(), late: result.NewHistogram(),
		bar: silent{},
	}
	if pr := p.cfg.Progress; pr != nil {
		c.bar = pr.Pass("http", int64(p.cfg.Workload.Duration))
	}
	if pol := p.cfg.Policy; pol.Limit > 0 && pol.Window > 0 {
		c.start(pol, "config")
	}
	return c
}

type silent struct{}

func (silent) Update(int64, int64, int64) {}
func (silent) Done(bool)                  {}

// loop steps every collectEvery until stop is closed.
func (c *collector) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(collectEvery)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := c.step(false)
		if i%barEvery == 0 {
			c.bar.Update(now, c.offered, c.admitted)
		}
	}
}

// step takes every worker's records and feeds those that are safe to
// feed; final (the workers are done, or given up on), all of them. The
// order matters: clock, then each worker's floor before its records.
func (c *collector) step(final bool) int64 {
	now := int64(time.Since(c.p.start))
	low := now
	if final {
		low = math.MaxInt64
	}
	for _, w := range c.p.snapshot() {
		if !final {
			low = min(low, w.floor.Load())
		}
		b := w.take(c.spare[:0])
		for i := range b {
			c.measure(&b[i])
		}
		c.pending = append(c.pending, b...)
		clear(b)
		c.spare = b
	}
	slices.SortFunc(c.pending, func(a, b record) int { return cmp.Compare(a.done, b.done) })
	n := 0
	for n < len(c.pending) && c.pending[n].done < low {
		n++
	}
	c.feed(c.pending[:n], final)
	m := copy(c.pending, c.pending[n:])
	clear(c.pending[m:])
	c.pending = c.pending[:m]
	return now
}

// measure counts one record and adds it to the histograms; a request
// aborted by an interrupt has no latency.
func (c *collector) measure(r *record) {
	c.offered++
	if r.status > 0 {
		c.responses++
		c.codes[r.status]++
		switch {
		case r.status >= 200 && r.status < 300:
			c.admitted++
		case r.status == 429:
			c.rejected++
		case r.status >= 500:
			c.n5xx++
		}
		if r.retryAfter != noRetryAfter {
			c.retry[r.retryAfter]++
		}
	}
	c.kinds[r.kind]++
	c.lastStart = max(c.lastStart, r.start)
	late := max(r.start-r.at, 0)
	if time.Duration(late) > c.p.cfg.LateAfter {
		c.lateCount++
	}
	if r.kind == errCanceled {
		return
	}
	_ = c.lat.RecordValue(min(max(r.done-r.at, 1), 3600e9))
	_ = c.svc.RecordValue(min(max(r.done-r.start, 1), 3600e9))
	_ = c.late.RecordValue(min(max(late, 1), 3600e9))
}

// feed gives records, in done order, to the Recorder, or keeps them in
// early while the policy is unknown; final decides it at last.
func (c *collector) feed(recs []record, final bool) {
	if c.rec == nil {
		c.early = append(c.early, recs...)
		if !c.decide(final) {
			return
		}
		recs, c.early = c.early, nil
	}
	for i := range recs {
		r := &recs[i]
		if r.done < c.lastFed {
			c.reordered++
			r.done = c.lastFed
		}
		c.lastFed = r.done
		a := workload.Arrival{At: time.Duration(r.done), Key: r.key, Cost: 1}
		switch {
		case r.kind == errNone && r.status >= 200 && r.status < 300:
			c.rec.Add(a, algorithms.Decision{Allowed: true}, nil)
		case r.kind == errNone && r.status == 429:
			c.rec.Add(a, algorithms.Decision{}, nil)
		default: // errors, 5xx and other statuses: neither admitted nor rejected
			c.unfed[r.key]++
		}
	}
}

// decide starts the Recorder once the policy is known: from the config,
// completed by the server's RateLimit-Policy field; or, when no response
// carried one within policyWait or maxEarly records, or at the end, from
// the offered rate.
func (c *collector) decide(final bool) bool {
	cfg := c.p.cfg.Policy
	if got := c.p.policy.Load(); got != nil {
		pol, source := *got, "RateLimit-Policy"
		if cfg.Limit > 0 || cfg.Window > 0 || cfg.Burst > 0 {
			source = "config and RateLimit-Policy"
		}
		if cfg.Limit > 0 {
			pol.Limit, pol.Burst = cfg.Limit, cfg.Limit
		}
		if cfg.Window > 0 {
			pol.Window = cfg.Window
		}
		if cfg.Burst > 0 {
			pol.Burst = cfg.Burst
		}
		c.start(pol, source)
		return true
	}
	n := len(c.early)
	if !final && (n == 0 || time.Duration(c.early[n-1].done-c.early[0].done) < policyWait && n < maxEarly) {
		return false
	}
	pol := fallbackPolicy(c.p.cfg.Workload)
	if c.p.cfg.Closed && n > 1 { // the rate so far
		pol.Limit = max(int64(float64(n)/time.Duration(c.early[n-1].done-c.early[0].done+1).Seconds()), 1)
	}
	if cfg.Limit > 0 {
		pol.Limit = cfg.Limit
	}
	if cfg.Window > 0 {
		pol.Window = cfg.Window
	}
	c.start(pol, "none")
	return true
}

// start builds the Recorder for pol.
func (c *collector) start(pol algorithms.Policy, source string) {
	if c.p.cfg.Policy.Burst > 0 {
		pol.Burst = c.p.cfg.Policy.Burst
	}
	pol = pol.WithDefaults()
	c.policy, c.source = pol, source
	c.p.wantPolicy.Store(false)
	t := bench.Target{Name: "http", Backend: hostOf(c.p.t), Replicas: 1}
	if e, err := all.Lookup(c.p.cfg.Algorithm); err == nil {
		t.Theory = e.Theory(pol)
	}
	c.rec = bench.NewRecorder(t, pol, binWidth(pol, c.p.cfg.Workload.Duration))
}

// result turns what the attack measured into a Result.
func (p *pass) result(s schedule) Result {
	c := s.coll
	c.bar.Done(s.interrupted)
	cfg := p.cfg
	span := cfg.Workload.Duration
	switch {
	case s.interrupted && span > 0:
		span = min(s.end, span)
	case s.interrupted:
		span = s.end
	case span <= 0: // a whole replay trace
		span = s.lastAt + 1
	}
	span = max(span, 1)
	run := c.rec.Finish(c.policy, int64(span))
	run.DisagreementPct = -1
	run.Latency, run.LatencyHDR = result.PercentilesOf(c.lat), result.EncodeHistogram(c.lat)
	run.Offered, run.OfferedCost = c.offered, c.offered
	run.Errors = c.n5xx
	for k := errTimeout; k < numErrKinds; k++ {
		run.Errors += c.kinds[k]
	}
	c.outcomes(&run)
	c.fixKeys(&run)
	run.Live = c.liveStats(s, span)
	run.HTTP = c.httpStats(s)
	res := Result{Run: run, Policy: c.policy}
	res.Warnings = warnings(run, c.source, c.policy)
	return res
}

// outcomes fills the status codes and error kinds.
func (c *collector) outcomes(run *result.Run) {
	if len(c.codes) > 0 {
		run.StatusCodes = make(map[string]int64, len(c.codes))
		for code, n := range c.codes {
			run.StatusCodes[strconv.Itoa(int(code))] = n
		}
	}
	run.ErrorKinds = nil
	for k := errTimeout; k < numErrKinds; k++ {
		if n := c.kinds[k]; n > 0 {
			if run.ErrorKinds == nil {
				run.ErrorKinds = map[string]int64{}
			}
			run.ErrorKinds[kindNames[k]] = n
		}
	}
	if c.n5xx > 0 {
		if run.ErrorKinds == nil {
			run.ErrorKinds = map[string]int64{}
		}
		run.ErrorKinds[KindHTTP5xx] = c.n5xx
	}
}

// fixKeys adds to the per-key table the requests the Recorder did not see
// (errors and statuses other than 2xx and 429).
func (c *collector) fixKeys(run *result.Run) {
	if len(c.unfed) == 0 {
		return
	}
	byKey := make(map[string]int, len(run.Keys))
	for i, k := range run.Keys {
		byKey[k.Key] = i
	}
	added := 0
	for k, n := range c.unfed {
		if i, ok := byKey[k]; ok {
			run.Keys[i].Offered += n
			continue
		}
		added++
		if run.KeyCount+added <= result.MaxKeysReported && (run.Keys != nil || run.KeyCount == 0) {
			run.Keys = append(run.Keys, result.KeyCount{Key: k, Offered: n})
		}
	}
	run.KeyCount += added
	if run.KeyCount > result.MaxKeysReported {
		run.Keys = nil
	}
	slices.SortFunc(run.Keys, func(a, b result.KeyCount) int { return cmp.Compare(a.Key, b.Key) })
}

// liveStats fills the sender's measures, as the live engine names them.
func (c *collector) liveStats(s schedule, span time.Duration) *result.LiveStats {
	cfg := c.p.cfg
	l := &result.LiveStats{
		Workers: c.p.connections(), MaxInFlight: cfg.MaxInFlight, LateAfterNS: int64(cfg.LateAfter),
		Scheduled: c.offered + s.dropped + s.held + s.unsent, Dropped: s.dropped, Unsent: s.unsent,
		SpanNS: int64(span), WallNS: int64(s.wall), Late: c.lateCount, Abandoned: s.abandoned,
		Reordered: c.reordered,
	}
	l.Service, l.ServiceHDR = result.PercentilesOf(c.svc), result.EncodeHistogram(c.svc)
	l.Lateness, l.LatenessHDR = result.PercentilesOf(c.late), result.EncodeHistogram(c.late)
	if c.offered > 0 {
		l.LatePct = 100 * float64(c.lateCount) / float64(c.offered)
	}
	l.OfferedRatePerS = float64(l.Scheduled) / span.Seconds()
	l.AchievedRatePerS = float64(c.offered) / max(span, time.Duration(c.lastStart), 1).Seconds()
	return l
}

// httpStats fills what only an HTTP run measures.
func (c *collector) httpStats(s schedule) *result.HTTPStats {
	p := c.p
	h := &result.HTTPStats{
		URL: p.cfg.URL, Method: p.t.method, Client: p.cfg.Client, KeyHeader: p.t.keyHeader,
		Responses: c.responses, HeldBack: s.held, PolicySource: c.source, ServerAlgorithm: p.cfg.Algorithm,
		HonorRetryAfter: p.cfg.HonorRetryAfter, Closed: p.cfg.Closed, Engine: EngineGoroutines,
	}
	if p.ep != nil {
		h.Engine = EngineEpoll
	}
	if c.responses > 0 {
		h.TooManyPct = 100 * float64(c.rejected) / float64(c.responses)
	}
	if len(c.retry) > 0 {
		h.RetryAfterS = make(map[string]int64, len(c.retry))
		for v, n := range c.retry {
			k := strconv.Itoa(int(v))
			if v == badRetryAfter {
				k = "invalid"
			}
			h.RetryAfterS[k] = n
		}
	}
	if p.std != nil {
		h.Connections = p.std.dials.Load()
	}
	for _, w := range p.snapshot() {
		h.Connections += w.dials.Load()
	}
	done := c.offered - c.kinds[errCanceled]
	h.CompletedRatePerS = float64(done) / max(s.wall, 1).Seconds()
	return h
}

// warnings says what makes a figure doubtful: a late sender, drops, no
// policy, workers given up on, errors.
func warnings(run result.Run, source string, pol algorithms.Policy) []string {
	var ws []string
	l := run.Live
	if source == "none" {
		ws = append(ws, fmt.Sprintf("the server sent no RateLimit-Policy field and -limit/-window were not given: burst ratios are against %d per %v (the offered rate)",
			pol.Limit, pol.Window))
	}
	if l.LatePct > 100*bench.LateShareWarn {
		ws = append(ws, fmt.Sprintf("the sender started %.1f%% of requests more than %v late (lateness p99 %v): this machine, not the server, was the bottleneck; lower -rate or attack from another host",
			l.LatePct, time.Duration(l.LateAfterNS), time.Duration(l.Lateness.P99)))
	}
	if l.Dropped > 0 {
		ws = append(ws, fmt.Sprintf("%d of %d arrivals (%.2f%%) dropped at -max-inflight %d: the server answered too slowly for the rate",
			l.Dropped, l.Scheduled, 100*float64(l.Dropped)/float64(max(l.Scheduled, 1)), l.MaxInFlight))
	}
	if l.Unsent > 0 {
		ws = append(ws, fmt.Sprintf("the sender fell behind and stopped at the end of the attack with %d of %d arrivals (%.2f%%) not sent",
			l.Unsent, l.Scheduled, 100*float64(l.Unsent)/float64(max(l.Scheduled, 1))))
	}
	if l.Abandoned > 0 {
		ws = append(ws, fmt.Sprintf("%d connections were still busy after the interrupt and were given up on; their requests are missing", l.Abandoned))
	}
	if run.Errors > 0 {
		ws = append(ws, fmt.Sprintf("%d of %d requests failed (%s)", run.Errors, run.Offered, kindsText(run.ErrorKinds)))
	}
	return ws
}

// kindsText is "connection_refused 12, timeout 3", largest first.
func kindsText(m map[string]int64) string {
	type kv struct {
		k string
		n int64
	}
	var kvs []kv
	for k, n := range m {
		kvs = append(kvs, kv{k, n})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	s := ""
	for i, x := range kvs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", x.k, x.n)
	}
	return s
}
