package workload

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
)

// keyNames returns the n key names "k0" .. "k{n-1}". They are slices of one
// string, so building them costs two allocations whatever n is, and handing
// one out in an Arrival costs none.
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

// roundRobin hands out keys in turn: k0, k1, ..., k{n-1}, k0, ...
type roundRobin struct {
	keys []string
	next int
}

func newRoundRobin(n int) roundRobin {
	return roundRobin{keys: keyNames(n)}
}

func (r *roundRobin) key() string {
	k := r.keys[r.next]
	r.next++
	if r.next == len(r.keys) {
		r.next = 0
	}
	return k
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
