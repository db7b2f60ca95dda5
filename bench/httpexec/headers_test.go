package httpexec

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// ms is a duration in milliseconds, fractions allowed.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// rowOpt sets a field of a test row.
type rowOpt func(*call.Row)

func remaining(n int64) rowOpt          { return func(r *call.Row) { r.Remaining = n } }
func reset(d time.Duration) rowOpt      { return func(r *call.Row) { r.ResetAfter = d } }
func retryAfter(d time.Duration) rowOpt { return func(r *call.Row) { r.RetryAfter = d } }
func attempts(n int) rowOpt             { return func(r *call.Row) { r.Attempts = n } }
func key(k string) rowOpt               { return func(r *call.Row) { r.Key = k } }
func row(o call.Class, sent, done float64, opts ...rowOpt) call.Row {
	r := call.Row{Key: "a", Sent: ms(sent), Done: ms(done), Outcome: o, Attempts: 1, RetryAfter: -1, Remaining: -1, ResetAfter: -1}
	for _, f := range opts {
		f(&r)
	}
	return r
}

// adm, rej and fail are rows of key "a" sent and answered at instants in
// ms, without rate-limit fields unless opts say them.
func adm(sent, done float64, opts ...rowOpt) call.Row  { return row(call.Admitted, sent, done, opts...) }
func rej(sent, done float64, opts ...rowOpt) call.Row  { return row(call.Rejected, sent, done, opts...) }
func fail(sent, done float64, opts ...rowOpt) call.Row { return row(call.Failed, sent, done, opts...) }

// verdicts is the part of HeaderStats a case is about: checked,
// contradicted (too early for Retry-After) and untested per field.
type verdicts struct {
	RemChecked, RemContradicted, RemUntested       int64
	RAChecked, RAEarly, RAOverstated, RAUntested   int64
	ResetChecked, ResetContradicted, ResetUntested int64
}

func verdictsOf(s *result.HeaderStats) verdicts {
	return verdicts{s.RemainingChecked, s.RemainingContradicted, s.RemainingUntested,
		s.RetryAfterChecked, s.RetryAfterEarly, s.RetryAfterOverstated, s.RetryAfterUntested,
		s.ResetChecked, s.ResetContradicted, s.ResetUntested}
}

// check feeds rows to a new HeaderCheck and returns its result.
func check(rows []call.Row) *result.HeaderStats {
	h := NewHeaderCheck()
	for _, r := range rows {
		h.Row(r)
	}
	return h.Result()
}

