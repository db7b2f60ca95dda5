package workload

import (
	"testing"
	"time"
)

func TestBurst(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []time.Duration // every instant, with its repeats
	}{
		{
			// N every T: 3 at 0, 3 at 1s, 3 at 2s; 3s is not before Duration.
			name: "3 every 1s",
			spec: Spec{Name: "burst", Duration: 3 * time.Second, BurstSize: 3, BurstEvery: time.Second},
			want: []time.Duration{0, 0, 0, 1e9, 1e9, 1e9, 2e9, 2e9, 2e9},
		},
		{
			// Only BurstSize given: BurstEvery takes its default of 1s.
			name: "default every",
			spec: Spec{Name: "burst", Duration: 1500 * time.Millisecond, BurstSize: 2},
			want: []time.Duration{0, 0, 1e9, 1e9},
		},
		{
			// Only BurstEvery given: BurstSize takes its default of 10.
			name: "default size",
			spec: Spec{Name: "burst", Duration: time.Millisecond, BurstEvery: time.Second},
			want: []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			// On/off: 10/s during 250ms (0, 100ms, 200ms), silent 750ms, again
			// from 1s; the period restarts at its own start, not on the old grid.
			name: "on/off",
			spec: Spec{Name: "burst", Rate: 10, Duration: 2 * time.Second, On: 250 * time.Millisecond, Off: 750 * time.Millisecond},
			want: []time.Duration{0, 100e6, 200e6, 1000e6, 1100e6, 1200e6},
		},
		{
			// On/off cut by Duration in the middle of an On period.
			name: "on/off cut",
			spec: Spec{Name: "burst", Rate: 10, Duration: 1150 * time.Millisecond, On: 250 * time.Millisecond, Off: 750 * time.Millisecond},
			want: []time.Duration{0, 100e6, 200e6, 1000e6, 1100e6},
		},
		{
			// A gap longer than On: one arrival per period, at its start.
			name: "on shorter than gap",
			spec: Spec{Name: "burst", Rate: 1, Duration: 3 * time.Second, On: time.Millisecond, Off: time.Second},
			want: []time.Duration{0, 1001e6, 2002e6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, tt.spec)
			if len(as) != len(tt.want) {
				t.Fatalf("%d arrivals %v, want %d", len(as), as, len(tt.want))
			}
			for i, a := range as {
				if a.At != tt.want[i] {
					t.Fatalf("arrival %d at %v, want %v", i, a.At, tt.want[i])
				}
			}
		})
	}
}

// TestBurstDefault: with neither form given, burst is 10 every 1s.
func TestBurstDefault(t *testing.T) {
	as := collect(t, Spec{Name: "burst", Duration: 10 * time.Second})
	if len(as) != 100 {
		t.Fatalf("%d arrivals, want 10 bursts of 10", len(as))
	}
	for i, a := range as {
		if want := time.Duration(i/10) * time.Second; a.At != want {
			t.Fatalf("arrival %d at %v, want %v", i, a.At, want)
		}
	}
}
