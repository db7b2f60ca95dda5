package report

import (
	"fmt"

	"github.com/ratebench/ratebench/bench/result"
)

// boundaryWhy says, per algorithm, why the boundary attack gets what it
// gets.
var boundaryWhy = map[string]string{
	"token-bucket":        "a full bucket gives B at once, then refills L per W: at most B + L in any W",
	"gcra":                "the same as a token bucket: the TAT allows B at once, then one per W/L",
	"leaky-bucket":        "a meter with room for B, leaking L per W: the same as a token bucket",
	"leaky-queue":         "a queue serves one per W/L whatever arrives: at most L served in any W",
	"fixed-window":        "the counter restarts at each window edge, so L just before it and L just after both fit: 2L in a span far shorter than W",
	"sliding-log":         "it counts the exact trailing W, so the second L waits until the first has left the window",
	"sliding-counter":     "the previous window still weighs nearly L just after the edge, so the second L is refused",
	"fixed-window-first":  "its window opened at the key's first request, not at the edge, so both halves fall in one window; an attack timed on the opening (-align first-request) gets 2L - 1",
	"sliding-log-all":     "it counts the exact trailing W, rejected requests included: the second L is refused, and counted",
	"sliding-counter-all": "the previous window still weighs nearly L just after the edge, so the second L is refused, and counted",
	"token-bucket-debt":   "a token bucket (at most B + L); the rejected half also takes tokens, down to -B",
	"nginx-limit-req":     "a leaky bucket of burst+1 on a 1ms clock, draining L per W: at most B + L at W = 1s",
	"httprate":            "a sliding counter whose estimate is rounded: the previous window's L refuse the second half until they weigh below L - 1/2, W/2L after the edge, when one more fits; timed on the edges' last nanoseconds, 2L",
	"haproxy-req-rate":    "its period opened at the first request, not at the edge, and every request counts, so the second half is refused; timed on a period's last millisecond, L then L - floor(L/P) a period later: 2L when P > L",
	"x-rate":              "x/time/rate is a token bucket: at most B + L in any W",
	"uber":                "a pacer spaces requests by W/L (plus its slack)",
}

// BoundaryExplanation is what the window-boundary attack of res did to
// each algorithm, and why: a heading line, then each run's Reading with
// its algorithm's reason on a line of its own, as `ratebench boundary`
// prints them.
func BoundaryExplanation(res *result.Result) []string {
	out := []string{fmt.Sprintf("\nThe attack: %d requests just before a window edge and %d just after, every few windows.", res.Policy.Limit, res.Policy.Limit)}
	for i, line := range Reading(res) {
		out = append(out, fmt.Sprintf("- %s\n  why: %s", line, boundaryWhy[res.Runs[i].Algorithm]))
	}
	return out
}
