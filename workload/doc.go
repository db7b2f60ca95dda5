// Package workload generates the arrival streams that ratebench feeds to
// rate limiters: seeded, lazy and deterministic.
//
// A Stream yields Arrivals (an instant since the start of the run, a key and
// a cost) in non-decreasing time order, one per call to Next. Streams never
// read the clock: At is virtual time, and the engines decide what it means.
// Randomised generators draw from a math/rand/v2 PCG seeded from Spec.Seed,
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
// An engine draws its arrivals from a Source, which opens a Stream for the
// shard it plays: a Spec (the form flags and scenario files write) is one,
// and Arrivals, a schedule held in memory (a probe's experiments), another.
//
// A Stream is not safe for concurrent use; a Spec is a plain value and is.
package workload
