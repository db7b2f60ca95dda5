// Package scenario reads scenario files: a matrix of workloads x
// policies, each run on the same algorithms, as YAML or JSON, expanded
// into its cells, each one run's checked workload and engine config,
// which a caller then runs (ratebench run -scenario does, in sim mode).
package scenario

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/workload"
)

// ErrInvalid is wrapped by every error about a scenario's content.
var ErrInvalid = errors.New("invalid scenario")

// Default is the built-in scenario, named "default" on the command line:
// every algorithm against constant, Poisson, burst and boundary traffic.
//
//go:embed default.yaml
var Default []byte

// Duration is a time.Duration read from YAML or JSON as "1.5s".
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 1.5s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Scenario is a matrix of workloads x policies, each run on the same
// algorithms, as read from a YAML or JSON file (JSON is read as YAML).
// Every (policy, workload) pair becomes one Cell, and one result folder.
// Its fields are the file's; zero ones take defaults. Cells only reads
// it, so one Scenario may be expanded from several goroutines.
type Scenario struct {
	Name       string     `yaml:"name"`       // the results' title; default: the file's name
	Seed       uint64     `yaml:"seed"`       // every workload's seed; default 1
	Duration   Duration   `yaml:"duration"`   // each workload's length; default 10s
	Keys       int        `yaml:"keys"`       // distinct keys; default 1
	Replicas   int        `yaml:"replicas"`   // app replicas; default 1
	Algorithms []string   `yaml:"algorithms"` // default: every algorithm
	Policies   []Policy   `yaml:"policies"`
	Workloads  []Workload `yaml:"workloads"`
}

// Policy is one policy of a scenario: Limit cost units per Window, and
// a Burst (default: the limit), as algorithms.PolicyFromFloat takes them.
type Policy struct {
	Limit  float64  `yaml:"limit"`
	Window Duration `yaml:"window"`
	Burst  float64  `yaml:"burst"`
}

// Workload is one workload of a scenario; zero fields take the
// scenario's or the generator's defaults (see workload.Spec, whose
// fields they are). Rate is in arrivals per second; RateX, used when
// Rate is not given, is the rate as a multiple of the policy's L/W (1.5,
// the default: 50% over the limit).
type Workload struct {
	Name       string   `yaml:"name"`
	Rate       float64  `yaml:"rate"`
	RateX      float64  `yaml:"rate_x"`
	RateEnd    float64  `yaml:"rate_end"`
	Duration   Duration `yaml:"duration"`
	Keys       int      `yaml:"keys"`
	ZipfS      float64  `yaml:"zipf_s"`
	Cost       int64    `yaml:"cost"`
	BurstSize  int      `yaml:"burst_size"`
	BurstEvery Duration `yaml:"burst_every"`
	On         Duration `yaml:"on"`
	Off        Duration `yaml:"off"`
	Edge       Duration `yaml:"edge"`
	Every      int      `yaml:"every_windows"`
}

// Cell is one (policy, workload) pair of a scenario, checked: the engine
// config (without Span, which a trace's reading gives) and what to run.
type Cell struct {
	Name       string          // folder name: <workload>[-p<policy index>]
	Source     workload.Source // the workload, also Config.Workload
	Config     bench.Config    // the policy, the workload and the exact reference
	Algorithms []string        // checked names; empty means all
	Replicas   int             // app replicas, each with its own limiter state
	Seed       uint64          // the workload's seed
}

// Parse reads a scenario; errors wrap ErrInvalid and name the field,
// e.g. "invalid scenario: workloads[1].rate: -3 must be > 0".
func Parse(data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalid, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return &s, nil
}

func invalid(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

// Cells validates the scenario and expands it into its cells, policy by
// policy, each policy's workloads in order; errors wrap ErrInvalid and
// name the field. It does not change s.
func (s *Scenario) Cells() ([]Cell, error) {
	if len(s.Policies) == 0 {
		return nil, invalid("policies", "at least one policy is needed")
	}
	if len(s.Workloads) == 0 {
		return nil, invalid("workloads", "at least one workload is needed")
	}
	if s.Keys < 0 || s.Replicas < 0 || s.Duration < 0 {
		return nil, invalid("keys/replicas/duration", "must not be negative")
	}
	for i, a := range s.Algorithms {
		if _, err := all.Lookup(a); err != nil {
			return nil, invalid(fmt.Sprintf("algorithms[%d]", i), "%v", err)
		}
	}
	var out []Cell
	for pi, sp := range s.Policies {
		p, err := algorithms.PolicyFromFloat(sp.Limit, time.Duration(sp.Window), sp.Burst)
		if err != nil {
			return nil, invalid(fmt.Sprintf("policies[%d]", pi), "%v", err)
		}
		for wi, sw := range s.Workloads {
			c, err := s.makeCell(p, sw, fmt.Sprintf("workloads[%d]", wi))
			if err != nil {
				return nil, err
			}
			if len(s.Policies) > 1 {
				c.Name = fmt.Sprintf("%s-p%d", c.Name, pi)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *Scenario) makeCell(p algorithms.Policy, sw Workload, field string) (Cell, error) {
	if math.IsNaN(sw.Rate) || math.IsNaN(sw.RateX) || sw.Rate < 0 || sw.RateX < 0 {
		return Cell{}, invalid(field+".rate", "must be a positive number")
	}
	rate := sw.Rate
	if rate == 0 {
		rate = max(sw.RateX, 0)
		if rate == 0 {
			rate = 1.5
		}
		rate *= p.Rate()
	}
	spec := workload.Spec{
		Name: sw.Name, Rate: rate, RateEnd: sw.RateEnd, Duration: time.Duration(first(sw.Duration, s.Duration, Duration(10*time.Second))),
		Keys: int(first(sw.Keys, s.Keys, 1)), ZipfS: sw.ZipfS, Cost: first(sw.Cost, 1), Seed: first(s.Seed, 1),
		BurstSize: sw.BurstSize, BurstEvery: time.Duration(sw.BurstEvery), On: time.Duration(sw.On), Off: time.Duration(sw.Off),
		Limit: p.Limit, Window: p.Window, Edge: time.Duration(sw.Edge), EveryWindows: sw.Every,
	}
	if spec.RateEnd == 0 {
		spec.RateEnd = 3 * p.Rate()
	}
	src, err := spec.Source()
	if err != nil {
		return Cell{}, invalid(field, "%v", err)
	}
	name := strings.NewReplacer("/", "-", ":", "-", ".", "-").Replace(sw.Name)
	return Cell{
		Name:       name,
		Source:     src,
		Config:     bench.Config{Policy: p, Workload: src, Reference: backend.Reference(p, spec.Keys)},
		Algorithms: s.Algorithms,
		Replicas:   int(first(s.Replicas, 1)),
		Seed:       spec.Seed,
	}, nil
}

// first returns the first non-zero value.
func first[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

// Load reads the scenario file at path, or Default when path is
// "default", and expands it: its name (the file's base name when it
// names none) and its cells. Every error says the path.
func Load(path string) (name string, cells []Cell, err error) {
	data := Default
	if path != "default" {
		if data, err = os.ReadFile(path); err != nil {
			return "", nil, err
		}
	}
	s, err := Parse(data)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	if cells, err = s.Cells(); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	name = s.Name
	if name == "" {
		name = filepath.Base(path)
	}
	return name, cells, nil
}
