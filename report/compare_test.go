package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result/resulttest"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Runs = slices.Delete(b.Runs, 3, 4)                // sliding-log x2 only in A
	b.Runs[1].Admitted, b.Runs[1].BurstRatio = 450, 1.5 // fixed-window admits less in B
	b.Runs[0].Algorithm = "gcra"                        // gcra only in B
	dir := filepath.Join(t.TempDir(), "cmp")
	if err := Compare(dir, a, b, CompareOptions{NameA: "before", NameB: "after"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{CompareFile, "compare_" + AdmittedRateFile, "compare_" + BurstRatioFile, "compare_" + LatencyFile} {
		data := readFile(t, filepath.Join(dir, name))
		if strings.HasSuffix(name, ".png") {
			checkPNG(t, name, data)
		}
	}
	page := string(readFile(t, filepath.Join(dir, CompareFile)))
	for _, want := range []string{
		"<title>ratebench compare: before vs after</title>",
		// fixed-window: admitted 600 -> 450, burst ratio 2.00 -> 1.50.
		`<td class="l">fixed-window</td><td>600</td><td>450</td><td class="d nz">-150 (-25.0%)</td>`,
		`<td>2.00x</td><td>1.50x</td><td class="d nz">-0.50</td>`,
		// sliding-log x2 is only in A, gcra only in B.
		`<td class="l">sliding-log x2</td><td>600</td><td>-</td><td class="d">-</td>`,
		`<td class="l">gcra</td><td>-</td><td>306</td><td class="d">-</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "<img "); n != 3 {
		t.Errorf("%d images, want 3", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http") {
		t.Error("compare.html is not self-contained")
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
		t.Error("Compare wrote a report.html")
	}
}
