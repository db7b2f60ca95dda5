package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestSlidingLogSteps(t *testing.T) {
	never := algorithms.Never
	// 3 per second; the burst is ignored.
	s, err := algorithms.NewSlidingLog(algorithms.Policy{Limit: 3, Window: ms(1000), Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, s, []step{
		{at: ms(1000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(1000)},
			why: "an empty log admits"},
		{at: ms(1400), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "fills (0.4s, 1.4s]"},
		{at: ms(1500), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(500), ResetAfter: ms(900)},
			why: "the 2 at 1s leave at 2s"},
		{at: ms(2000) - 1, cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 1, ResetAfter: ms(400) + 1},
			why: "an entry at t counts while now < t+W"},
		{at: ms(2000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "the 2 at 1s have left (1s, 2s]"},
		{at: ms(1700), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(700), ResetAfter: ms(1300)},
			why: "back in time: decided as at 2s, the latest instant"},
		{at: ms(2400), cost: 4, want: algorithms.Decision{Remaining: 1, RetryAfter: never, ResetAfter: ms(600)},
			why: "above the limit: never; the 1 at 1.4s has left"},
		{at: ms(2400), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "the one unit left"},
	})
}

func TestSlidingLogWraps(t *testing.T) {
	// One unit every W/L: from the L-th on the log is full at each instant,
	// and the ring of L entries wraps around many times.
	p := algorithms.Policy{Limit: 4, Window: ms(1000)}
	s, err := algorithms.NewSlidingLog(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		at := ms(250) * time.Duration(i)
		want := algorithms.Decision{Allowed: true, Remaining: int64(max(3-i, 0)), ResetAfter: ms(1000)}
		if d := mustAllow(t, s, request{at, 1}); d != want {
			t.Fatalf("request %d at %v: %+v, want %+v", i, at, d, want)
		}
		if i < 3 {
			continue
		}
		want = algorithms.Decision{RetryAfter: ms(250), ResetAfter: ms(1000)}
		if d := mustAllow(t, s, request{at, 1}); d != want {
			t.Fatalf("request %d bis at %v: %+v, want %+v", i, at, d, want)
		}
	}
}

func TestSlidingLogErrors(t *testing.T) {
	checkErrors(t, "sliding-log", algorithms.NewSlidingLog)
}