// TestHeaderCheck: each field judged by what followed for the same key,
// a claim contradicted only when no order of the requests in flight
// together makes it true, whole seconds given their second.
func TestHeaderCheck(t *testing.T) {
	sec := time.Second
	for _, tc := range []struct {
		name string
		rows []call.Row
		want verdicts
		why  string
	}{
		// remaining
		{name: "remaining honest",
			rows: []call.Row{adm(0, 1, remaining(1)), adm(2, 3, remaining(0))},
			want: verdicts{RemChecked: 1},
			why:  "said 1 left, the next request was admitted"},
		{name: "remaining lies, no overlap",
			rows: []call.Row{adm(0, 1, remaining(5)), rej(2, 3)},
			want: verdicts{RemChecked: 1, RemContradicted: 1},
			why:  "said 5 left; the next request, sent after that answer came and alone in flight, was rejected"},
		{name: "remaining lies, fewer overlap than it said",
			rows: []call.Row{adm(0, 10, remaining(5)), adm(2, 12), adm(4, 14), rej(11, 20), adm(15, 16), rej(100, 101)},
			want: verdicts{RemChecked: 1, RemContradicted: 1},
			why:  "three requests may have been decided between the claim and the rejection, two before it and one while it was in flight: not the five it said"},
		{name: "remaining spent by requests in flight with the answer",
			rows: []call.Row{adm(0, 5, remaining(1)), adm(2, 6), rej(7, 8)},
			want: verdicts{RemUntested: 1},
			why:  "the request sent at 2ms may have been decided after the answer and taken the last unit"},
		{name: "remaining spent by a request sent earlier and answered later",
			rows: []call.Row{adm(0, 30), adm(5, 10, remaining(1)), rej(11, 12)},
			want: verdicts{RemUntested: 1},
			why:  "the request sent at 0 was answered at 30ms: it may have been decided after the claim"},
		{name: "remaining spent by a request sent while the test was in flight",
			rows: []call.Row{adm(0, 10, remaining(1)), rej(11, 20), adm(12, 15)},
			want: verdicts{RemUntested: 1},
			why:  "the request sent at 12ms, during the rejection's span, may have been decided before it"},
		{name: "remaining spent by a row that came out of send order",
			rows: []call.Row{adm(0, 10, remaining(1)), rej(11, 20), rej(25, 26), adm(15, 17)},
			want: verdicts{RemUntested: 1},
			why:  "the row sent at 15ms came after one sent at 25ms; it still excuses the rejection"},
		{name: "remaining spent by a request in flight before a burst's last row",
			rows: []call.Row{adm(0, 30), rej(300, 310), adm(1, 31, remaining(1)), rej(40, 50), adm(2000, 2001)},
			want: verdicts{RemUntested: 1},
			why:  "the burst's row sent at 300ms, held back for a connection, came before the one sent at 1ms; the request in flight from 0 to 30ms may still have taken the unit"},
		{name: "remaining after a reset still holds",
			rows: []call.Row{adm(0, 1, remaining(1), reset(ms(10))), rej(20, 21)},
			want: verdicts{RemChecked: 1, RemContradicted: 1},
			why:  "a reset only adds quota: the rejection still needed one admission before it"},
		{name: "remaining excused by a failed request",
			rows: []call.Row{adm(0, 1, remaining(1)), fail(2, 3), rej(4, 5)},
			want: verdicts{RemUntested: 1},
			why:  "the request that failed may have been admitted before it failed"},
		{name: "remaining not excused by a request never sent",
			rows: []call.Row{adm(0, 1, remaining(1)), fail(2, 3, attempts(0)), rej(4, 5)},
			want: verdicts{RemChecked: 1, RemContradicted: 1},
			why:  "a request that never left (no connection) was never decided"},
		{name: "remaining excused by a rejection written twice",
			rows: []call.Row{adm(0, 1, remaining(1)), rej(2, 3, attempts(2))},
			want: verdicts{RemUntested: 1},
			why:  "its first write, whose answer was lost, may have been admitted"},
		{name: "remaining of another key says nothing",
			rows: []call.Row{adm(0, 1, remaining(1)), adm(2, 3, key("b")), rej(4, 5)},
			want: verdicts{RemChecked: 1, RemContradicted: 1},
			why:  "key b's admission spends nothing of key a's quota"},
		{name: "remaining never tested",
			rows: []call.Row{adm(0, 1, remaining(3))},
			want: verdicts{RemUntested: 1},
			why:  "the key did not come back"},

		// Retry-After
		{name: "Retry-After honest",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), adm(1002, 1003)},
			want: verdicts{RAChecked: 1},
			why:  "retried once the second had passed, admitted"},
		{name: "Retry-After rounded down: 0.7s after t+RA rejected",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), rej(1701, 1702)},
			want: verdicts{RAUntested: 1},
			why:  "a whole second may have been rounded down: the quota may come back up to 1s after t+RA"},
		{name: "Retry-After too early: 2s after t+RA rejected",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), rej(3001, 3002)},
			want: verdicts{RAChecked: 1, RAEarly: 1},
			why:  "nothing else of the key was sent between; the quota should have been back for a second by then"},
		{name: "Retry-After overstated",
			rows: []call.Row{rej(0, 1, retryAfter(5*sec)), adm(101, 102)},
			want: verdicts{RAChecked: 1, RAOverstated: 1},
			why:  "said 5s, admitted 100ms later: before 5s less its second"},
		{name: "Retry-After admitted within its second",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), adm(101, 102)},
			want: verdicts{RAChecked: 1},
			why:  "a value of 1 may stand for anything up to a second: not overstated"},
		{name: "Retry-After: admitted while the rejection was in flight",
			rows: []call.Row{rej(0, 10, retryAfter(5*sec)), adm(5, 12)},
			want: verdicts{RAUntested: 1},
			why:  "the admission may have been decided before the rejection"},
		{name: "Retry-After: the key did not wait",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), rej(500, 501), rej(3001, 3002)},
			want: verdicts{RAUntested: 1},
			why:  "the request at 500ms came before the wait was over, and a server that counts rejections may lengthen the wait for it"},
		{name: "Retry-After: the latest rejection is judged",
			rows: []call.Row{rej(0, 1, retryAfter(sec)), rej(500, 501, retryAfter(sec)), rej(2600, 2601)},
			want: verdicts{RAUntested: 1, RAChecked: 1, RAEarly: 1},
			why:  "the first claim is spoiled by the request at 500ms; that one's own Retry-After, 2.1s before the retry, was too early"},
		{name: "Retry-After: a slow request in flight may take the slot",
			rows: []call.Row{rej(0, 10, retryAfter(sec)), adm(5, 1500), rej(2100, 2101)},
			want: verdicts{RAUntested: 1},
			why:  "the admission sent at 5ms, answered at 1.5s, may have been decided after the quota came back"},
		{name: "Retry-After of another key says nothing",
			rows: []call.Row{rej(0, 1, retryAfter(5*sec)), adm(100, 101, key("b"))},
			want: verdicts{RAUntested: 1},
			why:  "key b's admission says nothing of key a's wait"},

		// reset
		{name: "reset in epoch seconds: rejected 0.7s after the stated second",
			rows: []call.Row{rej(0, 1, reset(ms(999))), rej(1700, 1701)},
			want: verdicts{ResetUntested: 1},
			why:  "X-RateLimit-Reset named the second at 1s (999ms after the answer came); a server that rounds down resets up to 1s later"},
		{name: "reset in epoch seconds: rejected 2s after the stated second",
			rows: []call.Row{rej(0, 1, reset(ms(999))), rej(3000, 3001)},
			want: verdicts{ResetChecked: 1, ResetContradicted: 1},
			why:  "the quota should have been back a second before, and nothing else of the key was sent"},
		{name: "reset as a delay of whole seconds: rejected 0.9s after",
			rows: []call.Row{rej(0, 10, reset(2*sec)), rej(2910, 2911)},
			want: verdicts{ResetUntested: 1},
			why:  "RateLimit-Reset: 2, said while the request was in flight and perhaps rounded down: back by 3.01s at the latest"},
		{name: "reset as a delay of whole seconds: rejected 1.5s after",
			rows: []call.Row{rej(0, 10, reset(2*sec)), rej(3510, 3511)},
			want: verdicts{ResetChecked: 1, ResetContradicted: 1},
			why:  "surely back by 3.01s, and nothing else of the key was sent"},
		{name: "reset honest",
			rows: []call.Row{adm(0, 1, remaining(0), reset(ms(999))), adm(2500, 2501)},
			want: verdicts{ResetChecked: 1},
			why:  "remaining 0 until the reset, then admitted"},
		{name: "reset spent by an admission before it",
			rows: []call.Row{rej(0, 1, reset(ms(999))), adm(1200, 1201), rej(3000, 3001)},
			want: verdicts{ResetUntested: 1},
			why:  "the quota that came back at the reset may have gone to the admission at 1.2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := verdictsOf(check(tc.rows)); got != tc.want {
				t.Errorf("%s\ngot  %+v\nwant %+v", tc.why, got, tc.want)
			}
		})
	}
}

