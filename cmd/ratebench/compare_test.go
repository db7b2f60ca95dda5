package main

import (
	"os"
	"path/filepath"
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
