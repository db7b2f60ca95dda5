package keyed

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ratebench/ratebench/algorithms"
)

// minIndex is the initial number of buckets of a shard's index.
const minIndex = 8

// slot holds one key. word is the state on the compact path and, on the
// generic path, the instant (ns) from which the key is as good as new.
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
//
// heap holds every live slot once, keyed by the instant from which its key
// is as good as new, as recorded when it was pushed or last looked at
// (12 bytes per key).
type shardState struct {
	mu     sync.RWMutex
	index  []uint32
	chunks [][]slot
	lims   [][]algorithms.Limiter // generic path, parallel to chunks
	free   []uint32               // freed slot indices, reused first
	heap   fullHeap
	used   uint32 // slots handed out so far (high-water mark)
	cap    uint32 // this shard's share of MaxKeys
	live   int    // keys held: used - len(free)
	// scratch is the state a new key is decided on, on the compact path,
	// before it has a slot; only under the write lock.
	scratch atomic.Int64
	// probes counts the reads of a key's current full-at (under the write
	// lock), for the tests that check finding a victim does not scan.
	probes uint64
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

// insert stores key (already copied), whose state is as good as new from
// at, in a slot and indexes it: a freed slot, a new one, or, with evict,
// the slot of the top of the heap (found by settle), whose key it drops,
// counting the eviction, and counting it lossy when told that key was not
// as good as new. The caller holds s.mu for writing and sets the slot's
// word (and limiter).
func (l *Limiter) insert(s *shard, h uint64, key string, at int64, evict, lossy bool) uint32 {
	var i uint32
	switch {
	case evict:
		i = s.heap.slot[0]
		if lossy {
			l.lossy.Add(1)
		}
		l.evictions.Add(1)
		l.drop(s, i)
		s.heap.at[0] = at
		s.heap.down(0)
	case len(s.free) > 0:
		i = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		s.heap.push(at, i)
	default: // s.used < s.cap: the caller checked
		i = s.used
		if i&l.chunkMask == 0 {
			n := min(l.chunkMask+1, s.cap-i)
			s.chunks = append(s.chunks, make([]slot, n))
			if l.rule == nil {
				s.lims = append(s.lims, make([]algorithms.Limiter, n))
			}
		}
		s.used++
		s.heap.push(at, i)
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

// fullAt returns the instant (ns) from which the key in slot i, in its
// current state, is as good as new: the algorithm's FullAt of its word on
// the compact path, the word itself on the generic path. It counts a
// probe; the caller holds s.mu for writing.
func (l *Limiter) fullAt(s *shard, i uint32) int64 {
	s.probes++
	w := l.slot(s, i).word.Load()
	if l.rule != nil {
		return int64(l.rule.FullAt(w))
	}
	return w
}

// settle finds the key of s to forget first and returns the instant from
// which it is as good as new, leaving it at the top of the heap. It looks
// at the top: if its key is as good as new at now, that is the one (its
// record, a lower bound, stays as it is); if its key has moved later than
// recorded, it records the new instant, moves the slot down and looks
// again. Otherwise the top is up to date and later than now, and every
// other key's instant is at least its recorded one, which is at least the
// top's: the top's is the first instant a slot of s can be freed without
// loss. The heap is not empty; the caller holds s.mu for writing.
func (l *Limiter) settle(s *shard, now int64) int64 {
	h := &s.heap
	for {
		at := l.fullAt(s, h.slot[0])
		if at <= h.at[0] {
			// Equal, unless a WordRule broke its contract and moved back:
			// a smaller top keeps the heap ordered.
			h.at[0] = at
			return at
		}
		if at <= now {
			return at
		}
		h.at[0] = at
		h.down(0)
	}
}

// sweep drops every key of s that is as good as new at now, popping them
// from the heap; the caller holds s.mu for writing.
func (l *Limiter) sweep(s *shard, now int64) int {
	h := &s.heap
	n := 0
	for len(h.at) > 0 && h.at[0] <= now {
		i := h.slot[0]
		if at := l.fullAt(s, i); at > now {
			h.at[0] = at // later than recorded, since recorded <= now
			h.down(0)
			continue
		}
		h.pop()
		l.drop(s, i)
		s.free = append(s.free, i)
		n++
	}
	return n
}

// fullHeap is a binary min-heap of slots by a recorded instant (ns), in
// two parallel slices (12 bytes per entry rather than a padded 16).
type fullHeap struct {
	at   []int64
	slot []uint32
}

func (h *fullHeap) push(at int64, i uint32) {
	h.at = append(h.at, at)
	h.slot = append(h.slot, i)
	h.up(len(h.at) - 1)
}

// pop removes the top.
func (h *fullHeap) pop() {
	n := len(h.at) - 1
	h.at[0], h.slot[0] = h.at[n], h.slot[n]
	h.at, h.slot = h.at[:n], h.slot[:n]
	if n > 0 {
		h.down(0)
	}
}

func (h *fullHeap) up(k int) {
	at, i := h.at[k], h.slot[k]
	for k > 0 {
		p := (k - 1) / 2
		if h.at[p] <= at {
			break
		}
		h.at[k], h.slot[k] = h.at[p], h.slot[p]
		k = p
	}
	h.at[k], h.slot[k] = at, i
}

func (h *fullHeap) down(k int) {
	n := len(h.at)
	at, i := h.at[k], h.slot[k]
	for {
		c := 2*k + 1
		if c >= n {
			break
		}
		if c+1 < n && h.at[c+1] < h.at[c] {
			c++
		}
		if at <= h.at[c] {
			break
		}
		h.at[k], h.slot[k] = h.at[c], h.slot[c]
		k = c
	}
	h.at[k], h.slot[k] = at, i
}