// TestHeaderCheckSkipped: what the answers did not say is counted.
func TestHeaderCheckSkipped(t *testing.T) {
	rows := []call.Row{
		rej(0, 1),                           // nothing said
		rej(2, 3, remaining(0)),             // no Retry-After, no reset
		rej(4, 5, retryAfter(time.Second)),  // no remaining, no reset
		adm(6, 7),                           // no remaining
		fail(8, 9),                          // not an answer
		adm(10, 11, remaining(0), reset(0)), // everything said
	}
	got := check(rows)
	if got.RejectedNoRetryAfter != 2 || got.RejectedNoReset != 3 || got.AnsweredNoRemaining != 3 {
		t.Errorf("without Retry-After %d (want 2), without reset %d (want 3), without remaining %d (want 3)",
			got.RejectedNoRetryAfter, got.RejectedNoReset, got.AnsweredNoRemaining)
	}
}

// TestHeaderCheckResultTwice: Result changes nothing; a later row can
// still excuse a rejection pending at the first call.
func TestHeaderCheckResultTwice(t *testing.T) {
	h := NewHeaderCheck()
	for _, r := range []call.Row{adm(0, 1, remaining(1)), rej(2, 10)} {
		h.Row(r)
	}
	if s := h.Result(); s.RemainingContradicted != 1 {
		t.Errorf("pending at the end: contradicted %d, want 1", s.RemainingContradicted)
	}
	h.Row(adm(5, 6))
	if s := h.Result(); s.RemainingContradicted != 0 || s.RemainingUntested != 1 {
		t.Errorf("excused later: %+v", verdictsOf(s))
	}
}

