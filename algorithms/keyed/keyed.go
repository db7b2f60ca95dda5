// Package keyed gives every key its own rate-limiter state, as every peer
// library does: a sharded table of keys whose size is bounded, that evicts
// the idlest key when full and can sweep keys whose state is full again.
//
// A keyed Limiter is itself an algorithms.Limiter, and it has two layouts:
//
//   - compact, when the limiter made for the policy implements
//     algorithms.WordRule (GCRA, token bucket): a key is one int64 word
//     beside its key string, decided with one compare-and-swap under its
//     shard's read lock; about 36 bytes per key beyond the key's own bytes
//     at a million keys (BenchmarkMemoryPerKey);
//   - generic, for any other limiter: one instance per key, made by the
//     constructor passed to New, plus the instant the key was last used.
//
// Time is passed in, never read: now is a time.Duration since the clock's
// zero, as everywhere in ratebench.
package keyed

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

const (
	defaultMaxKeys = 1 << 20
	defaultShards  = 64
	// maxShardKeys bounds the keys of one shard so that a slot index plus
	// one fits the low bits of a uint32 index entry.
	maxShardKeys = 1 << 31
	// maxChunkBits: slots are allocated in chunks of at most 1024, so that
	// growth never copies them and waste is at most one chunk per shard.
	maxChunkBits = 10
	// samples is how many slots eviction looks at to pick a victim.
	samples = 8
)

// ErrInvalidOptions is wrapped by the error New returns for bad Options.
var ErrInvalidOptions = errors.New("keyed: invalid options")

// Options bound and tune a keyed Limiter. The zero value gives the defaults.
type Options struct {
	// MaxKeys bounds the number of keys held at once; 0 means 1<<20. When a
	// new key arrives and its shard is at its share of MaxKeys, a key of
	// that shard is evicted first: the idlest of 8 sampled, preferring one
	// whose state is full (evicting it loses nothing). Shards get equal
	// shares (within one), which add up to MaxKeys exactly.
	MaxKeys int
	// Shards is the number of independently locked parts of the table, a
	// power of two no larger than MaxKeys; 0 means 64, or the largest power
	// of two not above MaxKeys when that is smaller.
	Shards int
	// IdleAfter is, on the generic path, how long a key must go unused for
	// its limiter to be as good as new, so that Sweep may drop it and
	// eviction counts as lossless; 0 means 2W + B*W/L, which covers every
	// algorithm of ratebench. The compact path asks the algorithm instead
	// (algorithms.WordRule.Full) and ignores it.
	IdleAfter time.Duration
}

// Stats is a snapshot of a keyed Limiter's table.
type Stats struct {
	Keys      int   // keys held now, <= MaxKeys
	Evictions int64 // keys dropped to make room for a new one, since New
	// LossyEvictions counts the evictions of keys whose state was not full:
	// if such a key comes back it starts from a fresh, full state, so it
	// gets more quota than it would have had.
	LossyEvictions int64
}

// Limiter is a rate limiter per key: each key decides against its own
// state, made for the policy given to New. It implements
// algorithms.Limiter. The zero value is not usable; use New. Safe for
// concurrent use: a decision for a key already held takes the read lock of
// the key's shard and does not allocate; only inserting, evicting and
// sweeping take a shard's write lock.
type Limiter struct {
	seed       maphash.Seed
	shards     []shard
	shardShift uint   // 64 - log2(len(shards)): shard = hash >> shardShift
	slotBits   uint   // low bits of an index entry holding slot+1
	slotMask   uint32 // 1<<slotBits - 1
	chunkBits  uint
	chunkMask  uint32

	rule       algorithms.WordRule // compact path; nil on the generic path
	policy     algorithms.Policy
	newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
	idleAfter  int64 // ns, generic path

	evictions atomic.Int64
	lossy     atomic.Int64
}

