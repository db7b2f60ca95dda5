package result

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Fit is a model of a service's limiter with its best policy, as `ratebench
// fit` and `ratebench probe` find it. Limit per Window with Burst is the
// policy in the terms of `ratebench list`: for a bucket, Burst is its
// capacity and the window a canonical one (only the rate Limit/Window can
// be known); for a window, Burst is the limit.
type Fit struct {
	Algorithm string `json:"algorithm"`
	Limit     int64  `json:"limit"`
	WindowNS  int64  `json:"window_ns"`
	Burst     int64  `json:"burst"`
	// PhaseNS is where the windows of a model with windows on the clock
	// (fixed-window, sliding-counter) start, ns after the run's start,
	// modulo the window.
	PhaseNS int64 `json:"phase_ns,omitempty"`
	// UnixPhaseNS is where it starts on the Unix clock: ns after each
	// multiple of the window since the epoch (0: on whole multiples). Nil
	// when the run's start is not known or the model has no phase.
	UnixPhaseNS *int64 `json:"unix_phase_ns,omitempty"`
	// CountsDenied says whether the model counts denied requests; in a
	// probe's best fit, whether the trace shows it: nil (null) when models
	// that count them and models that do not decide alike on it.
	CountsDenied *bool `json:"counts_denied"`
	// Equivalent names every model whose own best policy decides as this
	// one on every request of the trace (this one first): the trace cannot
	// tell them apart. Empty on fits that were not grouped.
	Equivalent []string `json:"equivalent,omitempty"`
	// Scope is what one limit applies to: "global" (all requests),
	// "source" (a client address) or "key" (a key header's value).
	Scope string `json:"scope"`
	// AgreementPct is the share of the scored requests the model predicted
	// right; AmbiguousPct the share of all requests too close to call.
	AgreementPct float64 `json:"agreement_pct"`
	AmbiguousPct float64 `json:"ambiguous_pct"`
	Scored       int64   `json:"scored"`
	Misses       int64   `json:"misses"`
	Ambiguous    int64   `json:"ambiguous"`
}

// Denied reports whether the fit is known to count denied requests.
func (f Fit) Denied() bool { return f.CountsDenied != nil && *f.CountsDenied }

// onMultiples is how near a multiple of its length on the Unix clock, in
// ns, a window fitted from a client's timing is said to start on it.
const onMultiples = int64(5 * time.Millisecond)

// Fit scopes.
const (
	ScopeGlobal = "global"
	ScopeSource = "source"
	ScopeKey    = "key"
)

// String is the fit in a sentence's words: "gcra of 50 per 1s with a
// burst of 21, per client address".
func (f Fit) String() string {
	where := map[string]string{ScopeGlobal: "for all clients together", ScopeSource: "per client address", ScopeKey: "per key"}[f.Scope]
	s := fmt.Sprintf("%s of %s per %v", f.Algorithm, Group(f.Limit), Readable(time.Duration(f.WindowNS)))
	if f.Burst != f.Limit {
		s += fmt.Sprintf(" with a burst of %s", Group(f.Burst))
	}
	switch w := Readable(time.Duration(f.WindowNS)); {
	case f.UnixPhaseNS != nil && (*f.UnixPhaseNS < onMultiples || f.WindowNS-*f.UnixPhaseNS < onMultiples):
		s += fmt.Sprintf(", windows on multiples of %v of the Unix clock", w)
	case f.UnixPhaseNS != nil:
		s += fmt.Sprintf(", windows starting %v after each multiple of %v of the Unix clock", time.Duration(*f.UnixPhaseNS).Round(time.Millisecond), w)
	case f.PhaseNS != 0:
		s += fmt.Sprintf(", windows starting %v into the run", time.Duration(f.PhaseNS).Round(time.Millisecond))
	}
	if where != "" {
		s += ", " + where
	}
	return s
}

// Readable rounds d for a person to read: to 10µs under 10ms, to 1ms
// under 10s, else to 100ms. A fitted window is known to nanoseconds only
// in arithmetic; "969.3189ms" says more than the trace can.
func Readable(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < 10*time.Second:
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// RateOnly reports whether only the fit's rate and burst are known, not
// its window: a bucket, whose window is a canonical one.
func (f Fit) RateOnly() bool {
	switch f.Algorithm {
	case "gcra", "nginx-limit-req", "token-bucket-debt":
		return true
	}
	return false
}

// Matches reports whether an advertised policy is the fitted one: the
// same rate within 1%, and for a window the same window.
func (f Fit) Matches(adv PolicyJSON) bool {
	if adv.Limit <= 0 || adv.WindowNS <= 0 || f.Limit <= 0 || f.WindowNS <= 0 {
		return false
	}
	ra, rf := float64(adv.Limit)/float64(adv.WindowNS), float64(f.Limit)/float64(f.WindowNS)
	if math.Abs(ra/rf-1) > 0.01 {
		return false
	}
	return f.RateOnly() || adv.WindowNS == f.WindowNS
}

// Probe is what `ratebench probe` found (Result.Probe): the best fit and
// the others, best first, what the service's headers were found to say,
// and the statuses that meant a rejection.
type Probe struct {
	Best    Fit          `json:"best"`
	Fits    []Fit        `json:"fits"`
	Headers *HeaderStats `json:"headers,omitempty"`
	// RejectStatuses meant "rejected by the limiter"; RejectFound says
	// the probe found them itself (the non-2xx status seen only under
	// overload) rather than being told.
	RejectStatuses []int `json:"reject_statuses"`
	RejectFound    bool  `json:"reject_status_found,omitempty"`
	// Requests counts the answered requests fitted; UncertaintyNS is the
	// p99 of answer minus send.
	Requests      int64  `json:"requests"`
	UncertaintyNS int64  `json:"timing_uncertainty_ns"`
	Sentence      string `json:"sentence"`
	// Advertised is the policy the service's RateLimit-Policy named, if
	// any; AdvertisedMatches whether it is the fitted one.
	Advertised        *PolicyJSON `json:"advertised,omitempty"`
	AdvertisedMatches *bool       `json:"advertised_matches,omitempty"`
	// Confidence is how sure the fit is: "sure" (one group of models
	// explains the trace), "unsure" (Doubts say why and what would tell)
	// or "unexplained" (no model explains it).
	Confidence string   `json:"confidence,omitempty"`
	Doubts     []string `json:"doubts,omitempty"`
	// Scopes are the scopes the probe's requests could tell apart
	// ("global", "source", "key"): with one, the scope is not known.
	Scopes []string `json:"scopes,omitempty"`
}

// Confidences of a fit.
const (
	Sure        = "sure"
	Unsure      = "unsure"
	Unexplained = "unexplained"
)

// Group formats n with thousands separators: 1234567 as "1,234,567".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
