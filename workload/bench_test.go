package workload

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkNext measures one call to Next per generator, on runs long
// enough never to end (replay reopens its trace when it does).
func BenchmarkNext(b *testing.B) {
	const forever = 1 << 62
	specs := []Spec{
		{Name: "constant", Rate: 1e6, Duration: forever, Keys: 100},
		{Name: "poisson", Rate: 1e6, Duration: forever, Keys: 100, Seed: 1},
		{Name: "burst", Duration: forever, Keys: 100, BurstSize: 100, BurstEvery: time.Millisecond},
		{Name: "boundary", Duration: forever, Keys: 100, Limit: 1000, Window: time.Second},
		{Name: "ramp", Rate: 1e3, RateEnd: 1e6, Duration: forever, Keys: 100},
		{Name: "zipf", Rate: 1e6, Duration: forever, Keys: 100, Seed: 1},
	}
	for _, s := range specs {
		b.Run("name="+s.Name, func(b *testing.B) {
			st, err := New(s)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := st.Next(); !ok {
					b.Fatal("stream ended")
				}
			}
		})
	}
	for _, ext := range []string{"csv", "jsonl"} {
		b.Run("name=replay/"+ext, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "t."+ext)
			as := collect(b, Spec{Name: "zipf", Rate: 1e5, Duration: time.Second, Keys: 100, Seed: 1})
			if ext == "csv" {
				writeCSV(b, path, as)
			} else {
				writeJSONL(b, path, as)
			}
			spec := Spec{Name: "replay:" + path}
			st, err := New(spec)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := st.Next(); !ok {
					if err := st.Err(); err != nil {
						b.Fatal(err)
					}
					if st, err = New(spec); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
