package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompareCommand(t *testing.T) {
	base := t.TempDir()
	a := writeResult(t, filepath.Join(base, "a"), smallResult(5))
	b := writeResult(t, filepath.Join(base, "b"), smallResult(9))
	out := filepath.Join(base, "cmp")
	code, stdout, stderr := cli(t, "compare", a, b, "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"compare.html", "compare_admitted_rate.png", "compare_burst_ratio.png", "compare_latency.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, filepath.Join(out, "compare.html")) {
		t.Errorf("stdout %q does not say where the page is", stdout)
	}
	page, _ := os.ReadFile(filepath.Join(out, "compare.html"))
	// html/template spells '+' as "&#43;"; browsers show "+4 (+80.0%)".
	if !strings.Contains(string(page), `<td class="l">leaky-queue</td><td>5</td><td>9</td><td class="d nz">&#43;4 (&#43;80.0%)</td>`) {
		t.Error("compare.html lacks the difference of admitted for leaky-queue")
	}

	// Without -out: beside the inputs, not inside one.
	if code, _, stderr := cli(t, "compare", a, b); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(base, "compare-a-vs-b", "compare.html")); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(a); len(entries) != 1 {
		t.Errorf("compare wrote into A: %v", entries)
	}
}

func TestCompareBadInput(t *testing.T) {
	base := t.TempDir()
	a := writeResult(t, filepath.Join(base, "a"), smallResult(5))
	for _, args := range [][]string{
		{"compare", a}, // one folder
		{"compare", a, filepath.Join(base, "missing")}, // no result.json
		{"compare", a, a, a},                           // three
		{"compare", a, a, "-out"},                      // -out without a value
		{"compare", a, a, "-frobnicate"},               // unknown flag after the folders
	} {
		code, _, stderr := cli(t, args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(a); len(entries) != 1 {
		t.Errorf("bad compares wrote into A: %v", entries)
	}
}

// TestRecordedCommand: result.json records the program as "ratebench",
// not the path it ran from (go run's build cache, a temporary build), and
// the arguments as given; the pages show them, compare.html also the
// compare command itself, relative paths relative.
func TestRecordedCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	const program = "/root/.cache/go-build/ab/abcdef/exe/ratebench"
	run := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, args: append([]string{program}, args...)}
		if code := e.main(context.Background(), args); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
	}
	args := func(dir string) []string {
		t.Helper()
		r, err := readResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r.Meta.Args
	}

	run("boundary", "-out", "live")
	if got, want := args("live"), []string{"ratebench", "boundary", "-out", "live"}; !slices.Equal(got, want) {
		t.Errorf("boundary recorded %q, want %q", got, want)
	}
	run("boundary", "-out", "other")
	run("merge", "-out", "merged", "live", "other")
	if got, want := args("merged"), []string{"ratebench", "merge", "-out", "merged", "live", "other"}; !slices.Equal(got, want) {
		t.Errorf("merge recorded %q, want %q", got, want)
	}

	run("compare", "-out", "cmp", "live", "other")
	page, err := os.ReadFile(filepath.Join("cmp", "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<pre><code>ratebench compare -out cmp live other</code></pre>", // the comparison
		"<pre><code>ratebench boundary -out live</code></pre>",          // its sides
		"<pre><code>ratebench boundary -out other</code></pre>",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	if strings.Contains(string(page), "go-build") {
		t.Error("compare.html names the build cache")
	}
}
