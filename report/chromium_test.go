//go:build unix

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// probe is put at the top of a copy of report.html: it records script
// errors, failed loads and console.error calls, and once the page has
// loaded writes them with the state of every image into a <pre id=probe>
// that --dump-dom prints.
const probe = `<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    errors.push(t && t.tagName ? "failed to load <" + t.tagName.toLowerCase() + ">" : "error: " + e.message);
  }, true);
  var ce = console.error;
  console.error = function () { errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); };
  window.addEventListener("load", function () {
    var bad = [];
    for (var i = 0; i < document.images.length; i++) {
      var img = document.images[i];
      if (!img.complete || img.naturalWidth === 0) bad.push(img.alt || String(i));
    }
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify({images: document.images.length, bad: bad, errors: errors});
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

// TestChromium loads report.html in a real headless Chromium from disk: no
// console message or error, every image decoded, and a screenshot that is
// not blank.
func TestChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := writeFixture(t)
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))

	probed := strings.Replace(page, "<head>", "<head>\n"+probe, 1)
	probePath := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probePath, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := runChromium(t, bin, probePath, "--virtual-time-budget=10000", "--dump-dom")
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	m := regexp.MustCompile(`<pre id="probe">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run; dom:\n%s", tail(string(dom), 10))
	}
	var got struct {
		Images int
		Bad    []string
		Errors []string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(page, "<img "); got.Images != want || want == 0 {
		t.Errorf("chromium saw %d images, the page has %d", got.Images, want)
	}
	if len(got.Bad) > 0 {
		t.Errorf("images that did not load: %q", got.Bad)
	}
	if len(got.Errors) > 0 {
		t.Errorf("errors: %q", got.Errors)
	}

	shot := filepath.Join(t.TempDir(), "screenshot.png")
	_, stderr = runChromium(t, bin, filepath.Join(dir, HTMLFile),
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
}
