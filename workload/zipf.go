package workload

import "math/rand/v2"

func checkZipf(s Spec) error { return needRate(s, "zipf") }

func paramsZipf(s Spec, p map[string]any) {
	p["rate"] = s.Rate
	p["zipf_s"] = s.ZipfS
	p["seed"] = s.Seed
}

// zipfStream is a Poisson process at Rate whose keys are drawn by
// rand.Zipf with v = 1 over Keys keys: key k{i} has probability
// proportional to 1/(i+1)^ZipfS, so k0 is the most popular.
type zipfStream struct {
	clock poissonClock
	zipf  *rand.Zipf // nil when there is one key
	keys  keySet
	cost  int64
	done  bool
}

func newZipf(s Spec) (Stream, error) {
	_, rng := newRand(s.Seed)
	z := &zipfStream{clock: newPoissonClock(s, rng), keys: newKeySet(s.Keys), cost: s.Cost}
	if s.Keys > 1 {
		z.zipf = rand.NewZipf(rng, s.ZipfS, 1, uint64(s.Keys-1))
	}
	return z, nil
}

func (z *zipfStream) Next() (Arrival, bool) {
	if z.done {
		return Arrival{}, false
	}
	at, ok := z.clock.next()
	if !ok {
		z.done = true
		return Arrival{}, false
	}
	k := uint64(0)
	if z.zipf != nil {
		k = z.zipf.Uint64()
	}
	return Arrival{At: at, Key: z.keys.name(int(k)), Cost: z.cost}, true
}

func (z *zipfStream) Err() error { return nil }

// Close implements Stream; a synthetic stream holds nothing.
func (z *zipfStream) Close() error { return nil }