// New returns a per-key limiter whose keys each get a limiter made by
// newLimiter(p). It calls newLimiter(p) once here: an error (for an invalid
// policy, one wrapping algorithms.ErrInvalidPolicy) is returned wrapped, and
// when the limiter implements algorithms.WordRule, keys are kept on the
// compact path and newLimiter is not called again. Bad options give an
// error wrapping ErrInvalidOptions.
func New(p algorithms.Policy, newLimiter func(algorithms.Policy) (algorithms.Limiter, error), opts Options) (*Limiter, error) {
	if newLimiter == nil {
		return nil, fmt.Errorf("%w: newLimiter is nil", ErrInvalidOptions)
	}
	proto, err := newLimiter(p)
	if err != nil {
		return nil, fmt.Errorf("keyed: %w", err)
	}
	l := &Limiter{seed: maphash.MakeSeed(), policy: p, newLimiter: newLimiter}
	if rule, ok := proto.(algorithms.WordRule); ok {
		l.rule = rule
	} else if l.idleAfter, err = idleAfter(p, opts.IdleAfter); err != nil {
		return nil, err
	}
	if err := l.layout(opts); err != nil {
		return nil, err
	}
	return l, nil
}

// idleAfter returns the generic path's idle span in ns.
func idleAfter(p algorithms.Policy, given time.Duration) (int64, error) {
	switch {
	case given < 0:
		return 0, fmt.Errorf("%w: IdleAfter %v is negative", ErrInvalidOptions, given)
	case given > 0:
		return int64(given), nil
	}
	v, err := p.Validate()
	if err != nil {
		return 0, fmt.Errorf("%w: IdleAfter must be given for policy %v: %w", ErrInvalidOptions, p, err)
	}
	// Validate bounds W and B*T by MaxInt64/4 each: no overflow.
	return int64(2*v.Window + time.Duration(v.Burst)*v.Interval()), nil
}

// layout validates the options and allocates the shards.
func (l *Limiter) layout(opts Options) error {
	maxKeys, shards := opts.MaxKeys, opts.Shards
	switch {
	case maxKeys < 0:
		return fmt.Errorf("%w: MaxKeys %d is negative", ErrInvalidOptions, maxKeys)
	case shards < 0 || shards&(shards-1) != 0:
		return fmt.Errorf("%w: Shards %d is not a power of two", ErrInvalidOptions, shards)
	}
	if maxKeys == 0 {
		maxKeys = defaultMaxKeys
	}
	if shards == 0 {
		shards = min(defaultShards, 1<<(bits.Len(uint(maxKeys))-1))
	}
	if shards > maxKeys {
		return fmt.Errorf("%w: Shards %d is more than MaxKeys %d", ErrInvalidOptions, shards, maxKeys)
	}
	per, extra := maxKeys/shards, maxKeys%shards
	largest := per
	if extra > 0 {
		largest++
	}
	if largest > maxShardKeys {
		return fmt.Errorf("%w: MaxKeys %d over %d shards is more than %d per shard", ErrInvalidOptions, maxKeys, shards, maxShardKeys)
	}
	l.shardShift = 64 - uint(bits.Len(uint(shards))-1)
	l.slotBits = uint(bits.Len(uint(largest)))
	l.slotMask = uint32(uint64(1)<<l.slotBits - 1)
	l.chunkBits = min(maxChunkBits, uint(bits.Len(uint(largest-1))))
	l.chunkMask = 1<<l.chunkBits - 1
	l.shards = make([]shard, shards)
	for k := range l.shards {
		s := &l.shards[k]
		s.cap = uint32(per)
		if k < extra {
			s.cap++
		}
		s.index = make([]uint32, minIndex)
		s.rng = uint64(k+1) * 0x9e3779b97f4a7c15 // any non-zero seed
	}
	return nil
}

