// Package keyed gives every key its own rate-limiter state, as every peer
// library does: a sharded table of keys whose size is bounded. A key is
// forgotten only once its state is as good as new again, so that coming
// back fresh gives it nothing it would not have had: when a new key arrives
// at a shard full of keys that cannot be forgotten yet, the new key is
// refused (algorithms.Decision.TableFull) until one can, unless
// Options.OnFull asks for lossy eviction. Sweep drops the keys that can be
// forgotten ahead of time.
//
// A keyed Limiter is itself an algorithms.Limiter, and it has two layouts:
//
//   - compact, when the limiter made for the policy implements
//     algorithms.WordRule (GCRA, token bucket): a key is one int64 word
//     beside its key string, decided with one compare-and-swap under its
//     shard's read lock; the algorithm says from when a word is as good as
//     new (WordRule.FullAt). About 50 bytes per key beyond the key's own
//     bytes at a million keys, 12 of them for the heap below
//     (BenchmarkMemoryPerKey);
//   - generic, for any other limiter: one instance per key, made by the
//     constructor passed to New, plus the instant the key is as good as
//     new: the latest now+ResetAfter over its decisions. This trusts the
//     limiter's Decision.ResetAfter to mean that its state decides exactly
//     as a fresh one from then on, which every limiter of ratebench does
//     (for x-rate, up to the float64 rounding its adapter documents) or
//     says otherwise as an algorithms.Idler, whose IdleAfter then counts
//     as Options.IdleAfter does; another limiter that does not needs
//     Options.IdleAfter.
//
// Each shard keeps its keys in a min-heap by the instant each is as good
// as new, as recorded when it was stored or last looked at. A key's real
// instant only moves later as it is used, so a recorded one is a lower
// bound. To make room, keyed looks at the top and reads its real instant:
// at or before now, the key is forgotten; later than recorded, the record
// is brought up to date, the slot moves down and the new top is looked at;
// otherwise the top is up to date and later than now, so no key of the
// shard can be forgotten before that instant, which is the refusal's
// RetryAfter. Each move down is paid for by decisions that moved that
// key's state, so a new key costs O(log n) amortised, never a scan of the
// shard, and Sweep pops the same heap; decisions on held keys never touch
// it.
//
// Time is passed in, never read: now is a time.Duration since the clock's
// zero, as everywhere in ratebench. A key is forgotten only at an instant
// at or after the one from which it is as good as new; a request that
// comes for it later with an earlier instant (a clock that went back past
// the forget, e.g. between goroutines that read it at different times)
// finds a fresh state.
package keyed

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

const (
	defaultMaxKeys = 1 << 20
	defaultShards  = 64
	// minShardKeys is the share of MaxKeys below which the default number
	// of shards is reduced: a key competes only with its own shard's keys,
	// so small shards would refuse keys while others still have room.
	minShardKeys = 256
	// maxShardKeys bounds the keys of one shard so that a slot index plus
	// one fits the low bits of a uint32 index entry.
	maxShardKeys = 1 << 31
	// maxChunkBits: slots are allocated in chunks of at most 1024, so that
	// growth never copies them and waste is at most one chunk per shard.
	maxChunkBits = 10
)

// ErrInvalidOptions is wrapped by the error New returns for bad Options.
var ErrInvalidOptions = errors.New("keyed: invalid options")

// OnFull is what a keyed Limiter does with a new key whose shard is full of
// keys that cannot be forgotten yet (none is as good as new).
type OnFull int

const (
	// Reject refuses the new key, the default: its request is rejected
	// with Decision.TableFull and a RetryAfter up to the first instant a
	// key of its shard can be forgotten, and the key is not stored. No key
	// ever loses its state.
	Reject OnFull = iota
	// EvictLossy evicts the key of the shard that will be as good as new
	// the soonest, and takes the new key in. The evicted key, if it comes
	// back before that instant, starts fresh and gets quota it would not
	// have had: each such eviction counts in Stats.LossyEvictions. For uses
	// where the table's churn matters more than exact limits.
	EvictLossy
)

