package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// Info is what a workload holds, known before it runs: what bounds a run
// and sizes its per-key tables. It is a plain value.
type Info struct {
	// Arrivals is how many arrivals come before Duration: counted for a
	// trace, the exact count (to within one) for the deterministic
	// generators, the mean for poisson and zipf.
	Arrivals float64
	// Keys is how many distinct keys the arrivals use: Spec.Keys, or for a
	// trace those of its arrivals before Duration, counted up to the bound
	// given to Inspect; KeysOver then says that there are more.
	Keys     int
	KeysOver bool
	// Span is the run's length in virtual time: Duration, or for a whole
	// trace (Duration 0) its last instant plus 1ns.
	Span time.Duration
}

// inspectEvery is how many trace rows Inspect reads between two looks at
// its context.
const inspectEvery = 4096

// Inspect returns the Info of s after checking it as New does. For a trace
// it reads the whole file once, checking every row as the stream will, so
// that a bad row anywhere is an error wrapping ErrInvalid that names the
// line, before anything runs; it counts distinct keys up to maxKeys (0: no
// bound), so that its memory stays bounded by maxKeys keys. It returns
// ctx.Err() when ctx is done first.
func Inspect(ctx context.Context, s Spec, maxKeys int) (Info, error) {
	g, eff, err := s.resolve()
	if err != nil {
		return Info{}, err
	}
	if g.expect != nil {
		return Info{Arrivals: g.expect(eff), Keys: eff.Keys, Span: eff.Duration}, nil
	}
	return inspectTrace(ctx, eff, maxKeys)
}

// inspectTrace reads the whole trace of a replay spec.
func inspectTrace(ctx context.Context, s Spec, maxKeys int) (Info, error) {
	path := strings.TrimPrefix(s.Name, replayName+":")
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("%w: replay: %w", ErrInvalid, err)
	}
	defer f.Close()
	r, err := openTrace(path, f, formatOf(path), 0) // every row, past Duration too
	if err != nil {
		return Info{}, err
	}
	info := Info{Span: s.Duration}
	keys := map[string]struct{}{}
	var last time.Duration
	for n := 1; ; n++ {
		a, ok := r.Next()
		if !ok {
			break
		}
		if n%inspectEvery == 0 && ctx.Err() != nil {
			return Info{}, ctx.Err()
		}
		if s.Duration > 0 && a.At >= s.Duration {
			continue
		}
		info.Arrivals++
		last = a.At
		if _, seen := keys[a.Key]; !seen && !info.KeysOver {
			if maxKeys > 0 && len(keys) == maxKeys {
				info.KeysOver = true
				continue
			}
			keys[strings.Clone(a.Key)] = struct{}{}
		}
	}
	if err := r.Err(); err != nil {
		var te *traceError
		if errors.As(err, &te) {
			te.invalid = true
		}
		return Info{}, err
	}
	info.Keys = max(len(keys), 1)
	if s.Duration == 0 {
		info.Span = last + 1
	}
	return info, nil
}

// expectRate: Rate arrivals per second over Duration.
func expectRate(s Spec) float64 { return s.Rate * s.Duration.Seconds() }

// expectRamp: the mean of the two rates over Duration.
func expectRamp(s Spec) float64 { return (s.Rate + s.RateEnd) / 2 * s.Duration.Seconds() }

// expectBurst: BurstSize per BurstEvery from 0, or Rate during each On.
func expectBurst(s Spec) float64 {
	if !s.isOnOff() {
		bursts := math.Ceil(float64(s.Duration) / float64(s.BurstEvery))
		return float64(s.BurstSize) * bursts
	}
	period := float64(s.On) + float64(s.Off)
	full := math.Floor(float64(s.Duration) / period)
	on := full*float64(s.On) + min(float64(s.Duration)-full*period, float64(s.On))
	return s.Rate * on / 1e9
}

// expectBoundary: 2*Limit for each attacked edge whose first arrival
// (edge - Edge) comes before Duration.
func expectBoundary(s Spec) float64 {
	first := float64(s.Window - s.Edge)
	if float64(s.Duration) <= first {
		return 0
	}
	step := float64(s.Window) * float64(s.EveryWindows)
	attacks := math.Floor((float64(s.Duration)-first-1)/step) + 1
	return 2 * float64(s.Limit) * attacks
}
