package live

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
)

// collectEvery is how often the collector moves decisions into the
// summary; barEvery how often (in collector steps) it updates the bar.
// While an executor pass waits for the policy its answers advertise, the
// decisions wait too, for at most policyWait of answers or maxEarly of
// them.
const (
	collectEvery = 10 * time.Millisecond
	barEvery     = 10
	policyWait   = time.Second
	maxEarly     = 1 << 17
)

// liveCollector feeds the workers' decisions to one measure.Summary in instant
// order, as it needs. Each worker's chunks are in order; a decision is fed
// once no worker can still hand over an earlier one: its instant is at
// most every worker's floor and the clock read before the floors (a call
// not yet started will read the clock later). Memory is thus bounded by
// the decisions of about chunkSize per worker or flushAge, whichever
// comes first. It takes only what its pass hands it (collectorIn) and
// calls no stage's methods. Owned by one goroutine at a time.
type liveCollector struct {
	in       collectorIn
	sum      *measure.Summary // nil until the policy is known
	policy   algorithms.Policy
	source   string      // PolicyFrom..., for an executor pass
	early    []liveRec   // decisions in order, waiting for the policy
	trace    *traceOrder // the rows in send order, to the trace and headers
	firstErr error
	queues   [][]liveRec
	heads    []int
	scratch  []liveRec
	last     int64
	// reordered counts decisions that came after a later one was fed
	// (their instant is then raised); it stays 0 unless the floors lie.
	reordered int64
}

// collectorIn is what a pass hands its collector: what to build the
// summary from, and the gauges, channels and leaves it reads, each safe
// for concurrent use. A plain value.
type collectorIn struct {
	cfg      Config
	target   call.Target
	executor bool               // an executor pass: its summary counts answers
	ref      algorithms.Limiter // the exact reference, handed to the summary
	gauges   []gauge            // the workers', by id: floors to read, kicks to send
	chunks   <-chan liveChunk   // the workers' decisions
	free     chan<- []liveRec   // chunks read, back to the workers
	board    *policyBoard       // the policy an executor's answers advertise
	// rows: the chunks carry rows, which go in send order to tracers
	// (the config's trace, an executor's check of its headers).
	rows    bool
	tracers tee
}

// newLiveCollector makes the collector of what in describes; its summary
// waits for begin.
func newLiveCollector(in collectorIn) *liveCollector {
	c := &liveCollector{in: in, queues: make([][]liveRec, len(in.gauges)), heads: make([]int, len(in.gauges))}
	if in.rows {
		c.trace = &traceOrder{t: in.tracers}
	}
	return c
}

// begin builds the summary once the policy is known, from source.
func (c *liveCollector) begin(pol algorithms.Policy, source string) {
	pol = pol.WithDefaults()
	c.policy, c.source = pol, source
	c.in.board.want.Store(false)
	cfg, t := &c.in.cfg, c.in.target
	if cfg.Theory != nil && pol.Limit > 0 { // else no theory either
		t.Theory = cfg.Theory(pol)
	}
	bin := bench.SeriesBin(pol.Window, cfg.Length(), cfg.Workload)
	if cfg.Bin > 0 {
		bin = int64(cfg.Bin)
	}
	count := measure.For(t, pol, bin, c.in.executor)
	count.Reference = c.in.ref
	c.sum = measure.New(count)
}

// settle begins the summary at the end of a pass whose policy never came,
// and feeds what waited for it; and hands the trace's last rows over.
func (c *liveCollector) settle() {
	if c.trace != nil {
		c.trace.flush()
	}
	if c.sum != nil {
		return
	}
	c.decide(true)
	early := c.early
	c.early = nil
	for i := range early {
		c.feed(&early[i])
	}
}

// decide begins the summary of an executor pass whose policy was not
// given whole: from the policy the answers advertised, completed by the
// config's fields; or, when none came within policyWait of answers, or
// maxEarly answers, or by the end (final), from the config alone (a limit
// without a window is per second), or with no limit at all: none is
// invented from the offered rate. It reports whether the summary has
// begun.
func (c *liveCollector) decide(final bool) bool {
	cfg := c.in.cfg.Policy
	given := cfg.Limit > 0 || cfg.Window > 0 || cfg.Burst > 0
	if got := c.in.board.got.Load(); got != nil {
		source := result.PolicyFromServer
		if given {
			source = result.PolicyFromBoth
		}
		c.begin(completed(*got, cfg), source)
		return true
	}
	n := len(c.early)
	if !final && (n == 0 || time.Duration(c.early[n-1].at-c.early[0].at) < policyWait && n < maxEarly) {
		return false
	}
	pol := completed(algorithms.Policy{Window: time.Second}, cfg)
	if pol.Limit == 0 {
		pol.Burst = 0
		c.begin(pol, result.PolicyNone)
		return true
	}
	c.begin(pol, result.PolicyFromConfig)
	return true
}

