package report

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"github.com/ratebench/ratebench/bench/check"
	"html/template"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates holds report.html and compare.html; parsed once, safe for
// concurrent use.
var templates = template.Must(template.ParseFS(templateFS, "templates/*.tmpl"))

// kv is one line of a definition list.
type kv struct{ K, V string }

// row is one run in a summary table, every cell formatted.
type row struct {
	Label                               string
	Offered, Admitted, Rejected, Errors string
	MaxInW, Theory, Burst, TheoryRatio  string
	Disagree, Jain, P50, P99, P999, Max string
	Over                                bool
}

// sentence is one line of the reading; Over marks a run above its theory.
type sentence struct {
	Text string
	Over bool
}

// figureView is a chart as the page shows it.
type figureView struct {
	Title, Caption, File string
	// Src is the whole src attribute: base64 needs no escaping, and as a
	// URL html/template would spell every '+' as "&#43;".
	Src template.HTMLAttr
}

// pageView is what page.tmpl renders.
type pageView struct {
	Title, Subtitle, Command, Version string
	Finding                           string
	Checks                            []sentence // Over: failed
	Readings                          []sentence
	Warnings                          []string
	Rows                              []row
	Outcomes                          []outcome
	Live                              []liveRow
	LiveNote                          string
	Charts                            []figureView
	Meta, Workload                    []kv
	Files                             []string
	Fit                               *fitView
}

// fitView is the page's section on a fit: its sentence and the fits.
type fitView struct {
	Sentence, Advertised string
	Rows                 []fitRow
}

type fitRow struct{ Model, Scope, Agreement, Ambiguous string }

// maxFitRows bounds the fits the page lists.
const maxFitRows = 10

func fitViewOf(f *fit.Result, r *result.Result) *fitView {
	if f == nil {
		return nil
	}
	v := &fitView{Sentence: "The service " + f.Sentence() + ".", Advertised: AdvertisedReading(r, f)}
	for _, x := range f.Fits[:min(len(f.Fits), maxFitRows)] {
		v.Rows = append(v.Rows, fitRow{Model: x.String(), Scope: x.Scope,
			Agreement: strconv.FormatFloat(x.AgreementPct, 'f', 2, 64) + "%", Ambiguous: strconv.FormatFloat(x.AmbiguousPct, 'f', 2, 64) + "%"})
	}
	return v
}

// renderHTML returns report.html for r: self-contained (charts embedded as
// data: URIs, inline CSS, no script), with the command that reproduces the
// run, the reading, the summary table, the charts, the run's metadata and
// links to the other files (hgrms lists the .hgrm files).
func renderHTML(r *result.Result, charts []chart, hgrms []file, opts Options) ([]byte, error) {
	v := pageView{
		Title:    opts.Title,
		Subtitle: subtitle(r),
		Command:  command(r.Meta.Args),
		Version:  r.Meta.Version,
		Finding:  Finding(r),
		Checks:   checkLines(r.Checks),
		Readings: readings(r),
		Warnings: r.Meta.Warnings,
		Rows:     rows(r),
		Outcomes: outcomes(r),
		Live:     liveRows(r),
		LiveNote: liveNote(r),
		Charts:   figures(charts, true),
		Meta:     metaKV(r.Meta),
		Workload: workloadKV(r.Workload),
		Files:    []string{"result.json", SeriesFile},
		Fit:      fitViewOf(opts.Fit, r),
	}
	if v.Title == "" {
		v.Title = defaultTitle(r)
	}
	if v.Fit != nil { // a probe's or a fit's page: its answer is the finding
		v.Finding, v.Fit.Sentence = v.Fit.Sentence, ""
	}
	for _, h := range hgrms {
		v.Files = append(v.Files, h.File)
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "page", v); err != nil {
		return nil, fmt.Errorf("report: html: %w", err)
	}
	return buf.Bytes(), nil
}

// defaultTitle names the workload, and for an attack the URL attacked.
func defaultTitle(r *result.Result) string {
	for _, run := range r.Runs {
		switch {
		case run.HTTP != nil && r.Probe != nil:
			return fmt.Sprintf("ratebench probe: %s %s", run.HTTP.Method, run.HTTP.URL)
		case run.HTTP != nil:
			return fmt.Sprintf("ratebench attack: %s %s, %s workload", run.HTTP.Method, run.HTTP.URL, r.WorkloadName())
		}
	}
	return fmt.Sprintf("ratebench: %s workload", r.WorkloadName())
}

