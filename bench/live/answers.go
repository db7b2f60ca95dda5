package live

import (
	"strconv"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// answers fills run.HTTP and run.StatusCodes with what an executor
// pass's answers said (results, the workers'; s, the scheduler's; source,
// where the policy came from; headers, the check of the answers' claims,
// or nil; wall, the pass's wall time); the caller adds what it alone
// knows (URL, method, client, connections).
func answers(run *result.Run, results []*workerResult, s schedule, cfg Config, source string, headers call.Checker, wall time.Duration) {
	var a answerCounts
	for _, r := range results {
		a.merge(r.answers)
	}
	h := &result.HTTPStats{Responses: a.responses, Sent: a.sent, HeldBack: s.held, PolicySource: source,
		Closed: cfg.Closed, HonorRetryAfter: cfg.HonorRetryAfter}
	if len(a.codes) > 0 {
		run.StatusCodes = make(map[string]int64, len(a.codes))
		for code, n := range a.codes {
			run.StatusCodes[strconv.Itoa(code)] = n
		}
	}
	if a.responses > 0 {
		h.TooManyPct = 100 * float64(run.Rejected) / float64(a.responses)
	}
	if len(a.retryAfter) > 0 {
		h.RetryAfterS = make(map[string]int64, len(a.retryAfter))
		for v, n := range a.retryAfter {
			k := strconv.Itoa(int(v))
			if v == call.BadRetryAfter {
				k = "invalid"
			}
			h.RetryAfterS[k] = n
		}
	}
	if headers != nil {
		h.Headers = headers.Result()
	}
	ended := run.Offered - run.ErrorKinds[call.KindCanceled]
	h.CompletedRatePerS = float64(ended) / max(wall, 1).Seconds()
	run.HTTP = h
}
