package workload

import (
	"testing"
	"time"
)

// maxCollect bounds collect, so a stream that never ends fails the test
// instead of hanging it.
const maxCollect = 5_000_000

// source returns s.Source and fails the test on an error.
func source(t testing.TB, s Spec) Source {
	t.Helper()
	src, err := s.Source()
	if err != nil {
		t.Fatalf("Source(%+v): %v", s, err)
	}
	return src
}

// collect drains the stream of s and fails the test on an error.
func collect(t testing.TB, s Spec) []Arrival {
	t.Helper()
	st, err := New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return drain(t, st)
}

// drain reads st to its end and fails the test if it ends on an error.
func drain(t testing.TB, st Stream) []Arrival {
	t.Helper()
	var out []Arrival
	for {
		a, ok := st.Next()
		if !ok {
			break
		}
		if len(out) == maxCollect {
			t.Fatalf("stream yielded more than %d arrivals", maxCollect)
		}
		out = append(out, a)
	}
	if err := st.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil at a clean end", err)
	}
	if _, ok := st.Next(); ok {
		t.Fatalf("Next after the end returned an arrival")
	}
	return out
}

// countIn counts the arrivals with from <= At < to.
func countIn(as []Arrival, from, to time.Duration) int {
	n := 0
	for _, a := range as {
		if a.At >= from && a.At < to {
			n++
		}
	}
	return n
}
