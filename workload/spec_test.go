package workload

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateInvalid(t *testing.T) {
	const sec = time.Second
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		spec  Spec
		field string // the field the error must name
	}{
		// The zero Spec has no generator.
		{name: "zero spec", spec: Spec{}, field: "Name"},
		// A typo is not silently some default workload.
		{name: "unknown name", spec: Spec{Name: "poison", Rate: 1, Duration: sec}, field: "Name"},
		// replay needs its path.
		{name: "replay without path", spec: Spec{Name: "replay"}, field: "Name"},
		// replay: with an empty path is no better.
		{name: "replay empty path", spec: Spec{Name: "replay:"}, field: "Name"},
		// Rate 0 where the generator needs a rate.
		{name: "zero rate", spec: Spec{Name: "constant", Duration: sec}, field: "Rate"},
		// Negative rates are never valid, even where Rate is unused.
		{name: "negative rate", spec: Spec{Name: "poisson", Rate: -1, Duration: sec}, field: "Rate"},
		// NaN compares false with everything: it must still be caught.
		{name: "NaN rate", spec: Spec{Name: "zipf", Rate: nan, Duration: sec}, field: "Rate"},
		// An infinite rate would yield every arrival at 0 forever.
		{name: "Inf rate", spec: Spec{Name: "constant", Rate: inf, Duration: sec}, field: "Rate"},
		// Garbage in an unused field is still garbage.
		{name: "NaN rate on boundary", spec: Spec{Name: "boundary", Rate: nan, Duration: sec, Limit: 1, Window: sec}, field: "Rate"},
		// A ramp needs both ends.
		{name: "ramp without end", spec: Spec{Name: "ramp", Rate: 1, Duration: sec}, field: "RateEnd"},
		// NaN end rate.
		{name: "NaN rate end", spec: Spec{Name: "ramp", Rate: 1, RateEnd: nan, Duration: sec}, field: "RateEnd"},
		// Infinite end rate.
		{name: "Inf rate end", spec: Spec{Name: "ramp", Rate: 1, RateEnd: inf, Duration: sec}, field: "RateEnd"},
		// A synthetic run has a length.
		{name: "zero duration", spec: Spec{Name: "constant", Rate: 1}, field: "Duration"},
		// Negative durations are errors for replay too.
		{name: "negative duration", spec: Spec{Name: "replay:x.csv", Duration: -1}, field: "Duration"},
		// Keys 0 means 1, but negative is an error.
		{name: "negative keys", spec: Spec{Name: "constant", Rate: 1, Duration: sec, Keys: -1}, field: "Keys"},
		// Zipf needs s > 1 (math/rand/v2 NewZipf).
		{name: "zipf s 1", spec: Spec{Name: "zipf", Rate: 1, Duration: sec, ZipfS: 1}, field: "ZipfS"},
		// Below 1.
		{name: "zipf s 0.5", spec: Spec{Name: "zipf", Rate: 1, Duration: sec, ZipfS: 0.5}, field: "ZipfS"},
		// NaN exponent.
		{name: "zipf s NaN", spec: Spec{Name: "zipf", Rate: 1, Duration: sec, ZipfS: nan}, field: "ZipfS"},
		// Infinite exponent.
		{name: "zipf s Inf", spec: Spec{Name: "zipf", Rate: 1, Duration: sec, ZipfS: inf}, field: "ZipfS"},
		// Cost 0 means 1, negative is an error.
		{name: "negative cost", spec: Spec{Name: "constant", Rate: 1, Duration: sec, Cost: -2}, field: "Cost"},
		// Negative burst size.
		{name: "negative burst size", spec: Spec{Name: "burst", Duration: sec, BurstSize: -1}, field: "BurstSize"},
		// Negative burst period.
		{name: "negative burst every", spec: Spec{Name: "burst", Duration: sec, BurstEvery: -sec}, field: "BurstEvery"},
		// Negative On.
		{name: "negative on", spec: Spec{Name: "burst", Rate: 1, Duration: sec, On: -sec, Off: sec}, field: "On"},
		// Negative Off.
		{name: "negative off", spec: Spec{Name: "burst", Rate: 1, Duration: sec, On: sec, Off: -sec}, field: "Off"},
		// On/off needs both halves.
		{name: "on without off", spec: Spec{Name: "burst", Rate: 1, Duration: sec, On: sec}, field: "Off"},
		// And the other half.
		{name: "off without on", spec: Spec{Name: "burst", Rate: 1, Duration: sec, Off: sec}, field: "On"},
		// On/off spaces arrivals at 1/Rate: it needs a rate.
		{name: "on/off without rate", spec: Spec{Name: "burst", Duration: sec, On: sec, Off: sec}, field: "Rate"},
		// The two burst forms are exclusive.
		{name: "both burst forms", spec: Spec{Name: "burst", Rate: 1, Duration: sec, On: sec, Off: sec, BurstSize: 5}, field: "BurstSize"},
		// Both forms, through BurstEvery.
		{name: "both burst forms every", spec: Spec{Name: "burst", Rate: 1, Duration: sec, On: sec, Off: sec, BurstEvery: sec}, field: "BurstEvery"},
		// Boundary attacks a limit: it needs one.
		{name: "boundary without limit", spec: Spec{Name: "boundary", Duration: sec, Window: sec}, field: "Limit"},
		// Negative limit.
		{name: "negative limit", spec: Spec{Name: "boundary", Duration: sec, Limit: -1, Window: sec}, field: "Limit"},
		// And a window.
		{name: "boundary without window", spec: Spec{Name: "boundary", Duration: sec, Limit: 1}, field: "Window"},
		// Negative window.
		{name: "negative window", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: -sec}, field: "Window"},
		// Negative edge.
		{name: "negative edge", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: sec, Edge: -1}, field: "Edge"},
		// An edge longer than the window would put arrivals before 0.
		{name: "edge over window", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: sec, Edge: 2 * sec}, field: "Edge"},
		// Attacks every window with an edge over half a window would overlap.
		{name: "overlapping attacks", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: sec, Edge: 600 * time.Millisecond, EveryWindows: 1}, field: "Edge"},
		// Negative period in windows.
		{name: "negative every windows", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: sec, EveryWindows: -1}, field: "EveryWindows"},
		// EveryWindows*Window past int64.
		{name: "every windows overflow", spec: Spec{Name: "boundary", Duration: sec, Limit: 1, Window: time.Hour, EveryWindows: math.MaxInt64 / 1000}, field: "EveryWindows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, err := range []error{tt.spec.Validate(), newErr(tt.spec)} {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v, want one wrapping ErrInvalid", err)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "invalid workload: "+snake(tt.field)+" ") {
					t.Errorf("error %q does not name the field %s first", msg, tt.field)
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("error %q is more than one line", msg)
				}
			}
		})
	}
}

