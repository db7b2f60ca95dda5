package workload

import "strings"

// replayName is the generator name of replay; specs write it "replay:PATH".
const replayName = "replay"

// generator is one entry of the list of workloads.
type generator struct {
	name string
	desc string
	// source makes the generator's Source from a spec whose common
	// defaults are applied and whose common fields are checked, filling
	// in its own defaults. An error says that the spec's fields do not
	// fit together; the Source's Validate checks the rest.
	source func(Spec) (generated, error)
}

// generators is the one list of workloads, in the order Names returns them.
// Nothing registers itself: add a generator here.
var generators = [...]generator{
	{
		name:   "constant",
		desc:   "evenly spaced arrivals, rate per second, keys round-robin",
		source: constantOf,
	},
	{
		name:   "poisson",
		desc:   "Poisson process: exponential gaps with mean 1/rate, keys uniform at random (seeded)",
		source: poissonOf,
	},
	{
		name:   "burst",
		desc:   "N arrivals at the same instant every T (default 10 every 1s), or rate during On then silence during Off",
		source: burstOf,
	},
	{
		name:   "boundary",
		desc:   "limit arrivals just before a window edge and limit just after it, every 2 windows by default (lets a fixed window through 2L)",
		source: boundaryOf,
	},
	{
		name:   "ramp",
		desc:   "deterministic arrivals whose rate changes linearly from rate to rate-end over the duration",
		source: rampOf,
	},
	{
		name:   "zipf",
		desc:   "Poisson arrivals at rate, keys drawn Zipf(s) over K keys, k0 the most popular (seeded)",
		source: zipfOf,
	},
	{
		name:   replayName,
		desc:   "replay:FILE replays a trace: CSV with header at_ns,key,cost, or JSON lines with the same fields",
		source: replayOf,
	},
}

// Names returns the generator names, in a new slice: "constant", "poisson",
// "burst", "boundary", "ramp", "zipf" and "replay" (written "replay:FILE"
// in a Spec).
func Names() []string {
	names := make([]string, len(generators))
	for i := range generators {
		names[i] = generators[i].name
	}
	return names
}

// Describe returns a one-line description of the generator name (which may
// be "replay" or "replay:FILE"), for `ratebench list`, or "" for an unknown
// name.
func Describe(name string) string {
	if strings.HasPrefix(name, replayName+":") {
		name = replayName
	}
	for i := range generators {
		if generators[i].name == name {
			return generators[i].desc
		}
	}
	return ""
}

// lookup returns the generator of a Spec.Name; nil for an unknown name or
// a replay without a path.
func lookup(name string) *generator {
	path, isReplay := strings.CutPrefix(name, replayName+":")
	switch {
	case isReplay && path == "", name == replayName:
		return nil
	case isReplay:
		name = replayName
	}
	for i := range generators {
		if generators[i].name == name {
			return &generators[i]
		}
	}
	return nil
}

// knownNames lists the names for an error message.
func knownNames() string {
	var names []string
	for i := range generators {
		if generators[i].name != replayName {
			names = append(names, generators[i].name)
		}
	}
	return strings.Join(names, ", ") + " or replay:PATH"
}
