package workload

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode"
)

// Arrival is one request: At is the instant since the run's start (virtual
// time zero, in nanoseconds as a time.Duration), Key the limiter key and
// Cost the units it asks for, >= 1. It is four words, which the compiler
// keeps in registers: a fifth would make every hand-over a copy through
// memory.
type Arrival struct {
	At   time.Duration
	Key  string
	Cost int64
}

// Stream yields arrivals in non-decreasing At order, lazily, one per call.
// A Stream is not safe for concurrent use. Close stops it early and
// releases what it holds (the replay stream's open file); a stream also
// releases it by itself at its end or on an error, and Close may be called
// more than once.
type Stream interface {
	io.Closer
	// Next returns the next arrival, or false at the end (Duration reached
	// or trace exhausted) or on an error. Once it has returned false it
	// keeps returning false.
	Next() (Arrival, bool)
	// Err returns, after Next has returned false, nil at a clean end or the
	// error that stopped the stream (for replay it names the file and line).
	Err() error
}

// ErrInvalid is wrapped by every error from Spec.Validate and New, so callers
// test with errors.Is. The wrapping error names the bad field, in one line.
var ErrInvalid = errors.New("invalid workload")

// Defaults used when a Spec field is zero.
const (
	defaultKeys         = 1
	defaultCost         = 1
	defaultZipfS        = 1.1
	defaultBurstSize    = 10
	defaultBurstEvery   = time.Second
	defaultEveryWindows = 2
	// minFirstRequestEvery: a window opened at an edge expires one window
	// later; the next attack opens its own one window after that.
	minFirstRequestEvery = 3
	defaultEdgeDivisor   = 100 // Edge = Window/100
)

// Spec configures any generator. It is a plain value: the zero value is
// invalid (it has no Name), and zero fields take the defaults documented
// below. Fields that a generator does not use are ignored, but a field that
// is set to a value that is never valid (a negative count, a NaN rate) is
// rejected whatever the generator. Validate and New return errors wrapping
// ErrInvalid that name the bad field.
type Spec struct {
	// Name selects the generator: one of Names(), with replay written
	// "replay:PATH" (the path of a .csv, .jsonl or .ndjson trace).
	Name string
	// Rate is in arrivals per second: the rate of constant, the mean of
	// poisson and zipf, the start rate of ramp and the rate during On for
	// burst on/off. It must be finite and > 0 where it is used.
	Rate float64
	// RateEnd is ramp's rate at Duration, in arrivals per second, > 0.
	RateEnd float64
	// Duration is the length of the run: arrivals with At >= Duration are
	// not produced. It must be > 0, except for replay where 0 means the
	// whole trace.
	Duration time.Duration
	// Keys is the number of distinct keys, >= 1; 0 means 1. Keys are named
	// "k0" .. "k{Keys-1}", built as they are first drawn. Arrivals go over them
	// round-robin for constant, burst, boundary and ramp, uniformly at
	// random for poisson, and Zipf-distributed (k0 most popular) for zipf.
	Keys int
	// ZipfS is zipf's exponent s, finite and > 1: key k{i} is drawn with
	// probability proportional to 1/(i+1)^s. 0 means 1.1.
	ZipfS float64
	// Cost is the cost of each synthetic arrival, >= 1; 0 means 1.
	Cost int64
	// Seed seeds the math/rand/v2 PCG of poisson and zipf (never the global
	// source). The same Seed gives the same stream.
	Seed uint64

	// Burst has two forms. N every T: BurstSize arrivals at the same
	// instant every BurstEvery, the first at 0; a zero BurstSize means 10
	// and a zero BurstEvery means 1s. On/off (chosen when On or Off is set,
	// both then > 0): arrivals spaced 1/Rate apart during On, starting at
	// the beginning of each period, then silence during Off, repeating.
	// Setting fields of both forms is an error.
	BurstSize  int
	BurstEvery time.Duration
	On, Off    time.Duration

	// Boundary sends Limit arrivals spread evenly over [edge-Edge, edge-1]
	// and Limit over [edge, edge+Edge-1] for window edges at
	// Window*(1 + j*EveryWindows), j = 0, 1, ...: windows start at
	// multiples of Window from zero, so with the default EveryWindows = 2
	// every window holds Limit arrivals, yet the span of 2*Edge around each
	// attacked edge holds 2*Limit (the fixed-window boundary attack).
	// Limit >= 1 and Window > 0 are required; Edge 0 means Window/100 (at
	// least 1ns); EveryWindows 0 means 2; 2*Edge must not exceed
	// EveryWindows*Window so that attacks do not overlap.
	//
	// EdgeOffset, in [0, Window), shifts every attacked edge (and so every
	// arrival) later: for a limiter whose windows start at an offset.
	// Align says where the limiter's windows start: AlignEpoch (or "") at
	// multiples of Window, AlignFirstRequest at a key's first request
	// after its last window expired (the INCR + EXPIRE pattern). With
	// AlignFirstRequest each attack begins with one arrival per key at
	// edge-Window, which opens a window that ends at the edge; EveryWindows
	// 0 then means 3, and must be at least 3, so that the window the
	// previous attack opened has expired a whole window before.
	Limit        int64
	Window       time.Duration
	Edge         time.Duration
	EveryWindows int
	EdgeOffset   time.Duration
	Align        string
}

