package live

import (
	"context"
	"time"

	"github.com/ratebench/ratebench/bench/pace"
	"github.com/ratebench/ratebench/workload"
)

// liveJob is one arrival handed to a worker.
type liveJob struct {
	seq     int64         // the job's number in the pass, in send order
	at      time.Duration // intended instant, since the pass's start
	sent    time.Duration // the scheduler's clock when it sent the job: <= the call's start
	key     string
	cost    int64
	replica int
}

// schedule is what the scheduler did.
type schedule struct {
	sent, dropped int64
	held          int64         // held back after a rejection with a Retry-After
	unsent        int64         // due before the end, not sent when the pass reached it
	lastAt        time.Duration // intended instant of the last arrival reached
	end           time.Duration // clock when the scheduler stopped
	interrupted   bool
	err           error // the stream's
}

// schedule sends the arrivals of stream (those before until) to the
// workers, each when the pass's clock reaches its intended instant, and
// never waits for a worker: when MaxInFlight arrivals are sent and not yet
// done, or maxQueued are waiting for a worker, the arrival is dropped and
// counted. It returns at the end of the stream or when ctx is done.
func (p *livePass) schedule(ctx context.Context, stream workload.Stream, until time.Duration) schedule {
	if p.cfg.Closed {
		return p.closedLoop(ctx, stream, until)
	}
	done := ctx.Done()
	// Yield for limiters in this process: a Go timer or a nanosleep
	// would wake tens of microseconds late. Sleep for an executor: a
	// spinning sender would take a core from a server on this machine.
	fine := pace.Yield
	if p.exec != nil {
		fine = pace.Sleep
	}
	pacer := pace.New(p.clk.start, fine)
	defer pacer.Stop()
	var s schedule
	var completed int64 // a stale sum of the workers' completions: in flight <= sent - completed
	limit := int64(p.cfg.MaxInFlight)
	var behind int64
	route := workload.NewRouter(stream, len(p.lims))
	now := p.clk.now()
	for {
		a, ok := stream.Next()
		if !ok {
			s.err = stream.Err()
			break
		}
		if a.At >= until {
			break
		}
		replica := route.Next()
		if a.At > now {
			if now, ok = pacer.Until(done, a.At); !ok {
				s.interrupted = true
				break
			}
		} else {
			select {
			case <-done:
				s.interrupted = true
			default:
			}
			if s.interrupted {
				break
			}
			// Behind schedule: look at the clock now and then, and
			// stop at the pass's end rather than send the backlog late.
			if behind++; behind%behindCheck == 0 {
				if now = p.clk.now(); now >= until {
					s.lastAt = a.At
					s.unsent = 1 + countUntil(ctx, stream, until)
					break
				}
			}
		}
		s.lastAt = a.At
		if p.holds != nil && p.holds.held(a.Key, now) {
			s.held++
			continue
		}
		if s.sent-completed >= limit {
			if completed = p.completed(); s.sent-completed >= limit {
				s.dropped++
				continue
			}
		}
		if !p.disp.send(liveJob{seq: s.sent, at: a.At, sent: now, key: a.Key, cost: a.Cost, replica: replica}) {
			s.dropped++ // more than maxQueued waiting for a worker
			continue
		}
		s.sent++
	}
	s.end = p.clk.now()
	return s
}

// closedLoop keeps cfg.Connections requests in flight until the end,
// sending the next as soon as one ends, with the keys of stream; each is
// intended when it is sent.
func (p *livePass) closedLoop(ctx context.Context, stream workload.Stream, until time.Duration) schedule {
	var s schedule
	end := time.NewTimer(until)
	defer end.Stop()
	limit := int64(p.cfg.Connections)
	var completed int64 // a stale sum of the workers' completions
	route := workload.NewRouter(stream, len(p.lims))
loop:
	for {
		if s.sent-completed >= limit {
			if completed = p.completed(); s.sent-completed >= limit {
				select { // every answer pokes freed after counting itself
				case <-p.freed:
				case <-end.C:
					break loop
				case <-ctx.Done():
					s.interrupted = true
					break loop
				}
				continue
			}
		}
		select {
		case <-end.C:
			break loop
		case <-ctx.Done():
			s.interrupted = true
			break loop
		default:
		}
		a, ok := stream.Next()
		if !ok {
			s.err = stream.Err()
			break
		}
		now := p.clk.now()
		if !p.disp.send(liveJob{seq: s.sent, at: now, sent: now, key: a.Key, cost: a.Cost, replica: route.Next()}) {
			s.dropped++
			continue
		}
		s.sent++
	}
	s.end = p.clk.now()
	s.lastAt = s.end
	return s
}

// behindCheck is how many arrivals a scheduler behind its schedule sends
// between two reads of the clock; countCheck how many countUntil counts
// between two looks at the context.
const (
	behindCheck = 1024
	countCheck  = 1 << 14
)

// countUntil counts the arrivals left in stream before until, stopping
// early (with what it counted) when ctx is done.
func countUntil(ctx context.Context, stream workload.Stream, until time.Duration) int64 {
	var n int64
	for {
		a, ok := stream.Next()
		if !ok || a.At >= until {
			return n
		}
		if n++; n%countCheck == 0 && ctx.Err() != nil {
			return n
		}
	}
}

// completed sums the workers' completions.
func (p *livePass) completed() int64 {
	var n int64
	for i := range p.gauges {
		n += p.gauges[i].completed.Load()
	}
	return n
}
