package redis

import (
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
)

// BatchStep is one decision of DecideBatch.
type BatchStep struct {
	L    *Limiter
	At   time.Duration
	Key  string
	Cost int64
}

// DecideBatch decides steps as one batch, in order, the way a Batcher's
// dispatcher sends a batch (one script call per script and slot, in one
// pipeline), and returns their decisions, or the first error.
func DecideBatch(client goredis.UniversalClient, steps []BatchStep) ([]algorithms.Decision, error) {
	cs := make([]*call, len(steps))
	for i, s := range steps {
		cs[i] = &call{l: s.L, key: s.L.Key(s.Key), now: int64(s.At), cost: min(s.Cost, s.L.capacity+1)}
	}
	_, single := client.(*goredis.Client)
	var e executor
	e.run(client, !single, 5*time.Second, cs)
	out := make([]algorithms.Decision, len(cs))
	for i, c := range cs {
		if c.err != nil {
			return nil, c.err
		}
		out[i] = c.l.decode(c.res[:c.l.algo.width], c.cost)
	}
	return out, nil
}

// KeySlot is keySlot.
var KeySlot = keySlot