// completed is pol with the fields cfg gives in their place; a limit
// given without a burst is the burst too.
func completed(pol, cfg algorithms.Policy) algorithms.Policy {
	if cfg.Limit > 0 {
		pol.Limit, pol.Burst = cfg.Limit, cfg.Limit
	}
	if cfg.Window > 0 {
		pol.Window = cfg.Window
	}
	if cfg.Burst > 0 {
		pol.Burst = cfg.Burst
	}
	return pol
}

// loop steps every collectEvery until stop is closed; clk is the pass's
// clock, started.
func (c *liveCollector) loop(clk clock, stop <-chan struct{}, done chan<- struct{}, bar call.Bar) {
	defer close(done)
	tick := time.NewTicker(collectEvery)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := c.step(clk)
		if i%barEvery == 0 && c.sum != nil {
			offered, admitted := c.sum.Counts()
			bar.Update(now, offered, admitted)
		}
	}
}

// step feeds what is safe to feed and kicks workers idle with an old
// buffer. The order matters: clock, then floors, then chunks.
func (c *liveCollector) step(clk clock) int64 {
	now := int64(clk.now())
	low := now
	for i := range c.in.gauges {
		g := &c.in.gauges[i]
		f := g.floor.Load()
		low = min(low, f)
		if f != idleFloor && now-f > int64(flushAge) {
			select {
			case g.kick <- struct{}{}:
			default:
			}
		}
	}
	c.receive(nil)
	c.emit(low)
	return now
}

// receive takes every chunk handed over, from the workers in keep (all
// when keep is nil), and recycles the chunks.
func (c *liveCollector) receive(keep []bool) {
	for {
		select {
		case ch := <-c.in.chunks:
			if keep == nil || keep[ch.worker] {
				c.queues[ch.worker] = append(c.queues[ch.worker], ch.recs...)
				if c.trace != nil {
					c.trace.add(ch.rows)
				}
			}
			clear(ch.recs)
			select {
			case c.in.free <- ch.recs[:0]:
			default:
			}
		default:
			return
		}
	}
}

// emit feeds, in instant order, the queued decisions at or before low.
func (c *liveCollector) emit(low int64) {
	s := c.scratch[:0]
	for i, q := range c.queues {
		h := c.heads[i]
		n := h
		if low == math.MaxInt64 {
			n = len(q)
		}
		for n < len(q) && q[n].at <= low {
			n++
		}
		s = append(s, q[h:n]...)
		switch {
		case n == len(q):
			clear(q)
			c.queues[i], c.heads[i] = q[:0], 0
		case n > len(q)/2:
			m := copy(q, q[n:])
			clear(q[m:])
			c.queues[i], c.heads[i] = q[:m], 0
		default:
			c.heads[i] = n
		}
	}
	slices.SortStableFunc(s, func(a, b liveRec) int { return cmp.Compare(a.at, b.at) })
	for i := range s {
		c.add(&s[i])
	}
	clear(s)
	c.scratch = s[:0]
}

// add feeds one decision to the summary, or, while an
// executor pass waits for its policy, keeps it.
func (c *liveCollector) add(r *liveRec) {
	at := r.at
	if at < c.last {
		c.reordered++
		at = c.last
	}
	c.last = at
	r.at = at
	if c.sum == nil {
		c.early = append(c.early, *r)
		if !c.decide(false) {
			return
		}
		early := c.early
		c.early = nil
		for i := range early {
			c.feed(&early[i])
		}
		return
	}
	c.feed(r)
}

// feed gives one decision, in order, to the summary.
func (c *liveCollector) feed(r *liveRec) {
	row := call.Row{Key: r.key, Cost: r.cost, Sent: time.Duration(r.at), Done: time.Duration(r.at + r.delay), Outcome: r.class}
	switch {
	case r.err != nil:
		row.Outcome, row.ErrorKind = call.Failed, call.ErrorKind(r.err)
		if c.firstErr == nil {
			c.firstErr = r.err
		}
	case r.class == 0 && r.allowed:
		row.Outcome = call.Admitted
	case r.class == 0:
		row.Outcome, row.TableFull = call.Rejected, r.full
	}
	c.sum.Add(&row)
}
