package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestTokenBucketDebtSteps(t *testing.T) {
	never := algorithms.Never
	// 10 per second, capacity 4: T = 100ms, B*T = 400ms; tokens >= -4.
	b, err := algorithms.NewTokenBucketDebt(algorithms.Policy{Limit: 10, Window: ms(1000), Burst: 4})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, b, []step{
		{at: ms(1000), cost: 4, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "a full bucket admits its capacity"},
		{at: ms(1000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(200), ResetAfter: ms(500)},
			why: "rejected, and takes its token anyway: -1, so 2 tokens' wait"},
		{at: ms(1150), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(150), ResetAfter: ms(450)},
			why: "the plain bucket would hold 1.5 tokens and admit; this one -0.5: rejected, -1.5"},
		{at: ms(1350), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(350)},
			why: "the RetryAfter above: 1 token, admitted, 0.5 left"},
		{at: ms(1350), cost: 9, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(800)},
			why: "above the burst: never, and it takes its cost down to -B = -4"},
		{at: ms(1350), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(500), ResetAfter: ms(800)},
			why: "at -B: rejected, and no further into debt"},
		{at: ms(1000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(850), ResetAfter: ms(1150)},
			why: "back in time: -7.5 tokens then, and the state stays as it is"},
		{at: ms(1850), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "the RetryAfter of -B: (B+1)*T later"},
		{at: ms(3000), cost: 4, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "full again, not more"},
	})
}

// TestTokenBucketDebtIsExact: on random traces with costs up to 2B the
// bucket in debt decides as a count of tokens (in ns of refill, exact) that
// every request takes, down to -B, every field; never more than B + L in a
// span W.
func TestTokenBucketDebtIsExact(t *testing.T) {
	for i := range crossTraces {
		r := newRand(9, i)
		p := crossPolicy(r).WithDefaults()
		trace := crossTrace(r, p, 2*p.Burst, crossRequests, false)
		b, err := algorithms.NewTokenBucketDebt(p)
		if err != nil {
			t.Fatal(err)
		}
		interval := p.Interval()
		capacity := time.Duration(p.Burst) * interval
		tokens, last := capacity, trace[0].at // tokens*T
		var admits []admit
		for j, q := range trace {
			tokens, last = min(capacity, tokens+q.at-last), q.at
			take := time.Duration(q.cost) * interval
			var want algorithms.Decision
			if q.cost <= p.Burst && tokens >= take {
				tokens -= take
				want.Allowed = true
				admits = append(admits, admit(q))
			} else {
				tokens = max(tokens-take, -capacity)
				want.RetryAfter = algorithms.Never
				if q.cost <= p.Burst {
					want.RetryAfter = take - tokens
				}
			}
			want.Remaining = int64(max(tokens, 0) / interval)
			want.ResetAfter = capacity - tokens
			if got := mustAllow(t, b, q); got != want {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want %+v", i, p, j, q, got, want)
			}
		}
		if got := maxInSpan(admits, p.Window, false); got > p.Burst+p.Limit {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= B+L = %d", i, p, got, p.Burst+p.Limit)
		}
	}
}

func TestTokenBucketDebtErrors(t *testing.T) {
	checkErrors(t, "token-bucket-debt", algorithms.NewTokenBucketDebt)
}
