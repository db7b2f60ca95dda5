//go:build race

package keyed_test

// raceEnabled: the race detector slows inserts tenfold and changes the heap.
const raceEnabled = true