// String returns "reject" or "evict-lossy".
func (o OnFull) String() string {
	switch o {
	case Reject:
		return "reject"
	case EvictLossy:
		return "evict-lossy"
	}
	return fmt.Sprintf("OnFull(%d)", int(o))
}

// ParseOnFull is the OnFull that String names: "reject" or "evict-lossy".
func ParseOnFull(s string) (OnFull, error) {
	for _, o := range []OnFull{Reject, EvictLossy} {
		if s == o.String() {
			return o, nil
		}
	}
	return Reject, fmt.Errorf("%q: want %v or %v", s, Reject, EvictLossy)
}

// Options bound and tune a keyed Limiter. The zero value gives the defaults.
type Options struct {
	// MaxKeys bounds the number of keys held at once; 0 means 1<<20. It is
	// split over the shards in equal shares (within one, adding up to
	// MaxKeys exactly), and a key belongs to the shard its hash picks: a
	// new key competes only with the keys of its own shard. When that shard
	// is at its share, a key of it that is as good as new is forgotten to
	// make room (losslessly); when none is, OnFull decides. So a refusal
	// (Decision.TableFull) means that the key's shard is full, while other
	// shards may still have room.
	MaxKeys int
	// Shards is the number of independently locked parts of the table, a
	// power of two no larger than MaxKeys; 0 means 64, or fewer so that
	// each shard has a share of at least 256 keys (one shard below 512).
	Shards int
	// OnFull is what happens to a new key whose shard is full of keys that
	// cannot be forgotten; the zero value is Reject.
	OnFull OnFull
	// IdleAfter is, on the generic path, the least time a key is kept after
	// each of its decisions: a key can be forgotten from the latest
	// now + max(ResetAfter, IdleAfter) over its decisions. 0, the default,
	// trusts ResetAfter alone, which is exact for every limiter of
	// ratebench; a limiter that is an algorithms.Idler raises it to its
	// own IdleAfter. Give it for another limiter whose state is not as good
	// as new at now+ResetAfter. The compact path asks the algorithm
	// (algorithms.WordRule.FullAt) and ignores it.
	IdleAfter time.Duration
}

// Stats is a snapshot of a keyed Limiter's table and counters.
type Stats struct {
	Keys int // keys held now, <= MaxKeys
	// Evictions counts the keys dropped to make room for a new one, lossy
	// or not, since New (Sweep's drops are not counted).
	Evictions int64
	// LossyEvictions counts the evictions (with EvictLossy) of keys whose
	// state was not as good as new: if such a key comes back it starts from
	// a fresh, full state, so it gets more quota than it would have had.
	// Always 0 with Reject.
	LossyEvictions int64
	// TableFull counts the requests refused (Decision.TableFull) because
	// their new key's shard was full of keys that could not be forgotten.
	TableFull int64
}

// Limiter is a rate limiter per key: each key decides against its own
// state, made for the policy given to New. It implements
// algorithms.Limiter. The zero value is not usable; use New. Safe for
// concurrent use: a decision for a key already held takes the read lock of
// the key's shard and does not allocate, and so does, most of the time, the
// refusal of a new key at a full shard; only inserting, evicting, sweeping
// and bringing a shard's heap up to date take a shard's write lock.
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
	onFull     OnFull

	evictions atomic.Int64
	lossy     atomic.Int64
	tableFull atomic.Int64
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
	switch {
	case opts.IdleAfter < 0:
		return nil, fmt.Errorf("%w: IdleAfter %v is negative", ErrInvalidOptions, opts.IdleAfter)
	case opts.OnFull != Reject && opts.OnFull != EvictLossy:
		return nil, fmt.Errorf("%w: unknown %v", ErrInvalidOptions, opts.OnFull)
	}
	proto, err := newLimiter(p)
	if err != nil {
		return nil, fmt.Errorf("keyed: %w", err)
	}
	l := &Limiter{
		seed:       maphash.MakeSeed(),
		policy:     p,
		newLimiter: newLimiter,
		idleAfter:  int64(opts.IdleAfter),
		onFull:     opts.OnFull,
	}
	if rule, ok := proto.(algorithms.WordRule); ok {
		l.rule = rule
	}
	if idler, ok := proto.(algorithms.Idler); ok {
		l.idleAfter = max(l.idleAfter, int64(idler.IdleAfter()))
	}
	if err := l.layout(opts); err != nil {
		return nil, err
	}
	return l, nil
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
		shards = min(defaultShards, 1<<(bits.Len(uint(max(maxKeys/minShardKeys, 1)))-1))
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
	}
	return nil
}