// Allow implements algorithms.Limiter: it decides a request of cost units
// (>= 1) for key at the instant now against key's own state. A key not held
// yet starts fresh (full); it is stored only if the request is admitted, so
// that a rejection, which consumes nothing, never evicts another key. The
// key is copied when stored: the caller may reuse its bytes. Errors:
// algorithms.ErrInvalidCost, or what the per-key limiter returns, wrapped.
func (l *Limiter) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("keyed: %w: %d", algorithms.ErrInvalidCost, cost)
	}
	h := maphash.String(l.seed, key)
	s := &l.shards[h>>l.shardShift]
	s.mu.RLock()
	i, ok := l.find(s, h, key)
	if !ok {
		s.mu.RUnlock()
		return l.allowNew(s, h, now, key, cost)
	}
	if l.rule == nil {
		d, err := l.decide(s, i, now, cost)
		s.mu.RUnlock()
		return d, err
	}
	// The compact path, spelled out: one call less on the hot path.
	d, err := l.rule.DecideWord(&l.slot(s, i).word, now, cost)
	s.mu.RUnlock()
	if err != nil {
		return d, fmt.Errorf("keyed: %w", err)
	}
	return d, nil
}

// decide decides for the key in slot i; the caller holds s.mu (read or
// write), so the slot cannot be evicted meanwhile.
func (l *Limiter) decide(s *shard, i uint32, now time.Duration, cost int64) (algorithms.Decision, error) {
	sl := l.slot(s, i)
	if l.rule != nil {
		d, err := l.rule.DecideWord(&sl.word, now, cost)
		if err != nil {
			return d, fmt.Errorf("keyed: %w", err)
		}
		return d, nil
	}
	// The stored key, not the caller's, so the caller's does not escape.
	d, err := s.lims[i>>l.chunkBits][i&l.chunkMask].Allow(now, sl.key, cost)
	touch(&sl.word, now)
	if err != nil {
		return d, fmt.Errorf("keyed: %w", err)
	}
	return d, nil
}

// touch raises the last-used instant in w to now (never lowers it, so a
// late goroutine with an older now cannot make a key look idle).
func touch(w *atomic.Int64, now time.Duration) {
	for {
		old := w.Load()
		if int64(now) <= old || w.CompareAndSwap(old, int64(now)) {
			return
		}
	}
}

// allowNew decides for a key that was not held at the read lock, under the
// write lock: another goroutine may have inserted it meanwhile.
func (l *Limiter) allowNew(s *shard, h uint64, now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := l.find(s, h, key); ok {
		return l.decide(s, i, now, cost)
	}
	stored := strings.Clone(key)
	if l.rule != nil {
		var w atomic.Int64
		w.Store(l.rule.InitialWord())
		d, err := l.rule.DecideWord(&w, now, cost)
		if err != nil {
			return d, fmt.Errorf("keyed: %w", err)
		}
		if d.Allowed {
			i := l.insert(s, h, stored, now)
			l.slot(s, i).word.Store(w.Load())
		}
		return d, nil
	}
	lim, err := l.newLimiter(l.policy)
	if err != nil {
		return algorithms.Decision{}, fmt.Errorf("keyed: limiter for a new key: %w", err)
	}
	d, err := lim.Allow(now, stored, cost)
	if err != nil {
		return d, fmt.Errorf("keyed: %w", err)
	}
	if d.Allowed {
		i := l.insert(s, h, stored, now)
		l.slot(s, i).word.Store(int64(now))
		s.lims[i>>l.chunkBits][i&l.chunkMask] = lim
	}
	return d, nil
}

// Sweep drops every key whose state is, at now, the same as a fresh one, so
// that dropping it loses nothing: on the compact path the algorithm's Full,
// on the generic path a key unused for IdleAfter or longer. It returns how
// many keys it dropped; their slots are reused by later keys (the table
// does not shrink). It write-locks one shard at a time.
func (l *Limiter) Sweep(now time.Duration) int {
	n := 0
	for k := range l.shards {
		s := &l.shards[k]
		s.mu.Lock()
		n += l.sweep(s, now)
		s.mu.Unlock()
	}
	return n
}

// Stats returns the number of keys held and the eviction counts.
func (l *Limiter) Stats() Stats {
	keys := 0
	for k := range l.shards {
		s := &l.shards[k]
		s.mu.RLock()
		keys += s.live
		s.mu.RUnlock()
	}
	return Stats{Keys: keys, Evictions: l.evictions.Load(), LossyEvictions: l.lossy.Load()}
}
