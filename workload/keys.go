package workload

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
)

// keyChunk is how many synthetic key names are built at once: a stream
// names its keys in chunks of keyChunk, the first time one of a chunk's
// keys is drawn, so that a run over millions of keys builds no name before
// its first arrival, holds only the names of the chunks it has drawn
// from, and allocates none per arrival.
const keyChunk = 1 << 12

// keyNames returns the key names "k{from}" .. "k{to-1}". They are slices
// of one string, so building them costs two allocations whatever their
// number.
func keyNames(from, to int) []string {
	var b strings.Builder
	ends := make([]int, to-from)
	var buf [24]byte
	for i := from; i < to; i++ {
		b.WriteByte('k')
		b.Write(strconv.AppendInt(buf[:0], int64(i), 10))
		ends[i-from] = b.Len()
	}
	all := b.String()
	keys := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		keys[i] = all[start:end]
		start = end
	}
	return keys
}

// keySet names the n synthetic keys of a stream, chunk by chunk as they
// are drawn. Not safe for concurrent use.
type keySet struct {
	n      int
	first  []string   // the first chunk's names, once one of them is drawn
	chunks [][]string // every chunk's names, for n > keyChunk; nil until drawn
}

func newKeySet(n int) keySet {
	k := keySet{n: n}
	if n > keyChunk {
		k.chunks = make([][]string, (n+keyChunk-1)/keyChunk)
	}
	return k
}

// name returns the name of key i (0 <= i < n). Its first branch is the
// hot path of every stream with at most keyChunk keys, small enough to
// inline.
func (k *keySet) name(i int) string {
	if i < len(k.first) {
		return k.first[i]
	}
	return k.build(i)
}

// build names the keys of key i's chunk, the first time one of them is
// drawn, and returns i's name.
func (k *keySet) build(i int) string {
	c, from := i/keyChunk, i/keyChunk*keyChunk
	if c == 0 {
		k.first = keyNames(0, min(keyChunk, k.n))
		if k.chunks != nil {
			k.chunks[0] = k.first
		}
		return k.first[i]
	}
	if k.chunks[c] == nil {
		k.chunks[c] = keyNames(from, min(from+keyChunk, k.n))
	}
	return k.chunks[c][i-from]
}

// roundRobin hands out keys in turn: k0, k1, ..., k{n-1}, k0, ...
type roundRobin struct {
	keySet
	next int
}

func newRoundRobin(n int) roundRobin {
	return roundRobin{keySet: newKeySet(n)}
}

func (r *roundRobin) key() string {
	i := r.next
	if r.next++; r.next == r.n {
		r.next = 0
	}
	if i < len(r.first) { // name's hot path, spelled out to inline key
		return r.first[i]
	}
	return r.build(i)
}

// pcgStream is the PCG stream selector paired with Spec.Seed ("ratebenc" in
// ASCII), fixed so that a seed means the same sequence in every release.
const pcgStream = 0x7261746562656e63

// newRand returns the generator's own source: a PCG seeded with seed, never
// the global source, and the Rand that draws from it.
func newRand(seed uint64) (*rand.PCG, *rand.Rand) {
	pcg := rand.NewPCG(seed, pcgStream)
	return pcg, rand.New(pcg)
}

// uniformKey returns a key index in [0, n) from 64 random bits by
// multiply-shift (Lemire): the bias is below n/2^64, far under anything a
// run can measure, and it costs no division and no rejection loop.
func uniformKey(u uint64, n int) int {
	hi, _ := bits.Mul64(u, uint64(n))
	return int(hi)
}
