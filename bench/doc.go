// Package bench runs rate limiters over workloads and measures what they
// do: the sim engine, in virtual time, deterministic; and the live
// engine, in real time and open loop, which drives the limiters of a
// target or an Executor (an HTTP client) through one scheduler, one pool
// of workers and one collector. Runs come out as result.Run values.
//
// A program that imports bench to drive its own limiter pulls in no
// backend (Redis, SQLite: see bench/backend), no scenario files and
// no package testing (see bench/benchtest).
package bench