func newErr(s Spec) error {
	_, err := New(s)
	return err
}

func TestValidateValid(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		// Zero Keys and Cost take their defaults of 1.
		{name: "minimal constant", spec: Spec{Name: "constant", Rate: 1, Duration: time.Second}},
		// Burst with nothing but a duration: 10 every 1s.
		{name: "burst defaults", spec: Spec{Name: "burst", Duration: time.Second}},
		// Boundary with only what it needs.
		{name: "boundary minimal", spec: Spec{Name: "boundary", Duration: time.Second, Limit: 1, Window: time.Second}},
		// A window shorter than 100ns still gets an Edge of 1ns.
		{name: "boundary tiny window", spec: Spec{Name: "boundary", Duration: time.Second, Limit: 1, Window: 3}},
		// Replay takes Duration 0 (the whole trace); Validate does not open it.
		{name: "replay", spec: Spec{Name: "replay:does-not-exist.csv"}},
		// A rate given to a generator that ignores it is accepted if valid.
		{name: "unused rate", spec: Spec{Name: "burst", Rate: 100, Duration: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReplayMissingFile: Validate does not open the trace, New does and
// fails with an error that is both ErrInvalid and fs.ErrNotExist.
func TestReplayMissingFile(t *testing.T) {
	s := Spec{Name: "replay:" + filepath.Join(t.TempDir(), "nope.csv")}
	_, err := New(s)
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New: %v, want ErrInvalid and ErrNotExist", err)
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want map[string]any
	}{
		// Defaults are filled in: result.json records what ran.
		{
			name: "constant",
			spec: Spec{Name: "constant", Rate: 100, Duration: time.Second, Seed: 9},
			want: map[string]any{"name": "constant", "rate": 100.0, "duration_ns": int64(1e9), "keys": 1, "cost": int64(1)},
		},
		// Random generators record their seed.
		{
			name: "poisson",
			spec: Spec{Name: "poisson", Rate: 5, Duration: time.Second, Keys: 3, Seed: 9},
			want: map[string]any{"name": "poisson", "rate": 5.0, "duration_ns": int64(1e9), "keys": 3, "cost": int64(1), "seed": uint64(9)},
		},
		// Zipf records s, with its default.
		{
			name: "zipf",
			spec: Spec{Name: "zipf", Rate: 5, Duration: time.Second, Keys: 3},
			want: map[string]any{"name": "zipf", "rate": 5.0, "zipf_s": 1.1, "duration_ns": int64(1e9), "keys": 3, "cost": int64(1), "seed": uint64(0)},
		},
		// Burst N every T: its default size and period.
		{
			name: "burst",
			spec: Spec{Name: "burst", Duration: time.Second},
			want: map[string]any{"name": "burst", "form": "n-every-t", "burst_size": 10, "burst_every_ns": int64(1e9), "duration_ns": int64(1e9), "keys": 1, "cost": int64(1)},
		},
		// Burst on/off records its rate and halves instead.
		{
			name: "burst on/off",
			spec: Spec{Name: "burst", Rate: 3, Duration: time.Second, On: 2, Off: 5},
			want: map[string]any{"name": "burst", "form": "on-off", "rate": 3.0, "on_ns": int64(2), "off_ns": int64(5), "duration_ns": int64(1e9), "keys": 1, "cost": int64(1)},
		},
		// Boundary with its default Edge and EveryWindows.
		{
			name: "boundary",
			spec: Spec{Name: "boundary", Duration: time.Second, Limit: 10, Window: time.Second},
			want: map[string]any{"name": "boundary", "limit": int64(10), "window_ns": int64(1e9), "edge_ns": int64(1e7), "every_windows": 2, "duration_ns": int64(1e9), "keys": 1, "cost": int64(1)},
		},
		// Ramp has two rates.
		{
			name: "ramp",
			spec: Spec{Name: "ramp", Rate: 1, RateEnd: 2, Duration: time.Second, Cost: 3},
			want: map[string]any{"name": "ramp", "rate": 1.0, "rate_end": 2.0, "duration_ns": int64(1e9), "keys": 1, "cost": int64(3)},
		},
		// Replay: the name without the path, which goes in "path", and the
		// trace's key count as its reader set it.
		{
			name: "replay",
			spec: Spec{Name: "replay:traces/a.csv", Rate: 7, Keys: 4},
			want: map[string]any{"name": "replay", "path": "traces/a.csv", "duration_ns": int64(0), "keys": 4},
		},
		// An unknown name gives back just the name.
		{
			name: "unknown",
			spec: Spec{Name: "nope"},
			want: map[string]any{"name": "nope"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.spec.Params()
			if len(got) != len(tt.want) {
				t.Errorf("Params() = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("Params()[%q] = %#v, want %#v", k, got[k], v)
				}
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("Params() is not JSON-friendly: %v", err)
			}
		})
	}
}

// TestNamesDescribe: every name has a description and a generator, and the
// list is a copy the caller may change.
func TestNamesDescribe(t *testing.T) {
	names := Names()
	want := []string{"constant", "poisson", "burst", "boundary", "ramp", "zipf", "replay"}
	if !slices.Equal(names, want) {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	for _, n := range names {
		d := Describe(n)
		if d == "" || strings.Contains(d, "\n") {
			t.Errorf("Describe(%q) = %q, want one non-empty line", n, d)
		}
	}
	if Describe("replay:x.csv") != Describe("replay") {
		t.Error(`Describe("replay:x.csv") differs from Describe("replay")`)
	}
	if Describe("nope") != "" {
		t.Error(`Describe("nope") is not empty`)
	}
	names[0] = "changed"
	if Names()[0] != "constant" {
		t.Error("Names returns the package's own slice")
	}
}