// figures embeds charts as data: URIs; link adds a link to each PNG file.
func figures(charts []chart, link bool) []figureView {
	out := make([]figureView, len(charts))
	for i, c := range charts {
		out[i] = figureView{Title: c.Title, Caption: c.Caption,
			Src: template.HTMLAttr(`src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(c.PNG) + `"`)}
		if link {
			out[i].File = c.File
		}
	}
	return out
}

// subtitle states the policy, the number of runs and the mode.
func subtitle(r *result.Result) string {
	s := fmt.Sprintf("%s; %d %s", r.Policy.String(), len(r.Runs), plural(len(r.Runs), "run", "runs"))
	if r.Meta.Mode != "" {
		s += "; mode " + r.Meta.Mode
	}
	if !r.Meta.StartedAt.IsZero() {
		s += "; started " + r.Meta.StartedAt.UTC().Format(time.RFC3339)
	}
	if mi := r.Meta.Merge; mi != nil && mi.Shards > 0 {
		s += fmt.Sprintf("; %d shards merged as one run", mi.Shards)
	} else if mi != nil {
		s += fmt.Sprintf("; a plain sum of %d runs", mi.Inputs)
	}
	return s
}

// mergeText says what a merged result is and how exact its measures are.
func mergeText(mi result.MergeInfo) string {
	var s string
	switch {
	case mi.Shards > 0 && mi.Traced:
		s = fmt.Sprintf("the %d shards of one schedule, read as one run of %d generators: counts and histograms summed; the most admitted in any W, per-key shares, fairness, disagreement and header checks recounted over their requests on one clock", mi.Shards, mi.Shards)
	case mi.Shards > 0:
		s = fmt.Sprintf("the %d shards of one schedule, summed: without their requests.csv the most admitted in any W is a lower bound", mi.Shards)
	case mi.Traced:
		s = fmt.Sprintf("a plain sum of %d runs that are not shards of one schedule: counts and histograms summed, the most admitted in any W and per-key shares counted over their requests on one clock", mi.Inputs)
	default:
		s = fmt.Sprintf("a plain sum of %d runs that are not shards of one schedule: counts and histograms summed, the most admitted in any W a lower bound", mi.Inputs)
	}
	switch {
	case mi.ClockErrorNS > 0:
		s += fmt.Sprintf("; the hosts' clocks up to %v apart, added to the timing uncertainty", Round3(time.Duration(mi.ClockErrorNS)))
	case mi.ClockErrorNS < 0:
		s += "; how far apart the hosts' clocks were is unknown"
	}
	return s
}

// plural picks the word for n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// command returns the shell command that reproduces a run from its
// recorded arguments (os.Args: the program first), quoted for a POSIX
// shell, or "" when none were recorded.
func command(args []string) string {
	if len(args) == 0 {
		return ""
	}
	parts := []string{"ratebench"}
	for _, a := range args[1:] {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote leaves plain words alone and single-quotes anything else.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkLines are the -check outcomes, the failures first.
func checkLines(checks []result.Check) []sentence {
	var fail, pass []sentence
	for _, c := range checks {
		if c.Pass {
			pass = append(pass, sentence{Text: check.Line(c)})
		} else {
			fail = append(fail, sentence{Text: check.Line(c), Over: true})
		}
	}
	return append(fail, pass...)
}

// readings pairs Reading's sentences with whether the run went over its
// theory.
func readings(r *result.Result) []sentence {
	texts := Reading(r)
	out := make([]sentence, len(texts))
	for i, t := range texts {
		out[i] = sentence{Text: t, Over: r.Runs[i].AboveTheory(r.Policy.WindowNS)}
	}
	return out
}

// rows formats the summary table.
func rows(r *result.Result) []row {
	names := r.Labels()
	out := make([]row, len(r.Runs))
	for i, run := range r.Runs {
		out[i] = row{
			Label: names[i], Offered: group(run.Offered), Admitted: group(run.Admitted),
			Rejected: group(run.Rejected), Errors: group(run.Errors),
			MaxInW: group(run.MaxAdmittedInWindow), Theory: group(run.TheoryMaxInWindow),
			Burst:       strconv.FormatFloat(run.BurstRatio, 'f', 2, 64) + "x",
			TheoryRatio: strconv.FormatFloat(theoryRatio(run), 'f', 2, 64) + "x",
			Disagree:    pct(run.DisagreementPct), Jain: strconv.FormatFloat(run.JainFairness, 'f', 3, 64),
			P50: "-", P99: "-", P999: "-", Max: "-",
			Over: run.AboveTheory(r.Policy.WindowNS),
		}
		if l := run.Latency; l != nil {
			out[i].P50, out[i].P99, out[i].P999, out[i].Max = fmtNS(l.P50), fmtNS(l.P99), fmtNS(l.P999), fmtNS(l.Max)
		}
		if run.TheoryMaxInWindow == 0 { // unknown
			out[i].Theory, out[i].TheoryRatio = "-", "-"
		}
		if r.Policy.Limit == 0 { // no limit known
			out[i].Burst = "-"
		}
	}
	return out
}

// outcome is a run's HTTP status codes and error kinds, formatted, and
// what its rate-limit fields were found to say.
type outcome struct{ Label, Codes, Errors, Headers string }

// outcomes lists the runs that have status codes or errors.
func outcomes(r *result.Result) []outcome {
	var out []outcome
	names := r.Labels()
	for i, run := range r.Runs {
		if len(run.StatusCodes) > 0 || len(run.ErrorKinds) > 0 {
			o := outcome{Label: names[i], Codes: counts(run.StatusCodes) + httpText(run.HTTP), Errors: counts(run.ErrorKinds)}
			if run.HTTP != nil {
				o.Headers = HeadersReading(run.HTTP.Headers)
			}
			out = append(out, o)
		}
	}
	return out
}

// httpText is what an HTTP run adds to its status codes: "; 429s: 50.2%
// of responses; Retry-After (s) 1: 300; held back 12".
func httpText(h *result.HTTPStats) string {
	if h == nil {
		return ""
	}
	s := fmt.Sprintf("; 429s: %.1f%% of responses", h.TooManyPct)
	if len(h.RetryAfterS) > 0 {
		s += "; Retry-After (s) " + counts(h.RetryAfterS)
	}
	if h.HonorRetryAfter {
		s += "; held back " + group(h.HeldBack)
	}
	return s
}

// counts formats a map of counts in key order: "200: 297, 429: 300".
func counts(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+": "+group(m[k]))
	}
	return strings.Join(parts, ", ")
}

// group formats n with thousands separators.
var group = result.Group

// metaKV lists the run's metadata.
func metaKV(m result.Meta) []kv {
	out := []kv{
		{"ratebench", orDash(m.Version)},
		{"Go", fmt.Sprintf("%s %s/%s", orDash(m.Go), orDash(m.GOOS), orDash(m.GOARCH))},
		{"CPUs", strconv.Itoa(m.CPUs)},
		{"mode", orDash(m.Mode)},
		{"seed", strconv.FormatUint(m.Seed, 10)},
	}
	if !m.StartedAt.IsZero() {
		out = append(out, kv{"started", m.StartedAt.UTC().Format(time.RFC3339)})
	}
	out = append(out, kv{"elapsed", time.Duration(m.ElapsedNS).Round(time.Millisecond).String()})
	if m.Interrupted {
		out = append(out, kv{"interrupted", "yes: the result holds what ran before Ctrl-C"})
	}
	if m.Merge != nil {
		out = append(out, kv{"merged", mergeText(*m.Merge)})
	}
	if len(m.Hosts) > 0 {
		out = append(out, kv{"merged from", strings.Join(m.Hosts, ", ")})
	}
	return out
}

// workloadKV lists the workload parameters in name order, durations (keys
// ending in _ns) as durations.
func workloadKV(w map[string]any) []kv {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]kv, len(keys))
	for i, k := range keys {
		out[i] = kv{strings.TrimSuffix(k, "_ns"), paramText(k, w[k])}
	}
	return out
}

