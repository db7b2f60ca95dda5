package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// TestCountsDeniedStarves: a client that keeps sending above the rate gets
// L per W (or B + L) from a limiter whose rejections consume nothing, and
// next to nothing from one that counts them; once it stops for a while and
// sends below the rate, both admit it again. 10 per second, burst 10
// (T = 100ms); windows on whole seconds.
func TestCountsDeniedStarves(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	type run struct {
		from, every time.Duration
		n           int
	}
	twiceTheRate := run{0, ms(50), 100} // 0 to 4.95s
	type counts struct{ plain, all int64 }
	for _, tc := range []struct {
		name   string
		runs   []run
		log    counts // sliding-log, sliding-log-all
		window counts // sliding-counter, sliding-counter-all
		bucket counts // token-bucket, token-bucket-debt
	}{
		{
			name: "twice the rate for 5s",
			runs: []run{twiceTheRate},
			// The log: the first 10 of each second, 50. The log of every
			// request: 10 by 450ms, then each trailing W holds 19 or 20
			// requests, for ever.
			log: counts{50, 10},
			// The counter: 10 in [0, 1s), then 9 in each later second, as
			// the weight of the previous 9 or 10 lets one in about every
			// other request: 46. Counting all: every window counts 20, and 20
			// weighs at least 1 to the end of the next one, beside its own
			// 19: none after the first 10.
			window: counts{46, 10},
			// The bucket: 10 - j/2 tokens before request j, so 19 admitted
			// by 900ms, then every other one as a token accrues per 100ms:
			// 40 more. In debt: the same 19, then each request takes a
			// token for half of one accrued: down to -10, and no request
			// finds one.
			bucket: counts{59, 19},
		},
		{
			name: "twice the rate for 2s, silence for W, then half the rate for 3s",
			runs: []run{{0, ms(50), 40}, {ms(2950), ms(200), 16}},
			// The first part as above, over 2s: 20 and 10 for the logs, 19
			// and 10 for the counters, 29 and 19 for the buckets. After a
			// silence of W the logs and counters admit all 16 requests.
			// The bucket in debt is at -10 at 1.95s: the silence brings it
			// to 0, the first slow request finds no token (-1), then each
			// brings 2 and takes 1: 15.
			log:    counts{36, 26},
			window: counts{35, 26},
			bucket: counts{45, 34},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pair := range []struct {
				name  string
				plain func(algorithms.Policy) (algorithms.Limiter, error)
				all   func(algorithms.Policy) (algorithms.Limiter, error)
				want  counts
			}{
				{"sliding-log", limiterOf(algorithms.NewSlidingLog), limiterOf(algorithms.NewSlidingLogAll), tc.log},
				{"sliding-counter", limiterOf(algorithms.NewSlidingCounter), limiterOf(algorithms.NewSlidingCounterAll), tc.window},
				{"token-bucket", limiterOf(algorithms.NewTokenBucket), limiterOf(algorithms.NewTokenBucketDebt), tc.bucket},
			} {
				plain, _ := pair.plain(p)
				all, err := pair.all(p)
				if err != nil {
					t.Fatal(err)
				}
				var got counts
				for _, r := range tc.runs {
					for k := range r.n {
						q := request{r.from + time.Duration(k)*r.every, 1}
						if mustAllow(t, plain, q).Allowed {
							got.plain++
						}
						if mustAllow(t, all, q).Allowed {
							got.all++
						}
					}
				}
				if got != pair.want {
					t.Errorf("%s: admitted %d, counting denied requests %d; want %d, %d", pair.name, got.plain, got.all, pair.want.plain, pair.want.all)
				}
			}
		})
	}
}