// exactServer is a server of one key whose fields are exact: each
// request is decided by lim at an instant drawn within its span, in the
// order of those instants, and answered with its remaining count,
// Retry-After (whole seconds, rounded up, at least 1) and reset (an epoch
// second rounded down when epoch, else a delay rounded up).
type exactServer struct {
	lim   algorithms.Limiter
	epoch bool
	lie   int64 // added to every remaining count
}

// answer decides reqs (Sent and Done set, in send order) and returns
// their rows in send order.
func (s exactServer) answer(t *testing.T, rng *rand.Rand, reqs []call.Row) []call.Row {
	t.Helper()
	type decision struct {
		at time.Duration
		i  int
	}
	order := make([]decision, len(reqs))
	for i, r := range reqs {
		order[i] = decision{r.Sent + time.Duration(rng.Int64N(int64(r.Done-r.Sent)+1)), i}
	}
	slices.SortStableFunc(order, func(a, b decision) int { return int(a.at - b.at) })
	for _, d := range order {
		r := &reqs[d.i]
		dec, err := s.lim.Allow(d.at, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		r.Outcome, r.RetryAfter, r.Remaining = call.Admitted, -1, dec.Remaining
		if !dec.Allowed {
			r.Outcome = call.Rejected
			r.RetryAfter = max(ceilSecond(dec.RetryAfter), time.Second)
		}
		r.Remaining += s.lie
		if s.epoch { // X-RateLimit-Reset: floor((decided + reset) / 1s), read at Done
			r.ResetAfter = max((d.at+dec.ResetAfter)/time.Second*time.Second-r.Done, 0)
		} else {
			r.ResetAfter = ceilSecond(dec.ResetAfter)
		}
	}
	return reqs
}

// ceilSecond is d rounded up to whole seconds.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1) / time.Second * time.Second
}

// bursts are n bursts of size requests, every gap, over conns
// connections (a request leaves when a connection is free, and takes 0.1
// to 20 ms), and after each a request alone every 60 ms, which takes 0.1
// to 2 ms; when gap is longer than 2.4s the key then rests 2.3s, which a
// reset or a Retry-After of a second needs to be tested.
func bursts(rng *rand.Rand, n, size, conns int, gap time.Duration) []call.Row {
	var rows []call.Row
	span := func(max time.Duration) time.Duration { return ms(0.1) + time.Duration(rng.Int64N(int64(max))) }
	for b := range n {
		free := make([]time.Duration, conns)
		start := time.Duration(b) * gap
		for i := range size {
			c := i % conns
			sent := max(start+time.Duration(i)*time.Microsecond, free[c])
			free[c] = sent + span(ms(20))
			rows = append(rows, call.Row{Key: "k", Sent: sent, Done: free[c], Attempts: 1})
		}
		end := start + gap
		if gap > 2400*time.Millisecond {
			end -= 2300 * time.Millisecond
		}
		for at := start + 100*time.Millisecond; at < end; at += 60 * time.Millisecond {
			rows = append(rows, call.Row{Key: "k", Sent: at, Done: at + span(ms(2)), Attempts: 1})
		}
	}
	slices.SortStableFunc(rows, func(a, b call.Row) int { return int(a.Sent - b.Sent) })
	return rows
}