// The values of Spec.Align.
const (
	AlignEpoch        = "epoch"
	AlignFirstRequest = "first-request"
)

// invalid returns an error wrapping ErrInvalid: "invalid workload:
// FIELD VALUE MESSAGE", FIELD in snake case (burst_size), as scenario
// files and result.json name it.
func invalid(field string, value any, format string, args ...any) error {
	return fmt.Errorf("%w: %s %v %s", ErrInvalid, snake(field), value, fmt.Sprintf(format, args...))
}

// snake is a Spec field's name in snake case: BurstSize is burst_size.
func snake(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Source resolves s once: it finds the generator that s.Name names,
// fills in the defaults of zero fields and checks every field, and
// returns the generator's Source (*Constant, *Poisson, *Burst, *OnOff,
// *Boundary, *Ramp, *Zipf or *Replay), which holds the resolved values.
// An error wraps ErrInvalid and names the first bad field. It does not
// open a replay trace: the Source's Open and Inspect do.
func (s Spec) Source() (Source, error) {
	g := lookup(s.Name)
	if g == nil {
		if s.Name == replayName || strings.HasPrefix(s.Name, replayName+":") {
			return nil, invalid("Name", fmt.Sprintf("%q", s.Name), "needs a trace path: replay:PATH")
		}
		return nil, invalid("Name", fmt.Sprintf("%q", s.Name), "is not a workload (want %s)", knownNames())
	}
	s.Keys = cmp.Or(s.Keys, defaultKeys)
	s.Cost = cmp.Or(s.Cost, defaultCost)
	s.ZipfS = cmp.Or(s.ZipfS, defaultZipfS)
	if err := s.checkCommon(); err != nil {
		return nil, err
	}
	if g.name != replayName {
		if err := checkDuration(s.Duration); err != nil {
			return nil, err
		}
	}
	src, err := g.source(s)
	if err == nil {
		err = src.Validate()
	}
	if err != nil {
		return nil, err
	}
	return src, nil
}

// Validate reports whether s is a valid Spec for its generator, after the
// defaults are applied: s.Source's error. It does not open a replay
// trace.
func (s Spec) Validate() error {
	_, err := s.Source()
	return err
}

// New returns a Stream of all the arrivals of s: s.Source, opened. Its
// errors wrap ErrInvalid (for replay, also a missing or unreadable trace,
// or a bad CSV header). The Stream is not safe for concurrent use.
func New(s Spec) (Stream, error) {
	src, err := s.Source()
	if err != nil {
		return nil, err
	}
	return src.Open(Shard{})
}

// Params returns the parameters that matter for s.Name, with defaults
// applied, for the "workload" object of result.json: the Record of
// s.Source, with "name" the generator name ("replay" for a trace, whose
// path goes in "path") and the generator's fields in snake case.
// Durations are int64 nanoseconds under keys ending in "_ns". Every value
// is a string, float64, int, int64 or uint64. For an invalid Spec it
// returns only "name".
func (s Spec) Params() map[string]any {
	src, err := s.Source()
	if err != nil {
		return map[string]any{"name": s.Name}
	}
	p := src.Record()
	if _, ok := src.(*Replay); ok {
		p["name"] = replayName
	}
	return p
}

// checkCommon rejects the values that no generator accepts, whatever the
// generator uses.
func (s Spec) checkCommon() error {
	err := firstError(checkRate("Rate", s.Rate), checkRate("RateEnd", s.RateEnd), nonNegative(s.Duration),
		checkKeys(s.Keys), checkZipfS(s.ZipfS), checkCost(s.Cost))
	switch {
	case err != nil:
		return err
	case s.BurstSize < 0:
		return invalid("BurstSize", s.BurstSize, "must be >= 0")
	case s.BurstEvery < 0:
		return invalid("BurstEvery", s.BurstEvery, "must be >= 0")
	case s.On < 0:
		return invalid("On", s.On, "must be >= 0")
	case s.Off < 0:
		return invalid("Off", s.Off, "must be >= 0")
	case s.Limit < 0:
		return invalid("Limit", s.Limit, "must be >= 0")
	case s.Window < 0:
		return invalid("Window", s.Window, "must be >= 0")
	case s.Edge < 0:
		return invalid("Edge", s.Edge, "must be >= 0")
	case s.EveryWindows < 0:
		return invalid("EveryWindows", s.EveryWindows, "must be >= 0")
	case s.EdgeOffset < 0:
		return invalid("EdgeOffset", s.EdgeOffset, "must be >= 0")
	}
	return checkAlign(s.Align)
}

// firstError returns the first non-nil error of errs.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRate checks a rate in arrivals per second: 0 (unset) or a finite
// number > 0.
func checkRate(field string, rate float64) error {
	if rate != 0 && !positiveFinite(rate) {
		return invalid(field, rate, "must be a finite number > 0 (arrivals per second)")
	}
	return nil
}

// needRate checks the Rate of a generator that uses it: set, and valid.
func needRate(rate float64, name string) error {
	if rate == 0 {
		return invalid("Rate", rate, "must be > 0: %s needs a rate (arrivals per second)", name)
	}
	return checkRate("Rate", rate)
}

// nonNegative checks a Duration that may be 0.
func nonNegative(d time.Duration) error {
	if d < 0 {
		return invalid("Duration", d, "must be >= 0")
	}
	return nil
}

// checkDuration checks the Duration of a synthetic generator: > 0.
func checkDuration(d time.Duration) error {
	if d == 0 {
		return invalid("Duration", d, "must be > 0 (only replay takes 0, for the whole trace)")
	}
	return nonNegative(d)
}

func checkKeys(n int) error {
	if n < 1 {
		return invalid("Keys", n, "must be >= 1")
	}
	return nil
}

func checkCost(c int64) error {
	if c < 1 {
		return invalid("Cost", c, "must be >= 1")
	}
	return nil
}

func checkZipfS(s float64) error {
	if !(s > 1) || math.IsInf(s, 0) {
		return invalid("ZipfS", s, "must be a finite number > 1")
	}
	return nil
}

func checkAlign(a string) error {
	if a != "" && a != AlignEpoch && a != AlignFirstRequest {
		return invalid("Align", fmt.Sprintf("%q", a), "is not %s or %s", AlignEpoch, AlignFirstRequest)
	}
	return nil
}

// checkShape checks what every synthetic generator has: its Duration,
// Keys and Cost.
func checkShape(d time.Duration, keys int, cost int64) error {
	return firstError(checkDuration(d), checkKeys(keys), checkCost(cost))
}

func positiveFinite(x float64) bool {
	return x > 0 && !math.IsInf(x, 1)
}
