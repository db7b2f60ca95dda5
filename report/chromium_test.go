//go:build unix

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// probe is put at the top of a copy of a page: it records script errors,
// failed loads and console.error calls, and once the page has loaded
// writes them into a <pre id=probe> that --dump-dom prints, with the
// state of every image, what is wider than the window (the document, or
// any box that scrolls sideways) and each figure's caption.
const probe = `<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    errors.push(t && t.tagName ? "failed to load <" + t.tagName.toLowerCase() + ">" : "error: " + e.message);
  }, true);
  var ce = console.error;
  console.error = function () { errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); };
  function name(el) {
    return el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " " + JSON.stringify((el.textContent || el.alt || "").trim().slice(0, 60));
  }
  window.addEventListener("load", function () {
    var bad = [];
    for (var i = 0; i < document.images.length; i++) {
      var img = document.images[i];
      if (!img.complete || img.naturalWidth === 0) bad.push(img.alt || String(i));
    }
    var root = document.documentElement, wide = [];
    if (root.scrollWidth > root.clientWidth) wide.push("document: " + root.scrollWidth + " px wide in " + root.clientWidth);
    var all = document.body.getElementsByTagName("*"), seen = [];
    for (var i = 0; i < all.length; i++) {
      var el = all[i], r = el.getBoundingClientRect();
      if (seen.some(function (p) { return p.contains(el); })) continue; // the outermost box says it
      var ox = getComputedStyle(el).overflowX;
      if (ox !== "visible" && el.scrollWidth > el.clientWidth + 1) {
        wide.push(name(el) + " scrolls: " + el.scrollWidth + " px in " + el.clientWidth);
        seen.push(el);
      } else if (r.right > root.clientWidth + 0.5) {
        wide.push(name(el) + " ends at " + Math.round(r.right) + " px of " + root.clientWidth);
        seen.push(el);
      }
    }
    var figs = [], fs = document.getElementsByTagName("figure");
    for (var i = 0; i < fs.length; i++) {
      var img = fs[i].querySelector("img"), cap = fs[i].querySelector("figcaption");
      figs.push({alt: img ? img.alt : "", caption: cap ? cap.textContent.trim() : "",
        below: !!(img && cap && cap.getBoundingClientRect().top >= img.getBoundingClientRect().bottom - 0.5)});
    }
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.style.display = "none";
    var finding = document.querySelector("p.finding");
    pre.textContent = JSON.stringify({width: window.innerWidth, images: document.images.length, bad: bad, errors: errors, wide: wide, figures: figs,
      findingBottom: finding && finding.textContent.trim() ? finding.getBoundingClientRect().bottom : -1});
    document.body.appendChild(pre);
  });
})();
</script>`

// chromium returns the path of Debian's chromium, or skips the test (fails
// it when RATEBENCH_REQUIRE_CHROMIUM=1, as in CI).
func chromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("RATEBENCH_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("chromium is not on PATH and RATEBENCH_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
		}
		t.Skip("chromium is not on PATH (apt-get install chromium; .ci/run installs it)")
	}
	return bin
}

// runChromium runs headless chromium on a file with a fresh profile,
// killing its whole process group after 60 s, and returns its stdout and
// stderr.
func runChromium(t *testing.T, bin, file string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0",
	}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+file)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers it may have left
	}
	if err != nil {
		t.Fatalf("chromium %s: %v (context: %v)\nstderr:\n%s", strings.Join(args, " "), err, ctx.Err(), tail(errb.String(), 20))
	}
	return out.Bytes(), errb.Bytes()
}

// consoleLines returns chromium's log lines of console messages.
func consoleLines(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			out = append(out, l)
		}
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// probed is what the probe found on a page.
type probed struct {
	Width int
	// FindingBottom is where the page's finding ends, in px from the top
	// (-1: none).
	FindingBottom float64
	Images        int
	Bad           []string
	Errors        []string
	Wide          []string
	Figures       []struct {
		Alt, Caption string
		Below        bool
	}
}

