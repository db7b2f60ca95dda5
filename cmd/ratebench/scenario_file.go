package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/workload"
)

// errScenario is wrapped by every error about a scenario file.
var errScenario = errors.New("invalid scenario")

// yamlDuration is a time.Duration read from YAML or JSON as "1.5s".
type yamlDuration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *yamlDuration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 1.5s", n.Line, n.Value)
	}
	*d = yamlDuration(v)
	return nil
}

// scenario is a matrix of workloads x policies, each run on the same
// algorithms, as read from a YAML or JSON file (JSON is read as YAML).
// Every (policy, workload) pair becomes one result folder.
type scenario struct {
	Name       string             `yaml:"name"`
	Seed       uint64             `yaml:"seed"`
	Duration   yamlDuration       `yaml:"duration"`
	Keys       int                `yaml:"keys"`
	Replicas   int                `yaml:"replicas"`
	Algorithms []string           `yaml:"algorithms"`
	Policies   []scenarioPolicy   `yaml:"policies"`
	Workloads  []scenarioWorkload `yaml:"workloads"`
}

// scenarioPolicy is one policy of a scenario.
type scenarioPolicy struct {
	Limit  float64      `yaml:"limit"`
	Window yamlDuration `yaml:"window"`
	Burst  float64      `yaml:"burst"`
}

// scenarioWorkload is one workload of a scenario; zero fields take the
// scenario's or the generator's defaults. RateX is the rate as a multiple
// of the policy's L/W (1.5 = 50% over the limit).
type scenarioWorkload struct {
	Name       string       `yaml:"name"`
	Rate       float64      `yaml:"rate"`
	RateX      float64      `yaml:"rate_x"`
	RateEnd    float64      `yaml:"rate_end"`
	Duration   yamlDuration `yaml:"duration"`
	Keys       int          `yaml:"keys"`
	ZipfS      float64      `yaml:"zipf_s"`
	Cost       int64        `yaml:"cost"`
	BurstSize  int          `yaml:"burst_size"`
	BurstEvery yamlDuration `yaml:"burst_every"`
	On         yamlDuration `yaml:"on"`
	Off        yamlDuration `yaml:"off"`
	Edge       yamlDuration `yaml:"edge"`
	Every      int          `yaml:"every_windows"`
}

// cell is one (policy, workload) pair of a scenario, checked: the engine
// config (without Span, which a trace's reading gives) and what to run.
type cell struct {
	Name       string          // folder name: <workload>[-<policy index>]
	Source     workload.Source // the workload, also Config.Workload
	Config     bench.Config
	Algorithms []string // checked names; empty means all
	Replicas   int
	Seed       uint64
}

// parseScenario reads a scenario; errors name the field, e.g.
// "invalid scenario: workloads[1].rate: -3 must be > 0".
func parseScenario(data []byte) (*scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s scenario
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", errScenario)
		}
		return nil, fmt.Errorf("%w: %s", errScenario, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return &s, nil
}

func scenarioErr(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", errScenario, field, fmt.Sprintf(format, args...))
}

// Cells validates the scenario and expands it into its cells.
func (s *scenario) cells() ([]cell, error) {
	if len(s.Policies) == 0 {
		return nil, scenarioErr("policies", "at least one policy is needed")
	}
	if len(s.Workloads) == 0 {
		return nil, scenarioErr("workloads", "at least one workload is needed")
	}
	if s.Keys < 0 || s.Replicas < 0 || s.Duration < 0 {
		return nil, scenarioErr("keys/replicas/duration", "must not be negative")
	}
	for i, a := range s.Algorithms {
		if _, err := all.Lookup(a); err != nil {
			return nil, scenarioErr(fmt.Sprintf("algorithms[%d]", i), "%v", err)
		}
	}
	var out []cell
	for pi, sp := range s.Policies {
		p, err := algorithms.PolicyFromFloat(sp.Limit, time.Duration(sp.Window), sp.Burst)
		if err != nil {
			return nil, scenarioErr(fmt.Sprintf("policies[%d]", pi), "%v", err)
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

func (s *scenario) makeCell(p algorithms.Policy, sw scenarioWorkload, field string) (cell, error) {
	if math.IsNaN(sw.Rate) || math.IsNaN(sw.RateX) || sw.Rate < 0 || sw.RateX < 0 {
		return cell{}, scenarioErr(field+".rate", "must be a positive number")
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
		Name: sw.Name, Rate: rate, RateEnd: sw.RateEnd, Duration: time.Duration(first(sw.Duration, s.Duration, yamlDuration(10*time.Second))),
		Keys: int(first(sw.Keys, s.Keys, 1)), ZipfS: sw.ZipfS, Cost: first(sw.Cost, 1), Seed: first(s.Seed, 1),
		BurstSize: sw.BurstSize, BurstEvery: time.Duration(sw.BurstEvery), On: time.Duration(sw.On), Off: time.Duration(sw.Off),
		Limit: p.Limit, Window: p.Window, Edge: time.Duration(sw.Edge), EveryWindows: sw.Every,
	}
	if spec.RateEnd == 0 {
		spec.RateEnd = 3 * p.Rate()
	}
	src, err := spec.Source()
	if err != nil {
		return cell{}, scenarioErr(field, "%v", err)
	}
	name := strings.NewReplacer("/", "-", ":", "-", ".", "-").Replace(sw.Name)
	return cell{
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