// Allow implements algorithms.Limiter: it decides a request of cost units
// (>= 1) for key at the instant now against key's own state. A key not held
// yet starts fresh (full); it is stored only if the request is admitted or
// left the state short of full (a limiter that counts denied requests may
// take quota for a rejection), so that a rejection that consumes nothing
// never evicts another key, and one that consumes is not forgotten. When
// its shard is full and none of its keys can be forgotten at now, a new
// key is refused before its request is decided (with Reject, whatever the
// cost): the decision is rejected with TableFull set, Remaining 0, and
// RetryAfter and ResetAfter the time until a key of the shard can first be
// forgotten (exact: a new key at that instant is taken in, if nothing else
// happens), or algorithms.Never. The key is copied when stored: the caller
// may reuse its bytes. Errors: algorithms.ErrInvalidCost, or what the
// per-key limiter returns, wrapped.
func (l *Limiter) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("keyed: %w: %d", algorithms.ErrInvalidCost, cost)
	}
	h := maphash.String(l.seed, key)
	s := &l.shards[h>>l.shardShift]
	s.mu.RLock()
	i, ok := l.find(s, h, key)
	if !ok {
		d, refused := l.refuseShared(s, now)
		s.mu.RUnlock()
		if refused {
			return d, nil
		}
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
	raise(&sl.word, l.resetAt(now, d))
	if err != nil {
		return d, fmt.Errorf("keyed: %w", err)
	}
	return d, nil
}

// resetAt is, on the generic path, the instant from which a key's state is
// as good as new after decision d at now, if nothing else happens:
// now + max(ResetAfter, IdleAfter), saturating at math.MaxInt64 (never).
func (l *Limiter) resetAt(now time.Duration, d algorithms.Decision) int64 {
	t, span := int64(now), max(int64(d.ResetAfter), l.idleAfter)
	if t > 0 && span > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + span
}

// raise raises the instant in w to at, never lowers it: a key's state is as
// good as new only once every decision's reset has passed, so a decision
// at an earlier instant (a late goroutine, a clock that went back), whose
// reset may come sooner, cannot make the key forgettable early.
func raise(w *atomic.Int64, at int64) {
	for {
		old := w.Load()
		if at <= old || w.CompareAndSwap(old, at) {
			return
		}
	}
}

