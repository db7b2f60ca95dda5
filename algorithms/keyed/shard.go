package keyed

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ratebench/ratebench/algorithms"
)

// minIndex is the initial number of buckets of a shard's index.
const minIndex = 8

// slot holds one key. word is the state on the compact path and the
// last-used instant (ns) on the generic path.
type slot struct {
	key  string
	word atomic.Int64
}

// shardState is one independently locked part of the table.
//
// Keys are found through index, an open-addressing hash table with linear
// probing and backward-shift deletion (no tombstones). An entry is 0 when
// empty, else slot+1 in the low slotBits bits and a tag of hash bits above,
// so that a probe compares a key string only when the tags match. It holds
// at most 3/4 of its buckets and doubles when it would hold more. A Go map
// would cost about 56 bytes per key at a million keys, plus a slot-to-key
// list for eviction; this costs 4 bytes per bucket.
//
// Slots live in chunks that are never moved, so a slot index stays valid
// until the slot is freed, which needs the write lock.
type shardState struct {
	mu     sync.RWMutex
	index  []uint32
	chunks [][]slot
	lims   [][]algorithms.Limiter // generic path, parallel to chunks
	free   []uint32               // freed slot indices, reused first
	used   uint32                 // slots handed out so far (high-water mark)
	cap    uint32                 // this shard's share of MaxKeys
	live   int                    // keys held: used - len(free)
	rng    uint64                 // xorshift state for eviction samples
}

// shard pads shardState to a multiple of 128 bytes, so that two shards'
// locks never share a cache line (or an adjacent-line prefetch pair).
type shard struct {
	shardState
	_ [(128 - unsafe.Sizeof(shardState{})%128) % 128]byte
}

func (l *Limiter) hash(key string) uint64 { return maphash.String(l.seed, key) }

// tag returns the hash bits stored above the slot bits of an index entry.
// Bits from 24 up: the bucket uses the low bits, the shard the top ones.
func (l *Limiter) tag(h uint64) uint32 { return uint32(h>>24) << l.slotBits }

func (l *Limiter) slot(s *shard, i uint32) *slot {
	return &s.chunks[i>>l.chunkBits][i&l.chunkMask]
}

// find returns the slot of key, whose hash is h; the caller holds s.mu.
func (l *Limiter) find(s *shard, h uint64, key string) (uint32, bool) {
	tag := l.tag(h)
	mask := uint64(len(s.index) - 1)
	for b := h & mask; ; b = (b + 1) & mask {
		e := s.index[b]
		if e == 0 {
			return 0, false
		}
		if (e^tag)&^l.slotMask == 0 {
			i := e&l.slotMask - 1
			if l.slot(s, i).key == key {
				return i, true
			}
		}
	}
}

// insert stores key (already copied) in a slot, a freed one, a new one or
// an evicted one, and indexes it; the caller holds s.mu for writing and
// sets the slot's word (and limiter).
func (l *Limiter) insert(s *shard, h uint64, key string, now time.Duration) uint32 {
	var i uint32
	switch {
	case len(s.free) > 0:
		i = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
	case s.used < s.cap:
		i = s.used
		if i&l.chunkMask == 0 {
			n := min(l.chunkMask+1, s.cap-i)
			s.chunks = append(s.chunks, make([]slot, n))
			if l.rule == nil {
				s.lims = append(s.lims, make([]algorithms.Limiter, n))
			}
		}
		s.used++
	default:
		i = l.evict(s, now)
	}
	l.slot(s, i).key = key
	if (s.live+1)*4 > len(s.index)*3 {
		l.grow(s)
	}
	mask := uint64(len(s.index) - 1)
	b := h & mask
	for s.index[b] != 0 {
		b = (b + 1) & mask
	}
	s.index[b] = l.tag(h) | (i + 1)
	s.live++
	return i
}

// grow doubles the index and rehashes every entry into it.
func (l *Limiter) grow(s *shard) {
	old := s.index
	s.index = make([]uint32, 2*len(old))
	mask := uint64(len(s.index) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		b := l.hash(l.slot(s, e&l.slotMask-1).key) & mask
		for s.index[b] != 0 {
			b = (b + 1) & mask
		}
		s.index[b] = e
	}
}

// drop removes the key in slot i from the index and clears the slot (so
// that its key and limiter can be collected); the caller frees or reuses i.
func (l *Limiter) drop(s *shard, i uint32) {
	sl := l.slot(s, i)
	mask := uint64(len(s.index) - 1)
	b := l.hash(sl.key) & mask
	for s.index[b]&l.slotMask != i+1 {
		b = (b + 1) & mask
	}
	// Backward-shift deletion: pull later entries of the probe run into
	// the hole when the hole lies between their home bucket and them.
	for {
		s.index[b] = 0
		j := b
		for {
			j = (j + 1) & mask
			e := s.index[j]
			if e == 0 {
				sl.key = ""
				sl.word.Store(0)
				if l.rule == nil {
					s.lims[i>>l.chunkBits][i&l.chunkMask] = nil
				}
				s.live--
				return
			}
			home := l.hash(l.slot(s, e&l.slotMask-1).key) & mask
			if (j-home)&mask >= (j-b)&mask {
				s.index[b] = e
				b = j
				break
			}
		}
	}
}

// idle reports whether the key in slot i is, at now, as good as new, and a
// rank: the smaller, the idler (on the compact path the state word, in
// TAT or empty-at order; on the generic path the last-used instant).
func (l *Limiter) idle(s *shard, i uint32, now time.Duration) (bool, int64) {
	w := l.slot(s, i).word.Load()
	if l.rule != nil {
		return l.rule.Full(w, now), w
	}
	return int64(now)-w >= l.idleAfter, w
}

// evict picks the idlest of 8 sampled slots (all slots when the shard holds
// no more than 8), preferring one that is idle (full), drops its key,
// counts the eviction and returns the slot for reuse. The shard is full.
func (l *Limiter) evict(s *shard, now time.Duration) uint32 {
	var (
		best     uint32
		bestIdle bool
		bestRank int64
	)
	consider := func(i uint32, first bool) {
		idle, rank := l.idle(s, i, now)
		if first || (idle && !bestIdle) || (idle == bestIdle && rank < bestRank) {
			best, bestIdle, bestRank = i, idle, rank
		}
	}
	if s.used <= samples {
		for i := range s.used {
			consider(i, i == 0)
		}
	} else {
		for k := range samples {
			// xorshift64, then a multiply-shift into [0, used).
			s.rng ^= s.rng << 13
			s.rng ^= s.rng >> 7
			s.rng ^= s.rng << 17
			hi, _ := bits.Mul64(s.rng, uint64(s.used))
			consider(uint32(hi), k == 0)
		}
	}
	l.drop(s, best)
	l.evictions.Add(1)
	if !bestIdle {
		l.lossy.Add(1)
	}
	return best
}

// sweep drops every idle key of s; the caller holds s.mu for writing.
func (l *Limiter) sweep(s *shard, now time.Duration) int {
	start := len(s.free)
	for _, e := range s.index {
		if e == 0 {
			continue
		}
		i := e&l.slotMask - 1
		if idle, _ := l.idle(s, i, now); idle {
			s.free = append(s.free, i)
		}
	}
	for _, i := range s.free[start:] {
		l.drop(s, i)
	}
	return len(s.free) - start
}
