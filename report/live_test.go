package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestLiveSection: a live run's page has the real-time table (offered vs
// achieved rate, drops, the late share marked above 5%, service time and
// lateness), what the harness cost, and .hgrm files for the service time
// and the lateness beside the latency's.
func TestLiveSection(t *testing.T) {
	run := result.Run{Algorithm: "gcra", Offered: 100, Admitted: 10, Rejected: 90, DisagreementPct: -1}
	run.Latency, run.LatencyHDR = resulttest.Values(900, 1000, 30000)
	l := &result.LiveStats{OfferedRatePerS: 19979.4, AchievedRatePerS: 19001, Dropped: 1234, LatePct: 7, LateAfterNS: int64(time.Millisecond)}
	l.Service, l.ServiceHDR = resulttest.Values(85, 90, 700)
	l.Lateness, l.LatenessHDR = resulttest.Values(500, 600, 20000)
	noop, _ := resulttest.Values(50)
	l.Calibration = &result.Calibration{DurationNS: int64(5 * time.Second), OverheadNS: 201, OverheadMeanNS: 700, ClockReadNS: 48,
		Latency: run.Latency, Service: noop}
	run.Live = l
	r := &result.Result{Policy: result.PolicyJSON{Limit: 1000, WindowNS: 1e9, Burst: 1000},
		Workload: map[string]any{"name": "poisson"}, Runs: []result.Run{run}}

	page, err := renderHTML(r, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<h3>Real time</h3>",
		`<td>19,979/s</td><td>19,001/s</td><td>1,234</td><td class="over">7.00%</td>`,
		"<td>90ns</td><td>700ns</td><td>600ns</td><td>20.0µs</td>",
		"started over 1ms late, marked above 5%",
		"on the first 5s of the same schedule: 201 ns per decision (median; mean 700 ns), of which two clock reads at 48 ns each",
		"service time p50 50ns",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	files, err := hgrms(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.File)
		if !strings.Contains(string(f.Data), "#[Mean") {
			t.Errorf("%s is not an .hgrm percentile distribution", f.File)
		}
	}
	if got := strings.Join(names, " "); got != "gcra.hgrm gcra.service.hgrm gcra.lateness.hgrm" {
		t.Errorf("hgrm files %q", got)
	}

	// A sim run's page has no real-time section.
	r.Runs[0].Live = nil
	if page, _ = renderHTML(r, nil, nil, Options{}); strings.Contains(string(page), "Real time") {
		t.Error("a sim run's page has a real-time section")
	}
}

// TestProbeBurstsNotLate: a probe's bursts, sent all at once on purpose,
// are not marked late; the same lateness in another run is.
func TestProbeBurstsNotLate(t *testing.T) {
	run := result.Run{Algorithm: "http", Live: &result.LiveStats{LatePct: 60, LateAfterNS: int64(time.Millisecond)}}
	plain := &result.Result{Runs: []result.Run{run}}
	probed := &result.Result{Runs: []result.Run{run}, Probe: &result.Probe{}}
	if !liveRows(plain)[0].Late {
		t.Error("60% late in an attack is not marked")
	}
	if liveRows(probed)[0].Late || !strings.Contains(liveNote(probed), "lateness is by design") {
		t.Errorf("a probe's bursts are marked late, or the note does not say why: %q", liveNote(probed))
	}
}