// allowNew decides for a key that was not held at the read lock, under the
// write lock: another goroutine may have inserted it meanwhile. It finds
// the key a slot first (a free one, or one whose key can be forgotten, or
// with EvictLossy the one closest to that), so that a refused key costs no
// allocation; then decides on a fresh state and stores the key if
// admitted, or if rejected with a state that is not as good as new (its
// FullAt or now+ResetAfter after now): dropping that state would give the
// key back the quota its rejection took.
func (l *Limiter) allowNew(s *shard, h uint64, now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := l.find(s, h, key); ok {
		return l.decide(s, i, now, cost)
	}
	evict, lossy := false, false
	if len(s.free) == 0 && s.used == s.cap {
		at := l.settle(s, int64(now))
		lossy = at > int64(now)
		if lossy && l.onFull == Reject {
			l.tableFull.Add(1)
			return refusal(at, now), nil
		}
		evict = true // the top of the heap
	}
	if l.rule != nil {
		// The shard's scratch word, not a local one that would escape to
		// the heap through the interface call: the write lock is held.
		s.scratch.Store(l.rule.InitialWord())
		d, err := l.rule.DecideWord(&s.scratch, now, cost)
		if err != nil {
			return d, fmt.Errorf("keyed: %w", err)
		}
		w := s.scratch.Load()
		if full := int64(l.rule.FullAt(w)); d.Allowed || full > int64(now) {
			i := l.insert(s, h, strings.Clone(key), full, evict, lossy)
			l.slot(s, i).word.Store(w)
		}
		return d, nil
	}
	stored := strings.Clone(key)
	lim, err := l.newLimiter(l.policy)
	if err != nil {
		return algorithms.Decision{}, fmt.Errorf("keyed: limiter for a new key: %w", err)
	}
	d, err := lim.Allow(now, stored, cost)
	if err != nil {
		return d, fmt.Errorf("keyed: %w", err)
	}
	if d.Allowed || d.ResetAfter > 0 {
		at := l.resetAt(now, d)
		i := l.insert(s, h, stored, at, evict, lossy)
		l.slot(s, i).word.Store(at)
		s.lims[i>>l.chunkBits][i&l.chunkMask] = lim
	}
	return d, nil
}

// refuseShared refuses a new key under s's read lock when that needs no
// change to the heap: with Reject, the shard is full and the top's record
// is its key's current instant, later than now (so is every other key's).
// A flood of new keys at a full shard then does not take its write lock,
// which would stall the decisions on its held keys. Otherwise the write
// lock's path decides.
func (l *Limiter) refuseShared(s *shard, now time.Duration) (algorithms.Decision, bool) {
	if l.onFull != Reject || len(s.free) > 0 || s.used < s.cap {
		return algorithms.Decision{}, false
	}
	at := s.heap.at[0]
	if at <= int64(now) {
		return algorithms.Decision{}, false
	}
	w := l.slot(s, s.heap.slot[0]).word.Load()
	if l.rule != nil {
		w = int64(l.rule.FullAt(w))
	}
	if w != at {
		return algorithms.Decision{}, false // moved since recorded
	}
	l.tableFull.Add(1)
	return refusal(at, now), true
}

// refusal is the decision for a new key refused at now because no slot of
// its shard frees before at.
func refusal(at int64, now time.Duration) algorithms.Decision {
	wait := algorithms.Never
	if t := int64(now); at != math.MaxInt64 && (t >= 0 || at <= math.MaxInt64+t) {
		wait = time.Duration(at - t)
	}
	return algorithms.Decision{RetryAfter: wait, ResetAfter: wait, TableFull: true}
}

// Sweep drops every key that is, at now, as good as new (its state decides
// as a fresh one from an instant at or before now), so that dropping it
// loses nothing, and returns how many it dropped; their slots are reused by
// later keys (the table does not shrink). It looks only at the keys whose
// recorded instant is at or before now, through each shard's heap, not at
// every key. It write-locks one shard at a time.
func (l *Limiter) Sweep(now time.Duration) int {
	n := 0
	for k := range l.shards {
		s := &l.shards[k]
		s.mu.Lock()
		n += l.sweep(s, int64(now))
		s.mu.Unlock()
	}
	return n
}

// Stats returns the number of keys held and the counters.
func (l *Limiter) Stats() Stats {
	keys := 0
	for k := range l.shards {
		s := &l.shards[k]
		s.mu.RLock()
		keys += s.live
		s.mu.RUnlock()
	}
	return Stats{
		Keys:           keys,
		Evictions:      l.evictions.Load(),
		LossyEvictions: l.lossy.Load(),
		TableFull:      l.tableFull.Load(),
	}
}

// LossyEvictions sums what the keyed limiters among lims forgot
// (Stats.LossyEvictions); the others count 0.
func LossyEvictions(lims []algorithms.Limiter) int64 {
	var n int64
	for _, l := range lims {
		if k, ok := l.(*Limiter); ok {
			n += k.Stats().LossyEvictions
		}
	}
	return n
}
