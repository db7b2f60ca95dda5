// Package bench is the sim engine: Simulate drives targets over a
// workload in virtual time, deterministically, and hands every decision
// as a row to a measure.Summary. Its Config (policy, workload, reference,
// trace, progress) is also the core of bench/live's. Runs come out as
// result.Run values; NewResult makes them a result.json.
//
// A program that imports bench to drive its own limiter pulls in no
// backend (Redis, SQLite: see bench/backend), no scenario files and no
// package testing (see bench/benchtest).
package bench
