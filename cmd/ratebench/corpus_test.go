//go:build !race && linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/probe/corpus"
	"github.com/ratebench/ratebench/bench/result"
)

// corpusSources are the client addresses of a probe's second run: four,
// so that a limit per address is told from one for all.
const corpusSources = "127.0.0.1-127.0.0.4"

// TestCorpus: probed, each real limiter of the corpus (package
// bench/probe/corpus: go-chi/httprate, ulule/limiter, x/time/rate,
// express-rate-limit, HAProxy, nginx at r/s and r/m, and one no model
// explains) and `ratebench serve` for each algorithm at windows that are
// not whole seconds, is found to be what it is: corpus.Check's every
// criterion, from one client address and from four (-source-addrs; serve
// from four only), each probe on a server of its own started for it,
// within 5,000 requests and a minute, or unsure and saying why (see
// alwaysKept and minRightPct). Every failed criterion of a probe is
// reported, and each probe logs a row of a markdown table (target, true
// policy, verdict, agreement, too close to call, requests, wall time),
// the whole table at the end (and into the file RATEBENCH_CORPUS_TABLE
// names, if set); each probe's folder is kept under the folder
// RATEBENCH_CORPUS_KEEP names, if set, to be fitted again. A target whose
// program is missing is skipped (failed under its corpus.RequireEnv).
func TestCorpus(t *testing.T) {
	type variant struct {
		name    string
		args    []string
		sources int
	}
	one := variant{name: "one address", sources: 1}
	four := variant{name: "four addresses", args: []string{"-source-addrs", corpusSources}, sources: 4}
	type target struct {
		name string
		// start starts a server for one probe, stopped by the test's
		// cleanup, and returns its URL and truth (httprate's depends on
		// the instant its limiter is made).
		start    func(t *testing.T) (string, corpus.Truth)
		variants []variant
	}
	var targets []target
	for _, name := range corpus.Names() {
		targets = append(targets, target{name: name, variants: []variant{one, four}, start: func(t *testing.T) (string, corpus.Truth) {
			s := startCorpus(t, name)
			return s.URL, s.Truth
		}})
	}
	// serve's own algorithms are probed from four addresses only: the
	// probe from one is what every third-party target above gets, and
	// the pair for each would add some six minutes to make test.
	for _, sc := range corpus.ServeCases() {
		targets = append(targets, target{name: sc.Name, variants: []variant{four}, start: func(t *testing.T) (string, corpus.Truth) {
			return startServe(t, sc.Args...).url, sc.Truth
		}})
	}
	began := time.Now()
	var mu sync.Mutex
	var rows []string
	right := 0 // probes that met every criterion
	t.Cleanup(func() {
		slices.Sort(rows)
		table := fmt.Sprintf("%d probes in %v, %d right on every criterion:\n\n%s\n%s\n", len(rows), time.Since(began).Round(time.Second), right,
			corpus.TableHeader, strings.Join(rows, "\n"))
		t.Log(table)
		if path := os.Getenv("RATEBENCH_CORPUS_TABLE"); path != "" { // for bench/probe/README.md
			if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
				t.Error(err)
			}
		}
		if want := len(rows) * minRightPct / 100; right < want {
			t.Errorf("%d of %d probes right on every criterion, want at least %d (%d%%)", right, len(rows), want, minRightPct)
		}
	})
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			// Probes run corpusParallel at a time (-parallel): most of a
			// probe's minute is paced sending and idle gaps.
			t.Parallel()
			for _, v := range tg.variants {
				t.Run(v.name, func(t *testing.T) {
					t.Parallel()
					url, truth := tg.start(t)
					run := probeCorpus(t, url, v.args)
					run.Sources = v.sources
					row := corpus.Row(tg.name+", "+v.name, truth, run)
					mu.Lock()
					rows = append(rows, row)
					mu.Unlock()
					t.Log(row)
					p := run.Result.Probe
					if p != nil {
						t.Logf("confidence %q, doubts %q; timing uncertainty %v; rejections %v", p.Confidence, p.Doubts,
							time.Duration(p.UncertaintyNS).Round(time.Microsecond), p.RejectStatuses)
						for _, f := range p.Fits[:min(3, len(p.Fits))] {
							t.Logf("fit %s: %.2f%% of %d scored predicted, %.2f%% too close to call", f, f.AgreementPct, f.Scored, f.AmbiguousPct)
						}
					}
					fails := corpus.Check(truth, run)
					mu.Lock()
					if len(fails) == 0 {
						right++
					}
					mu.Unlock()
					for _, f := range fails {
						if p != nil && p.Confidence != result.Sure && !truth.Outside && !slices.ContainsFunc(alwaysKept, func(c string) bool { return strings.HasPrefix(f, c+":") }) {
							t.Logf("missed, and said so (%s): %s", p.Confidence, f)
							continue
						}
						t.Error(f)
					}
				})
			}
		})
	}
}

// A probe whose verdict is not sure may miss the fit's criteria (it says
// so, and why); a sure one may not, and no probe may miss alwaysKept.
// minRightPct of the probes must meet every criterion: on a busy host
// timing blurs a few verdicts into honest doubt, never into a confident
// wrong one.
var alwaysKept = []string{"reject status", "requests", "wall time"}

const minRightPct = 80

// startCorpus starts the corpus's target name for the test, which
// stops it in its cleanup. A missing program skips the test, or fails it
// under the target's corpus.RequireEnv=1.
func startCorpus(t *testing.T, name string) *corpus.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg, err := corpus.Start(ctx, name, t.TempDir())
	if errors.Is(err, corpus.ErrMissing) {
		if env := corpus.RequireEnv(name); env != "" && os.Getenv(env) == "1" {
			t.Fatalf("%s=1 but %v", env, err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.Stop(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	return tg
}

// probeCorpus runs `ratebench probe` against url, bounded by the
// corpus's requests and wall time, with args, and returns its
// result.json and wall time.
func probeCorpus(t *testing.T, url string, args []string) corpus.Run {
	t.Helper()
	out := filepath.Join(t.TempDir(), "probe")
	if keep := os.Getenv("RATEBENCH_CORPUS_KEEP"); keep != "" { // for refitting with `ratebench fit`
		out = filepath.Join(keep, strings.NewReplacer("/", "_", " ", "-").Replace(t.Name()))
	}
	argv := append([]string{"probe", "-url", url, "-no-report", "-out", out,
		"-max-requests", strconv.Itoa(corpus.MaxRequests), "-max-duration", corpus.MaxWall.String()}, args...)
	// Not runCLI: probes run in parallel, and one process has one working
	// folder; every path here is absolute.
	var stdout, errb bytes.Buffer
	e := &env{stdout: &stdout, stderr: &errb, args: append([]string{"ratebench"}, argv...)}
	start := time.Now()
	code := e.main(context.Background(), argv)
	took := time.Since(start)
	stderr := errb.String()
	if code != 0 {
		t.Fatalf("probe exit %d after %v: %s", code, took.Round(time.Millisecond), stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	return corpus.Run{Result: res, Wall: took}
}
