package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/ratebench/ratebench/bench/result"
)

// seriesCSV returns series.csv: a header, then one row per run and time bin
// in run order: bin index, bin start and end in ns from the start of the
// run, the run's label, and the cost admitted (served, for shapers) and
// rejected in that bin.
func seriesCSV(r *result.Result) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"bin", "start_ns", "end_ns", "algorithm", "admitted", "rejected"})
	row := make([]string, 6)
	names := r.Labels()
	for i, run := range r.Runs {
		label := names[i]
		s := run.Series
		for b := range max(len(s.Admitted), len(s.Rejected)) {
			row[0] = strconv.Itoa(b)
			row[1] = strconv.FormatInt(int64(b)*s.BinNS, 10)
			row[2] = strconv.FormatInt(int64(b+1)*s.BinNS, 10)
			row[3] = label
			row[4] = strconv.FormatInt(at(s.Admitted, b), 10)
			row[5] = strconv.FormatInt(at(s.Rejected, b), 10)
			_ = w.Write(row)
		}
	}
	w.Flush() // a bytes.Buffer does not fail
	return buf.Bytes()
}

// at is xs[i], or 0 past its end.
func at(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

// hgrmScale divides the recorded nanoseconds in .hgrm files: values are
// written in milliseconds, the unit HdrHistogram's plotter assumes.
const hgrmScale = 1e6

// hgrmTicks is the number of percentile lines per halving of the distance
// to 100%, as in HdrHistogram's own outputPercentileDistribution.
const hgrmTicks = 5

// file is one rendered file: its name in the folder and its content.
type file struct {
	File string
	Data []byte
	// Label is the run the file belongs to, if any.
	Label string
}

// hgrms returns one <label>.hgrm per run with a latency histogram, and for
// live runs <label>.service.hgrm and <label>.lateness.hgrm, in
// HdrHistogram's percentile distribution format (Value, Percentile,
// TotalCount, 1/(1-Percentile), then the mean, deviation, max and count),
// values in milliseconds.
func hgrms(r *result.Result) ([]file, error) {
	var out []file
	names := r.Labels()
	for i, run := range r.Runs {
		hists := []struct{ suffix, enc string }{{".hgrm", run.LatencyHDR}}
		if l := run.Live; l != nil {
			hists = append(hists, struct{ suffix, enc string }{".service.hgrm", l.ServiceHDR},
				struct{ suffix, enc string }{".lateness.hgrm", l.LatenessHDR})
		}
		for _, x := range hists {
			if x.enc == "" {
				continue
			}
			h, err := result.DecodeHistogram(x.enc)
			if err != nil {
				return nil, fmt.Errorf("report: %s: %w", names[i], err)
			}
			var buf bytes.Buffer
			if _, err := h.PercentilesPrint(&buf, hgrmTicks, hgrmScale); err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			out = append(out, file{File: fileStem(names[i]) + x.suffix, Data: buf.Bytes(), Label: names[i]})
		}
	}
	return out, nil
}
