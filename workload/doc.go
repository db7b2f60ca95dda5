// Package workload generates the arrival streams that ratebench feeds to
// rate limiters: seeded, lazy and deterministic.
//
// A Stream yields Arrivals (an instant since the start of the run, a key and
// a cost) in non-decreasing time order, one per call to Next. Streams never
// read the clock: At is virtual time, and the engines decide what it means.
// Randomised generators draw from a math/rand/v2 PCG seeded from Seed,
// so the same Spec always yields the same sequence. Memory does not grow
// with the length of a run, key names are built as keys are first drawn,
// and Next does not allocate per arrival for the synthetic generators.
//
// The generators, listed once by Names and described by Describe, are:
//
//	constant    evenly spaced arrivals, keys round-robin
//	poisson     exponential gaps, keys uniform at random
//	burst       N arrivals at one instant every T, or on/off
//	boundary    Limit just before a window edge and Limit just after it
//	ramp        a rate that changes linearly over the run
//	zipf        Poisson arrivals, keys Zipf-distributed
//	replay:PATH a CSV or JSON lines trace read from a file
//
// Each generator has its own type, which holds its parameters and is a
// Source: Constant, Poisson, Burst and OnOff (the two forms of burst),
// Boundary, Ramp, Zipf and Replay. An engine draws its arrivals from a
// Source, which opens a Stream for the shard it plays. A Spec is the form
// flags and scenario files write, one struct for every generator: its
// Source method resolves the name and the defaults once and makes the
// generator's type. Arrivals, a schedule held in memory (a probe's
// experiments), is a Source too.
//
// A Stream is not safe for concurrent use; a Spec is a plain value and is,
// and a Source is safe for concurrent Opens.
package workload