// TestHeaderCheckExactBursts: servers whose counts are exact, answering
// bursts over 64 connections out of order, are never contradicted; a
// server whose remaining is 3 too high is.
func TestHeaderCheckExactBursts(t *testing.T) {
	pol := algorithms.Policy{Limit: 20, Window: time.Second}
	newLim := map[string]func(algorithms.Policy) (algorithms.Limiter, error){
		"fixed-window":    func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewFixedWindow(p) },
		"gcra":            func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) },
		"sliding-log":     func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingLog(p) },
		"sliding-log-all": func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingLogAll(p) },
		"token-bucket":    func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewTokenBucket(p) },
	}
	var all result.HeaderStats
	for _, tc := range []struct {
		name  string
		algo  string
		epoch bool
		lie   int64
		gap   time.Duration
		why   string
	}{
		{name: "fixed window, delays", algo: "fixed-window", gap: 2600 * time.Millisecond, why: "exact counts, delays rounded up"},
		{name: "fixed window, epoch seconds", algo: "fixed-window", epoch: true, gap: 3600 * time.Millisecond, why: "resets as epoch seconds rounded down, as ulule/limiter sends them"},
		{name: "fixed window, no rest", algo: "fixed-window", gap: 700 * time.Millisecond, why: "bursts meet the window's edges"},
		{name: "gcra", algo: "gcra", gap: 400 * time.Millisecond, why: "what ratebench serve runs"},
		{name: "gcra, rests", algo: "gcra", epoch: true, gap: 2500 * time.Millisecond, why: "what ratebench serve runs"},
		{name: "sliding log", algo: "sliding-log", epoch: true, gap: 3600 * time.Millisecond, why: "bursts that meet the quota coming back one by one"},
		{name: "sliding log of every request", algo: "sliding-log-all", gap: 4 * time.Second, why: "rejections lengthen the wait: Retry-After holds only for a key that waits"},
		{name: "token bucket", algo: "token-bucket", epoch: true, gap: 300 * time.Millisecond, why: "the bucket refills between bursts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var total result.HeaderStats
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 7))
				lim, err := newLim[tc.algo](pol)
				if err != nil {
					t.Fatal(err)
				}
				rows := exactServer{lim: lim, epoch: tc.epoch}.answer(t, rng, bursts(rng, 8, 60, 64, tc.gap))
				s := check(rows)
				if s.RemainingContradicted+s.RetryAfterEarly+s.RetryAfterOverstated+s.ResetContradicted != 0 {
					t.Fatalf("seed %d (%s): %+v", seed, tc.why, verdictsOf(s))
				}
				total.Add(s)
			}
			if total.RemainingChecked == 0 {
				t.Errorf("remaining was never tested: %+v", verdictsOf(&total))
			}
			all.Add(&total)
			t.Logf("%+v", verdictsOf(&total))
		})
	}
	if all.RetryAfterChecked == 0 || all.ResetChecked == 0 {
		t.Errorf("Retry-After or reset never tested: %+v", verdictsOf(&all))
	}
	t.Run("remaining 3 too high", func(t *testing.T) {
		var total result.HeaderStats
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 7))
			lim, _ := algorithms.NewFixedWindow(pol)
			// Requests one at a time, 5ms apart: no overlap to hide behind.
			var reqs []call.Row
			for i := range 60 {
				at := time.Duration(i) * 5 * time.Millisecond
				reqs = append(reqs, call.Row{Key: "k", Sent: at, Done: at + ms(1), Attempts: 1})
			}
			total.Add(check(exactServer{lim: lim, lie: 3}.answer(t, rng, reqs)))
		}
		// Of 60 requests 20 are admitted: the 20th answer and the 39
		// rejections after it said 3 left and were followed by a
		// rejection; the last was never tested.
		if want := int64(20 * 40); total.RemainingContradicted != want || total.RemainingChecked != 20*59 {
			t.Errorf("contradicted %d of %d in 20 runs, want %d of %d: %+v", total.RemainingContradicted, total.RemainingChecked, want, 20*59, verdictsOf(&total))
		}
	})
}

// BenchmarkHeaderCheck: a row of bursts over 64 connections to one key,
// the worst case for the claims a key holds open.
func BenchmarkHeaderCheck(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 7))
	lim, _ := algorithms.NewGCRA(algorithms.Policy{Limit: 1000, Window: time.Second})
	rows := exactServer{lim: lim}.answer(&testing.T{}, rng, bursts(rng, 20, 2000, 64, 500*time.Millisecond))
	b.ResetTimer()
	for i := 0; i < b.N; {
		h := NewHeaderCheck()
		for _, r := range rows {
			h.Row(r)
			if i++; i == b.N {
				break
			}
		}
		h.Result()
	}
}
