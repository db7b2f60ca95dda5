package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/scenario"
)

// TestBadScenarioNamesTheField: a scenario that cannot run is refused
// with an error that wraps ErrInvalid, says the file and names the field
// (or the value) at fault.
func TestBadScenarioNamesTheField(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{name: "unknown field", body: "policies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant, rat: 5}]\n", want: "rat"},
		{name: "bad policy", body: "policies: [{limit: -1, window: 1s}]\nworkloads: [{name: constant}]\n", want: "policies[0]"},
		{name: "bad duration", body: "duration: soon\npolicies: [{limit: 1, window: 1s}]\nworkloads: [{name: constant}]\n", want: "soon"},
		{name: "bad workload", body: "policies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant}, {name: tides}]\n", want: "workloads[1]"},
		{name: "bad rate", body: "policies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant, rate: -3}]\n", want: "workloads[0].rate"},
		{name: "unknown algorithm", body: "algorithms: [gcra, nope]\npolicies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant}]\n", want: "algorithms[1]"},
		{name: "no workloads", body: "policies: [{limit: 10, window: 1s}]\n", want: "workloads"},
		{name: "no policies", body: "workloads: [{name: constant}]\n", want: "policies"},
		{name: "empty", body: "", want: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, cells, err := scenario.Load(path)
			if cells != nil || !errors.Is(err, scenario.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("cells %v, err %v: want an invalid scenario at %s naming %q", cells, err, path, tc.want)
			}
		})
	}
	if _, _, err := scenario.Load(filepath.Join(dir, "absent.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an absent file: %v, want a not-exist error", err)
	}
}

// TestCells: each policy runs every workload; zero fields take the
// scenario's, then the generator's defaults; rate_x is a multiple of the
// policy's rate; cell names are folder names, suffixed by the policy when
// there are several.
func TestCells(t *testing.T) {
	s, err := scenario.Parse([]byte(`
seed: 7
duration: 3s
keys: 4
algorithms: [gcra, fixed-window]
policies:
  - {limit: 10, window: 1s}
  - {limit: 100, window: 2s, burst: 50}
workloads:
  - {name: constant, rate_x: 2}
  - {name: poisson, rate: 5, keys: 2, duration: 1s}
  - {name: "replay:a/b.csv"}
`))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cell           int
		name           string
		rate           float64 // arrivals per second
		keys           int
		duration       time.Duration
		limit, burst   int64
		window         time.Duration
		seed, replicas int
	}{
		{cell: 0, name: "constant-p0", rate: 20, keys: 4, duration: 3 * time.Second, limit: 10, burst: 10, window: time.Second, seed: 7, replicas: 1},
		{cell: 1, name: "poisson-p0", rate: 5, keys: 2, duration: time.Second, limit: 10, burst: 10, window: time.Second, seed: 7, replicas: 1},
		{cell: 3, name: "constant-p1", rate: 100, keys: 4, duration: 3 * time.Second, limit: 100, burst: 50, window: 2 * time.Second, seed: 7, replicas: 1},
		{cell: 5, name: "replay-a-b-csv-p1", rate: 0, keys: 4, duration: 3 * time.Second, limit: 100, burst: 50, window: 2 * time.Second, seed: 7, replicas: 1},
	} {
		if len(cells) != 6 {
			t.Fatalf("%d cells, want 2 policies x 3 workloads", len(cells))
		}
		c := cells[tc.cell]
		p := c.Config.Policy
		rec := c.Source.Record()
		rate, _ := rec["rate"].(float64) // none for a replay: its trace says
		keys, _ := rec["keys"].(int)
		if c.Name != tc.name || rate != tc.rate || keys != tc.keys || c.Source.Span() != tc.duration ||
			p.Limit != tc.limit || p.Burst != tc.burst || p.Window != tc.window || c.Seed != uint64(tc.seed) || c.Replicas != tc.replicas {
			t.Errorf("cell %d: %s rate %v keys %d over %v, policy %s, seed %d, %d replicas; want %+v",
				tc.cell, c.Name, rate, keys, c.Source.Span(), p, c.Seed, c.Replicas, tc)
		}
		if !slices.Equal(c.Algorithms, []string{"gcra", "fixed-window"}) || c.Config.Reference == nil {
			t.Errorf("cell %d: algorithms %q, reference set %v: want the scenario's, and a reference", tc.cell, c.Algorithms, c.Config.Reference != nil)
		}
	}
}

// TestDefault: the built-in scenario runs every algorithm against four
// workloads under one policy, and is named.
func TestDefault(t *testing.T) {
	name, cells, err := scenario.Load("default")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name)
		if len(c.Algorithms) != 0 {
			t.Errorf("%s runs %q, want every algorithm", c.Name, c.Algorithms)
		}
	}
	if name != "compare" || !slices.Equal(names, []string{"constant", "poisson", "burst", "boundary"}) {
		t.Errorf("name %q, cells %q; want compare, and constant, poisson, burst, boundary", name, names)
	}
}
