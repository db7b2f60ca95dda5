package probe

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// schedule is an experiment's arrivals, built segment by segment: at is
// where the next segment starts. Keys are k0, k1, ...
type schedule struct {
	arrivals []workload.Arrival
	at       time.Duration
	keys     int
	// align, when > 0, starts the schedule at a multiple of it on the
	// Unix clock.
	align time.Duration
}

func newSchedule() *schedule { return &schedule{keys: 1} }

var keyNames = func() []string {
	k := make([]string, 256)
	for i := range k {
		k[i] = "k" + strconv.Itoa(i)
	}
	return k
}()

func (s *schedule) add(at time.Duration, i int, keys int) {
	s.keys = max(s.keys, keys)
	s.arrivals = append(s.arrivals, workload.Arrival{At: at, Key: keyNames[i%keys%len(keyNames)], Cost: 1})
	s.at = max(s.at, at)
}

// idle leaves d without arrivals.
func (s *schedule) idle(d time.Duration) { s.at += d }

// burst puts n arrivals at instant at, keys round-robin.
func (s *schedule) burst(at time.Duration, n int64, keys int) {
	for i := range n {
		s.add(at, int(i), keys)
	}
}

// constant puts arrivals rate per second apart over span, keys
// round-robin.
func (s *schedule) constant(rate float64, span time.Duration, keys int) {
	from := s.at
	n := int64(rate * span.Seconds())
	for i := range n {
		s.add(from+time.Duration(float64(i)*1e9/rate), int(i), keys)
	}
	s.at = from + span
}

// poisson puts a Poisson process of rate per second over span.
func (s *schedule) poisson(rate float64, span time.Duration, keys int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	from, t := s.at, 0.0
	for i := 0; ; i++ {
		t += rng.ExpFloat64() / rate
		at := from + time.Duration(t*1e9)
		if at >= from+span {
			break
		}
		s.add(at, i, keys)
	}
	s.at = from + span
}

// thin keeps about frac of the arrivals, evenly.
func (s *schedule) thin(frac float64) {
	if frac >= 1 {
		return
	}
	kept := s.arrivals[:0]
	var acc float64
	for _, a := range s.arrivals {
		if acc += frac; acc >= 1 {
			acc--
			kept = append(kept, a)
		}
	}
	s.arrivals = kept
}

// span is the schedule's length.
//
// It ends 1ms after the last arrival, and 50µs more for each arrival of
// the largest burst (arrivals at one instant): the sender is behind
// schedule for the length of a burst, and stops at the span's end.
func (s *schedule) span() time.Duration {
	if len(s.arrivals) == 0 {
		return 0
	}
	largest, run := 0, 0
	for i, a := range s.arrivals {
		if i > 0 && a.At == s.arrivals[i-1].At {
			run++
		} else {
			run = 1
		}
		largest = max(largest, run)
	}
	return s.arrivals[len(s.arrivals)-1].At + time.Millisecond + time.Duration(largest)*50*time.Microsecond
}

// source is the schedule as an engine's workload, named name.
func (s *schedule) source(name string) *workload.Arrivals {
	return &workload.Arrivals{Name: name, List: s.arrivals, Keys: s.keys, Length: s.span()}
}