// probePage loads a copy of the page at path with the probe in a
// window of width px and returns what the probe found, failing the test
// on console messages.
func probePage(t *testing.T, bin, path string, width int) probed {
	t.Helper()
	page := string(readFile(t, path))
	probePath := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probePath, []byte(strings.Replace(page, "<head>", "<head>\n"+probe, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := runChromium(t, bin, probePath, "--virtual-time-budget=10000", fmt.Sprintf("--window-size=%d,1000", width), "--dump-dom")
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	m := regexp.MustCompile(`<pre id="probe"[^>]*>(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run; dom:\n%s", tail(string(dom), 10))
	}
	var got probed
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	if got.Width != width {
		t.Fatalf("the window is %d px wide, want %d: chromium ignored --window-size", got.Width, width)
	}
	return got
}

// checkPage loads the page at path in a window 1280 px wide: no console
// message or error, every image decoded, nothing wider than the window
// (no sideways scrolling, of the page or of a box in it), a caption
// under each chart, and the finding within the first screen of a
// 1280x800 window.
func checkPage(t *testing.T, bin, path string) {
	t.Helper()
	got := probePage(t, bin, path, 1280)
	if got.FindingBottom <= 0 || got.FindingBottom > 800 {
		t.Errorf("the finding ends %.0f px down, want it within the first 800", got.FindingBottom)
	}
	if want := strings.Count(string(readFile(t, path)), "<img "); got.Images != want || want == 0 {
		t.Errorf("chromium saw %d images, the page has %d", got.Images, want)
	}
	if len(got.Bad) > 0 {
		t.Errorf("images that did not load: %q", got.Bad)
	}
	if len(got.Errors) > 0 {
		t.Errorf("errors: %q", got.Errors)
	}
	if len(got.Wide) > 0 {
		t.Errorf("wider than a window 1280 px wide:\n%s", strings.Join(got.Wide, "\n"))
	}
	if len(got.Figures) != got.Images {
		t.Errorf("%d figures for %d images", len(got.Figures), got.Images)
	}
	for _, f := range got.Figures {
		if !f.Below || !strings.HasPrefix(f.Caption, f.Alt+".") || len(f.Caption) < len(f.Alt)+20 {
			t.Errorf("figure %q: caption %.80q (under the image: %v)", f.Alt, f.Caption, f.Below)
		}
	}
}

// longArgs is a command line as long as a real one gets, with a path
// that has no place to break.
var longArgs = []string{"/root/.cache/go-build/ab/abcdef/exe/ratebench", "run", "-mode", "live",
	"-algos", "token-bucket,gcra,leaky-bucket,leaky-queue,fixed-window,sliding-log,sliding-counter,fixed-window-first,nginx-limit-req",
	"-workload", "replay:/home/someone/traces/" + strings.Repeat("a-very-long-trace-name-", 8) + "2026-12-01T22:25:55Z.csv",
	"-rate", "300", "-limit", "100", "-duration", "10s", "-out", "results/" + strings.Repeat("long-folder-name/", 6) + "live"}

// TestChromium loads report.html and compare.html in a real headless
// Chromium from disk (see checkPage), and takes a screenshot of
// report.html that is not blank.
func TestChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := writeFixture(t)

	t.Run("report", func(t *testing.T) {
		t.Parallel()
		checkPage(t, bin, filepath.Join(dir, HTMLFile))
	})
	t.Run("report with a long command", func(t *testing.T) {
		t.Parallel()
		r := resulttest.Fixture()
		r.Meta.Args = longArgs
		long := t.TempDir()
		if err := Write(long, r, Options{}); err != nil {
			t.Fatal(err)
		}
		checkPage(t, bin, filepath.Join(long, HTMLFile))
	})
	t.Run("compare", func(t *testing.T) {
		t.Parallel()
		// A long command, a long label and counts of a long run.
		a, b := resulttest.Fixture(), resulttest.Fixture()
		a.Meta.Args = longArgs
		for _, r := range []*result.Result{a, b} {
			r.Runs[2].Backend = "redis://cache.internal.example:6379/0"
			for i := range r.Runs {
				r.Runs[i].Admitted, r.Runs[i].Rejected = 12_345_678+int64(len(r.Runs)*i), 98_765_432
			}
		}
		b.Runs[1].Admitted, b.Runs[1].Rejected, b.Runs[1].BurstRatio = 12_045_678, 99_765_432, 1.5
		b.Runs[0].Algorithm = "gcra"
		cmp := t.TempDir()
		if err := Compare(cmp, a, b, CompareOptions{NameA: "results/attack-vs-live/live", NameB: "results/attack",
			Args: []string{"ratebench", "compare", "-out", "results/attack-vs-live", "results/attack-vs-live/live", "results/attack"}}); err != nil {
			t.Fatal(err)
		}
		checkPage(t, bin, filepath.Join(cmp, CompareFile))
	})
	t.Run("screenshot", func(t *testing.T) {
		t.Parallel()
		shot := filepath.Join(t.TempDir(), "screenshot.png")
		_, stderr := runChromium(t, bin, filepath.Join(dir, HTMLFile),
			"--screenshot="+shot, "--window-size=1280,2400", "--hide-scrollbars", "--virtual-time-budget=10000")
		if lines := consoleLines(stderr); len(lines) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
		}
		checkPNG(t, "screenshot", readFile(t, shot))
		if dst := os.Getenv("RATEBENCH_SCREENSHOT"); dst != "" { // to look at it
			if err := os.WriteFile(dst, readFile(t, shot), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}
