package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Expectation is a policy a person expects a service to run, written the
// way a fit's sentence says it, each part optional:
//
//	gcra 100/1s burst 20 per client-address
//	fixed-window 40/1500ms
//	100/1m
//	per key
//
// Parts: a model's name (one of Names), L/W (a whole limit per a Go
// duration, or per s, m or h), "burst B", and the scope: "per
// client-address" (or "per address"), "per key", or "global" (or "for
// all clients"). The zero value expects nothing and matches every fit.
type Expectation struct {
	Algorithm string
	Limit     int64
	Window    time.Duration
	Burst     int64
	Scope     string
}

// Verdicts of Expectation.Check.
const (
	// ExpectMatch: the fit agrees with every part.
	ExpectMatch = iota
	// ExpectContradicted: the fit, sure of itself, disagrees with a part.
	ExpectContradicted
	// ExpectUnknown: the fit cannot tell a part (it is unsure, sees one
	// client, or no model explains the trace), and contradicts none it
	// can.
	ExpectUnknown
)

// ErrBadExpectation: the expectation could not be read.
var ErrBadExpectation = errors.New("fit: bad expectation")

// Names are the models a fit can name, those that stand for others
// included.
func Names() []string {
	var out []string
	for _, f := range families {
		out = append(out, f.name)
		out = append(out, standsFor[f.name]...)
	}
	return out
}

// ParseExpectation reads an expectation; names and words are taken in
// any case.
func ParseExpectation(s string) (Expectation, error) {
	var e Expectation
	words := strings.Fields(strings.ToLower(s))
	bad := func(format string, a ...any) (Expectation, error) {
		return Expectation{}, fmt.Errorf("%w %q: %s", ErrBadExpectation, s, fmt.Sprintf(format, a...))
	}
	if len(words) == 0 {
		return bad("it is empty; e.g. 'gcra 100/1s burst 20 per client-address'")
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := func() (string, bool) {
			if i+1 < len(words) {
				i++
				return words[i], true
			}
			return "", false
		}
		switch {
		case w == "burst":
			v, ok := next()
			b, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || b < 1 {
				return bad("burst wants a whole number >= 1, e.g. burst 20")
			}
			e.Burst = b
		case w == "per" || w == "for":
			v, ok := next()
			if w == "for" && v == "all" {
				v, ok = next()
			}
			scope, known := map[string]string{"client-address": ScopeSource, "address": ScopeSource, "client": ScopeSource,
				"source": ScopeSource, "key": ScopeKey, "clients": ScopeGlobal}[v]
			if v == "client" && i+1 < len(words) && words[i+1] == "address" {
				i++
			}
			if !ok || !known {
				return bad("want per client-address, per key or global, not %s %s", w, v)
			}
			e.Scope = scope
		case w == "global":
			e.Scope = ScopeGlobal
		case strings.Contains(w, "/"):
			l, win, err := parseRate(w)
			if err != nil {
				return bad("%v", err)
			}
			e.Limit, e.Window = l, win
		case slices.Contains(Names(), w):
			e.Algorithm = w
		default:
			return bad("%q is neither a model (%s), L/W, burst B nor a scope", w, strings.Join(Names(), ", "))
		}
	}
	return e, nil
}

// parseRate reads L/W: "100/1s", "90/1m", "25/1.5s", "100/s".
func parseRate(s string) (int64, time.Duration, error) {
	ls, ws, _ := strings.Cut(s, "/")
	l, err := strconv.ParseInt(ls, 10, 64)
	if err != nil || l < 1 {
		return 0, 0, fmt.Errorf("%s: the limit wants a whole number >= 1", s)
	}
	if u, ok := map[string]time.Duration{"s": time.Second, "m": time.Minute, "min": time.Minute, "h": time.Hour}[ws]; ok {
		return l, u, nil
	}
	w, err := time.ParseDuration(ws)
	if err != nil || w <= 0 {
		return 0, 0, fmt.Errorf("%s: the window wants a duration such as 1s, 1500ms or 1m", s)
	}
	return l, w, nil
}

// String writes e back in its own grammar.
func (e Expectation) String() string {
	var parts []string
	if e.Algorithm != "" {
		parts = append(parts, e.Algorithm)
	}
	if e.Limit > 0 {
		parts = append(parts, fmt.Sprintf("%d/%v", e.Limit, e.Window))
	}
	if e.Burst > 0 {
		parts = append(parts, fmt.Sprintf("burst %d", e.Burst))
	}
	if e.Scope != "" {
		parts = append(parts, map[string]string{ScopeSource: "per client-address", ScopeKey: "per key", ScopeGlobal: "global"}[e.Scope])
	}
	return strings.Join(parts, " ")
}

// Check compares the fit r with e and returns the verdict and a sentence
// saying why: every part the fit contradicts, else every part it cannot
// tell. A part is contradicted unless a doubt of the fit concerns it
// (Result.UnsureOf): a fit unsure only of the window's length still
// contradicts an expected model it is not.
func (e Expectation) Check(r *Result) (int, string) {
	if r.Shaper || r.Confidence == result.Unexplained {
		return ExpectUnknown, "cannot tell: no model explains the service"
	}
	b := r.Best
	var contra, unknown []string
	differ := func(part, format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		if r.unsureOf(part) {
			unknown = append(unknown, s+" (but the fit is unsure of its "+part+")")
		} else {
			contra = append(contra, s)
		}
	}
	names := b.Equivalent
	if len(names) == 0 {
		names = []string{b.Algorithm}
	}
	if e.Algorithm != "" && !slices.Contains(names, e.Algorithm) {
		differ(PartModel, "it behaves like %s, not %s", andList(names), e.Algorithm)
	}
	if e.Limit > 0 {
		want, got := float64(e.Limit)/float64(e.Window), float64(b.Limit)/float64(b.WindowNS)
		switch {
		case math.Abs(got/want-1) > 0.01:
			differ(PartPolicy, "its rate is %.4g/s, not %.4g/s", got*1e9, want*1e9)
		case !b.RateOnly() && math.Abs(float64(b.WindowNS)/float64(e.Window)-1) > 0.01:
			differ(PartPolicy, "its window is %v, not %v", result.Readable(time.Duration(b.WindowNS)), e.Window)
		}
	}
	if e.Burst > 0 {
		if got := b.Burst; got < e.Burst-1 || got > e.Burst+1 {
			differ(PartPolicy, "its burst is %d, not %d", got, e.Burst)
		}
	}
	if e.Scope != "" {
		switch {
		case len(r.Scopes) == 1:
			unknown = append(unknown, "the scope cannot be told from one client (give -source-addrs or -key-header)")
		case b.Scope != e.Scope:
			differ(PartScope, "it limits %s, not %s", scopeWords[b.Scope], scopeWords[e.Scope])
		}
	}
	switch {
	case len(contra) > 0:
		return ExpectContradicted, "contradicted: " + strings.Join(contra, "; ")
	case len(unknown) > 0:
		return ExpectUnknown, "cannot tell: " + strings.Join(unknown, "; ")
	}
	return ExpectMatch, "as expected: " + e.String()
}