// paramText formats one workload parameter as decoded from JSON.
func paramText(k string, v any) string {
	f, ok := v.(float64)
	switch {
	case ok && strings.HasSuffix(k, "_ns"):
		return time.Duration(f).String()
	case ok && f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatInt(int64(f), 10)
	case ok:
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	switch x := v.(type) {
	case int64:
		if strings.HasSuffix(k, "_ns") {
			return time.Duration(x).String()
		}
	case int:
		if strings.HasSuffix(k, "_ns") {
			return time.Duration(x).String()
		}
	}
	return fmt.Sprint(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// AdvertisedReading says whether the policy the service advertised in
// RateLimit-Policy is the one fitted, e.g. "It advertises 100 per 1m
// (RateLimit-Policy), which is not what it does."; "" when it advertised
// none or the fit found a shaper. Only a sure fit says the advertised
// policy is wrong: an unsure one may be the timing's error, not the
// service's.
func AdvertisedReading(r *result.Result, f *fit.Result) string {
	if f == nil || f.Shaper {
		return ""
	}
	var adv *result.PolicyJSON
	switch {
	case r.Probe != nil:
		adv = r.Probe.Advertised
	case len(r.Runs) > 0 && r.Runs[0].HTTP != nil && r.Runs[0].HTTP.PolicySource == "RateLimit-Policy":
		adv = &r.Policy
	}
	if adv == nil {
		return ""
	}
	verdict := "which matches the fit"
	switch {
	case f.Confidence == result.Unexplained:
		verdict = "which the fit cannot check: no model explains what it does"
	case f.Best.Matches(*adv):
	case f.Confidence == result.Unsure:
		verdict = "which the fit, being unsure, neither confirms nor rules out"
	default:
		verdict = "which is not what it does"
	}
	return fmt.Sprintf("It advertises %d per %v (RateLimit-Policy), %s.", adv.Limit, time.Duration(adv.WindowNS), verdict)
}
