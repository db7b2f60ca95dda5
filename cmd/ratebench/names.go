package main

import (
	"slices"
	"strings"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
	"github.com/ratebench/ratebench/bench/suggest"
	"github.com/ratebench/ratebench/workload"
)

// The names a user types (algorithms, workloads, backends) are taken in
// any case; a name that is none of them is refused with the closest ones
// and the list, before anything runs.

// knownAlgorithms is every algorithm name a command takes: the in-memory
// ones, then the Redis backend's own.
func knownAlgorithms() []string {
	names := all.Names()
	for _, n := range redis.Names() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// oneAlgo is the algorithm of a command that takes one (-algo, or its
// second name -algos), by its own name; "" for none.
func oneAlgo(name string) (string, error) {
	names, err := algoNames(name)
	if err != nil || len(names) == 0 {
		return "", err
	}
	if len(names) > 1 {
		return "", usagef("-algo %q: this command takes one algorithm", name)
	}
	return names[0], nil
}

// algoNames parses a comma-separated list of algorithm names, in any
// case, into their own names; nil for an empty list.
func algoNames(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	known := knownAlgorithms()
	var out []string
	for _, n := range strings.Split(list, ",") {
		name, err := algoName(strings.TrimSpace(n), known)
		if err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, nil
}

// algoName is name's own spelling among known, or a usage error with the
// closest names.
func algoName(name string, known []string) (string, error) {
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k, nil
		}
	}
	return "", usagef("unknown algorithm %q%s; algorithms: %s (ratebench list describes them)", name, suggest.DidYouMean(name, known), strings.Join(known, ", "))
}

// workloadName is -workload's value with the generator's own name
// (replay:FILE keeps its path as given), or a usage error with the
// closest names.
func workloadName(name string) (string, error) {
	if prefix, path, ok := strings.Cut(name, ":"); ok && strings.EqualFold(prefix, "replay") {
		return "replay:" + path, nil
	}
	known := workload.Names()
	for _, k := range known {
		if strings.EqualFold(k, name) {
			if k == "replay" {
				return "", usagef("-workload replay needs a trace: replay:FILE")
			}
			return k, nil
		}
	}
	return "", usagef("-workload %q: unknown workload%s; workloads: %s", name, suggest.DidYouMean(name, known),
		strings.Replace(strings.Join(known, ", "), "replay", "replay:FILE", 1))
}

// backendSchemes are -backend's forms, for "did you mean".
var backendSchemes = []string{"memory", "redis", "rediss", "redis+cluster", "rediss+cluster", "sqlite"}

// backendHint is " (did you mean ...?)" for a -backend value whose
// scheme (or whole value, without "://") is close to a known one.
func backendHint(value string) string {
	scheme, _, _ := strings.Cut(value, "://")
	return suggest.DidYouMean(scheme, backendSchemes)
}

// workloadFlags are the workload's fields that run and attack take as
// flags: the same word, with - for _.
var workloadFlagNames = []string{"rate", "rate-end", "duration", "keys", "cost", "burst-size", "burst-every", "on", "off", "zipf-s",
	"align", "edge-offset", "limit", "window"}

// workloadError is an invalid workload's error in the flags' words:
// "invalid workload: edge_offset 1s must ..." becomes "-edge-offset 1s
// must ...", and the name "-workload".
func workloadError(err error) error {
	rest, ok := strings.CutPrefix(err.Error(), workload.ErrInvalid.Error()+": ")
	if !ok {
		return usageError{err}
	}
	field, why, _ := strings.Cut(rest, " ")
	flagName := strings.ReplaceAll(field, "_", "-")
	switch {
	case field == "name":
		flagName = "workload"
	case !slices.Contains(workloadFlagNames, flagName):
		return usageError{err}
	}
	return usageError{reworded{"-" + flagName + " " + why, err}}
}
