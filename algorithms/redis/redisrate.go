package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
)

// RedisRateName is the CLI name of the redis_rate peer.
const RedisRateName = "redis-rate"

// RedisRate adapts github.com/go-redis/redis_rate/v10 (GCRA in one Lua
// script, the peer to compare the gcra script with) to algorithms.Limiter.
// redis_rate reads Redis's own clock (TIME, microseconds, as floating-point
// seconds since 2017), so Allow ignores now: it is for live runs only, and
// its RetryAfter and ResetAfter are rounded as redis_rate rounds them. A
// cost above the burst is rejected with RetryAfter Never without being
// sent (redis_rate would give a finite retry that never comes). Keys are
// "rate:{prefix:key}". The zero value is not usable; use NewRedisRate. Safe
// for concurrent use.
type RedisRate struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
	timeout time.Duration
}

// NewRedisRate returns the redis_rate limiter for p (Rate L per Period W,
// Burst B) on client, or an error wrapping algorithms.ErrInvalidPolicy.
// Options.ServerTime and TTLSlack do not apply (redis_rate always reads
// TIME and sets its own TTL).
func NewRedisRate(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*RedisRate, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("redis: %s: %w", RedisRateName, err)
	}
	if client == nil {
		return nil, fmt.Errorf("redis: %s: nil client", RedisRateName)
	}
	r := &RedisRate{
		limiter: redis_rate.NewLimiter(client),
		limit:   redis_rate.Limit{Rate: int(p.Limit), Period: p.Window, Burst: int(p.Burst)},
		prefix:  "{",
		timeout: opts.Timeout,
	}
	if prefix != "" {
		r.prefix = "{" + prefix + ":"
	}
	return r, nil
}

// Allow implements algorithms.Limiter with AllowN; now is ignored.
func (r *RedisRate) Allow(_ time.Duration, key string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("redis: %s: %w: %d", RedisRateName, algorithms.ErrInvalidCost, cost)
	}
	ctx := context.Background()
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	above := cost > int64(r.limit.Burst)
	n := int(cost)
	if above {
		n = 0 // only read the state, for Remaining and ResetAfter
	}
	res, err := r.limiter.AllowN(ctx, r.prefix+key+"}", r.limit, n)
	if err != nil {
		return algorithms.Decision{}, backendError(RedisRateName, ctx.Err() != nil, err)
	}
	d := algorithms.Decision{
		Allowed:    !above && res.Allowed > 0,
		Remaining:  max(int64(res.Remaining), 0),
		ResetAfter: max(res.ResetAfter, 0),
	}
	switch {
	case above:
		d.RetryAfter = algorithms.Never
	case !d.Allowed:
		d.RetryAfter = max(res.RetryAfter, 1)
	}
	return d, nil
}
