package workload

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// namedKeys is how many synthetic key names ("k0" .. "k65535", about 1.4 MB)
// are built once per process and shared by every stream, so that handing
// one out costs nothing. The keys beyond travel as their index alone and
// are named by whoever reads them (KeyBuf): a run over millions of keys
// builds no names in advance and allocates none per arrival.
const namedKeys = 1 << 16

var keyCache struct {
	once  sync.Once
	names []string
}

// cachedNames returns the shared names of the first namedKeys keys.
func cachedNames() []string {
	keyCache.once.Do(func() { keyCache.names = keyNames(namedKeys) })
	return keyCache.names
}

// keyNames returns the n key names "k0" .. "k{n-1}". They are slices of one
// string, so building them costs two allocations whatever n is.
func keyNames(n int) []string {
	var b strings.Builder
	ends := make([]int, n)
	var buf [24]byte
	for i := range n {
		b.WriteByte('k')
		b.Write(strconv.AppendInt(buf[:0], int64(i), 10))
		ends[i] = b.Len()
	}
	all := b.String()
	keys := make([]string, n)
	start := 0
	for i, end := range ends {
		keys[i] = all[start:end]
		start = end
	}
	return keys
}

// keySet is the n synthetic keys of a stream.
type keySet struct {
	n     int
	names []string // the shared names, for indexes below namedKeys
}

func newKeySet(n int) keySet { return keySet{n: n, names: cachedNames()} }

// arrival returns the arrival of key i at at.
func (k keySet) arrival(at time.Duration, i int, cost int64) Arrival {
	a := Arrival{At: at, KeyIndex: i, Cost: cost}
	if i < len(k.names) {
		a.Key = k.names[i]
	}
	return a
}

// roundRobin hands out key indexes in turn: 0, 1, ..., n-1, 0, ...
type roundRobin struct {
	keySet
	next int
}

func newRoundRobin(n int) roundRobin {
	return roundRobin{keySet: newKeySet(n)}
}

// arrival returns an arrival at at for the next key in turn.
func (r *roundRobin) arrival(at time.Duration, cost int64) Arrival {
	a := r.keySet.arrival(at, r.next, cost)
	r.next++
	if r.next == r.n {
		r.next = 0
	}
	return a
}

// KeyBuf names the keys of arrivals without allocating. The zero value is
// ready to use. It is not safe for concurrent use: one per goroutine.
type KeyBuf struct{ b []byte }

// Name returns a's key: a.Key, or for a synthetic key that travels as its
// index alone, "k" and the index formatted into the buffer. The string
// then shares the buffer's bytes: it is valid only until the next call of
// Name on the same KeyBuf, and whoever keeps it must copy it
// (strings.Clone).
func (k *KeyBuf) Name(a Arrival) string {
	if a.Key != "" {
		return a.Key
	}
	k.b = strconv.AppendInt(append(k.b[:0], 'k'), int64(a.KeyIndex), 10)
	return unsafe.String(unsafe.SliceData(k.b), len(k.b))
}

// KeyName returns a's key as a string of its own. It allocates for a key
// that travels as its index alone: hot paths use a KeyBuf.
func (a Arrival) KeyName() string {
	if a.Key != "" {
		return a.Key
	}
	return "k" + strconv.Itoa(a.KeyIndex)
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
