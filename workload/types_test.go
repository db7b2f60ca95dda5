package workload

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestTypesInvalid: each generator's type refuses a bad field, in Validate
// and in Open, with an error wrapping ErrInvalid that names the field.
func TestTypesInvalid(t *testing.T) {
	const sec = time.Second
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		src   generated
		field string // the field the error must name
	}{
		{name: "constant zero rate", src: &Constant{Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "constant NaN rate", src: &Constant{Rate: nan, Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "constant zero duration", src: &Constant{Rate: 1, Keys: 1, Cost: 1}, field: "Duration"},
		{name: "constant negative duration", src: &Constant{Rate: 1, Duration: -1, Keys: 1, Cost: 1}, field: "Duration"},
		{name: "constant zero keys", src: &Constant{Rate: 1, Duration: sec, Cost: 1}, field: "Keys"},
		{name: "constant zero cost", src: &Constant{Rate: 1, Duration: sec, Keys: 1}, field: "Cost"},
		{name: "poisson Inf rate", src: &Poisson{Rate: inf, Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "poisson zero duration", src: &Poisson{Rate: 1, Keys: 1, Cost: 1}, field: "Duration"},
		{name: "burst zero size", src: &Burst{Every: sec, Duration: sec, Keys: 1, Cost: 1}, field: "BurstSize"},
		{name: "burst zero every", src: &Burst{Size: 1, Duration: sec, Keys: 1, Cost: 1}, field: "BurstEvery"},
		{name: "burst zero duration", src: &Burst{Size: 1, Every: sec, Keys: 1, Cost: 1}, field: "Duration"},
		{name: "on/off zero on", src: &OnOff{Rate: 1, Off: sec, Duration: sec, Keys: 1, Cost: 1}, field: "On"},
		{name: "on/off zero off", src: &OnOff{Rate: 1, On: sec, Duration: sec, Keys: 1, Cost: 1}, field: "Off"},
		{name: "on/off overflow", src: &OnOff{Rate: 1, On: math.MaxInt64, Off: 1, Duration: sec, Keys: 1, Cost: 1}, field: "Off"},
		{name: "on/off zero rate", src: &OnOff{On: sec, Off: sec, Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "boundary zero limit", src: &Boundary{Window: sec, Edge: 1, EveryWindows: 2, Duration: sec, Keys: 1, Cost: 1}, field: "Limit"},
		{name: "boundary zero window", src: &Boundary{Limit: 1, Edge: 1, EveryWindows: 2, Duration: sec, Keys: 1, Cost: 1}, field: "Window"},
		{name: "boundary zero edge", src: &Boundary{Limit: 1, Window: sec, EveryWindows: 2, Duration: sec, Keys: 1, Cost: 1}, field: "Edge"},
		{name: "boundary zero every windows", src: &Boundary{Limit: 1, Window: sec, Edge: 1, Duration: sec, Keys: 1, Cost: 1}, field: "EveryWindows"},
		{name: "boundary edge over window", src: &Boundary{Limit: 1, Window: sec, Edge: 2 * sec, EveryWindows: 2, Duration: sec, Keys: 1, Cost: 1}, field: "Edge"},
		{name: "boundary offset of a window", src: &Boundary{Limit: 1, Window: sec, Edge: 1, EveryWindows: 2, EdgeOffset: sec, Duration: sec, Keys: 1, Cost: 1}, field: "EdgeOffset"},
		{name: "boundary bad align", src: &Boundary{Limit: 1, Window: sec, Edge: 1, EveryWindows: 2, Align: "noon", Duration: sec, Keys: 1, Cost: 1}, field: "Align"},
		{name: "boundary first request every 2", src: &Boundary{Limit: 1, Window: sec, Edge: 1, EveryWindows: 2, Align: AlignFirstRequest, Duration: sec, Keys: 1, Cost: 1}, field: "EveryWindows"},
		{name: "ramp zero end", src: &Ramp{Rate: 1, Duration: sec, Keys: 1, Cost: 1}, field: "RateEnd"},
		{name: "ramp NaN end", src: &Ramp{Rate: 1, RateEnd: nan, Duration: sec, Keys: 1, Cost: 1}, field: "RateEnd"},
		{name: "ramp zero rate", src: &Ramp{RateEnd: 1, Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "zipf s 1", src: &Zipf{Rate: 1, S: 1, Duration: sec, Keys: 1, Cost: 1}, field: "ZipfS"},
		{name: "zipf zero rate", src: &Zipf{S: 1.1, Duration: sec, Keys: 1, Cost: 1}, field: "Rate"},
		{name: "replay no path", src: &Replay{Keys: 1}, field: "Path"},
		{name: "replay negative duration", src: &Replay{Path: "t.csv", Duration: -1, Keys: 1}, field: "Duration"},
		{name: "replay zero keys", src: &Replay{Path: "t.csv"}, field: "Keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, openErr := tt.src.Open(Shard{})
			for _, err := range []error{tt.src.Validate(), openErr} {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v, want one wrapping ErrInvalid", err)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "invalid workload: "+snake(tt.field)+" ") {
					t.Errorf("error %q does not name the field %s first", msg, tt.field)
				}
			}
		})
	}
}

// TestSourceResolved: Spec.Source resolves the name and the defaults into
// the generator's type, which holds them.
func TestSourceResolved(t *testing.T) {
	const sec = time.Second
	tests := []struct {
		name string
		spec Spec
		want Source
	}{
		{name: "constant", spec: Spec{Name: "constant", Rate: 5, Duration: sec, Seed: 3},
			want: &Constant{Rate: 5, Duration: sec, Keys: 1, Cost: 1}},
		{name: "poisson", spec: Spec{Name: "poisson", Rate: 5, Duration: sec, Keys: 4, Cost: 2, Seed: 3},
			want: &Poisson{Rate: 5, Duration: sec, Keys: 4, Cost: 2, Seed: 3}},
		{name: "burst defaults", spec: Spec{Name: "burst", Rate: 5, Duration: sec},
			want: &Burst{Size: 10, Every: sec, Duration: sec, Keys: 1, Cost: 1}},
		{name: "burst on/off", spec: Spec{Name: "burst", Rate: 5, Duration: sec, On: 2, Off: 3},
			want: &OnOff{Rate: 5, On: 2, Off: 3, Duration: sec, Keys: 1, Cost: 1}},
		{name: "boundary defaults", spec: Spec{Name: "boundary", Rate: 5, Duration: sec, Limit: 10, Window: sec},
			want: &Boundary{Limit: 10, Window: sec, Edge: 10 * time.Millisecond, EveryWindows: 2, Align: AlignEpoch, Duration: sec, Keys: 1, Cost: 1}},
		{name: "boundary first request", spec: Spec{Name: "boundary", Duration: sec, Limit: 10, Window: 50, Align: AlignFirstRequest},
			want: &Boundary{Limit: 10, Window: 50, Edge: 1, EveryWindows: 3, Align: AlignFirstRequest, Duration: sec, Keys: 1, Cost: 1}},
		{name: "ramp", spec: Spec{Name: "ramp", Rate: 5, RateEnd: 7, Duration: sec},
			want: &Ramp{Rate: 5, RateEnd: 7, Duration: sec, Keys: 1, Cost: 1}},
		{name: "zipf default s", spec: Spec{Name: "zipf", Rate: 5, Duration: sec, Keys: 9, Seed: 2},
			want: &Zipf{Rate: 5, S: 1.1, Duration: sec, Keys: 9, Cost: 1, Seed: 2}},
		{name: "replay", spec: Spec{Name: "replay:dir/t.csv", Rate: 5},
			want: &Replay{Path: "dir/t.csv", Keys: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := source(t, tt.spec)
			if !equalSource(got, tt.want) {
				t.Errorf("Source() = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// equalSource compares two Sources of this package by value.
func equalSource(a, b Source) bool {
	switch x := a.(type) {
	case *Constant:
		y, ok := b.(*Constant)
		return ok && *x == *y
	case *Poisson:
		y, ok := b.(*Poisson)
		return ok && *x == *y
	case *Burst:
		y, ok := b.(*Burst)
		return ok && *x == *y
	case *OnOff:
		y, ok := b.(*OnOff)
		return ok && *x == *y
	case *Boundary:
		y, ok := b.(*Boundary)
		return ok && *x == *y
	case *Ramp:
		y, ok := b.(*Ramp)
		return ok && *x == *y
	case *Zipf:
		y, ok := b.(*Zipf)
		return ok && *x == *y
	case *Replay:
		y, ok := b.(*Replay)
		return ok && *x == *y
	}
	return false
}
