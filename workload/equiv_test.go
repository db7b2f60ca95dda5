package workload

import (
	"hash/fnv"
	"strconv"
	"testing"
	"time"
)

// equivCases are specs of every generator and form, with a shard, and
// the fingerprint of the arrivals that Spec's own stream yielded before
// the generators had a type each: Spec.Source must yield the same.
var equivCases = []struct {
	name  string
	spec  Spec
	shard Shard
	want  string // fingerprint
}{
	{name: "constant", spec: Spec{Name: "constant", Rate: 333.3, Duration: 3 * time.Second, Keys: 3, Cost: 2}, want: "1000:a1cf61ed9a754755"},
	{name: "constant shard", spec: Spec{Name: "constant", Rate: 100, Duration: time.Second}, shard: Shard{I: 1, N: 3}, want: "33:95b19c8f5354eeb9"},
	{name: "poisson", spec: Spec{Name: "poisson", Rate: 250, Duration: 2 * time.Second, Keys: 7, Seed: 5}, want: "501:b01200dba97753c7"},
	{name: "poisson shard", spec: Spec{Name: "poisson", Rate: 250, Duration: 2 * time.Second, Keys: 20, Seed: 5}, shard: Shard{I: 2, N: 3}, want: "153:25e1ea3b71013fc8"},
	{name: "burst n every", spec: Spec{Name: "burst", Duration: 5500 * time.Millisecond, Keys: 4, BurstSize: 7, BurstEvery: 300 * time.Millisecond}, want: "133:f3c4fd2aebe03e9"},
	{name: "burst defaults", spec: Spec{Name: "burst", Duration: 3 * time.Second}, want: "30:54dced5caf668455"},
	{name: "burst on/off", spec: Spec{Name: "burst", Rate: 90, Duration: 4 * time.Second, Keys: 2, On: 300 * time.Millisecond, Off: 450 * time.Millisecond}, want: "158:dcd85557fdd1f377"},
	{name: "boundary", spec: Spec{Name: "boundary", Duration: 10 * time.Second, Limit: 100, Window: time.Second}, want: "1000:b0f3a9ea122ad7f5"},
	{name: "boundary first request", spec: Spec{Name: "boundary", Duration: 10 * time.Second, Limit: 7, Window: time.Second, Keys: 3, Align: AlignFirstRequest, EdgeOffset: 5 * time.Millisecond}, want: "57:847df56ad41d33d6"},
	{name: "boundary edge", spec: Spec{Name: "boundary", Duration: 9 * time.Second, Limit: 50, Window: 500 * time.Millisecond, Edge: 3, EveryWindows: 4}, want: "500:b487ebbb798014d7"},
	{name: "ramp up", spec: Spec{Name: "ramp", Rate: 10, RateEnd: 300, Duration: 3 * time.Second, Keys: 2}, want: "465:6899e4e68219c450"},
	{name: "ramp down", spec: Spec{Name: "ramp", Rate: 300, RateEnd: 1, Duration: 3 * time.Second}, want: "452:8a92b63d80a9ca62"},
	{name: "zipf", spec: Spec{Name: "zipf", Rate: 400, Duration: 2 * time.Second, Keys: 100, Seed: 9}, want: "824:d7aee6dc3be6c0a9"},
	{name: "zipf s shard", spec: Spec{Name: "zipf", Rate: 400, Duration: 2 * time.Second, Keys: 50, ZipfS: 1.7, Seed: 2}, shard: Shard{I: 0, N: 4}, want: "404:8c7b454191ed8b10"},
}

// fingerprint is the count of arrivals and an FNV-1a hash of them all.
func fingerprint(as []Arrival) string {
	h := fnv.New64a()
	for _, a := range as {
		h.Write(strconv.AppendInt(nil, int64(a.At), 10))
		h.Write([]byte(" " + a.Key + " "))
		h.Write(strconv.AppendInt(nil, a.Cost, 10))
		h.Write([]byte("\n"))
	}
	return strconv.Itoa(len(as)) + ":" + strconv.FormatUint(h.Sum64(), 16)
}

// TestSourceEquivalent: for every generator, the Source a Spec makes
// yields exactly the arrivals the Spec yielded before, whole and sharded.
func TestSourceEquivalent(t *testing.T) {
	for _, tc := range equivCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := fingerprint(drainShard(t, tc.spec, tc.shard)); got != tc.want {
				t.Errorf("arrivals %s, want %s", got, tc.want)
			}
		})
	}
}
