package result

import (
	"fmt"
)

// mergeLive combines the live engines' measures of one target run on
// several machines at once: counts, workers and rates are summed, spans
// are the longest, the service and lateness histograms merged. The
// calibration and a shaper's queue delays (percentiles without a
// histogram) are the first input's, as the harness's cost is per machine.
// Nil when the first run is not live.
func mergeLive(merged Run, runs []Run) (*LiveStats, error) {
	if runs[0].Live == nil {
		for _, r := range runs[1:] {
			if r.Live != nil {
				return nil, fmt.Errorf("%w: a run without live measures and a live run", ErrMismatch)
			}
		}
		return nil, nil
	}
	m := *runs[0].Live
	m.Workers, m.MaxInFlight, m.Scheduled, m.Dropped, m.Late, m.Unserved, m.Abandoned, m.Reordered = 0, 0, 0, 0, 0, 0, 0, 0
	m.OfferedRatePerS, m.AchievedRatePerS, m.SpanNS, m.WallNS = 0, 0, 0, 0
	service, lateness := make([]string, 0, len(runs)), make([]string, 0, len(runs))
	for _, r := range runs {
		l := r.Live
		if l == nil {
			return nil, fmt.Errorf("%w: a live run and a run without live measures", ErrMismatch)
		}
		m.Workers += l.Workers
		m.MaxInFlight += l.MaxInFlight
		m.Scheduled += l.Scheduled
		m.Dropped += l.Dropped
		m.Late += l.Late
		m.Unserved += l.Unserved
		m.Abandoned += l.Abandoned
		m.Reordered += l.Reordered
		m.OfferedRatePerS += l.OfferedRatePerS
		m.AchievedRatePerS += l.AchievedRatePerS
		m.SpanNS, m.WallNS = max(m.SpanNS, l.SpanNS), max(m.WallNS, l.WallNS)
		m.StartLagNS = max(m.StartLagNS, l.StartLagNS)
		service, lateness = append(service, l.ServiceHDR), append(lateness, l.LatenessHDR)
	}
	var err error
	if m.Service, m.ServiceHDR, err = mergeHDR(service); err != nil {
		return nil, fmt.Errorf("service histogram: %w", err)
	}
	if m.Lateness, m.LatenessHDR, err = mergeHDR(lateness); err != nil {
		return nil, fmt.Errorf("lateness histogram: %w", err)
	}
	m.LatePct = 0
	if merged.Offered > 0 {
		m.LatePct = 100 * float64(m.Late) / float64(merged.Offered)
	}
	return &m, nil
}

// mergeHDR merges encoded histograms; nil and "" when one is missing, as
// percentiles of a part would pass for the whole.
func mergeHDR(encoded []string) (*Percentiles, string, error) {
	h := NewHistogram()
	for _, e := range encoded {
		if e == "" {
			return nil, "", nil
		}
		in, err := DecodeHistogram(e)
		if err != nil {
			return nil, "", err
		}
		if dropped := h.Merge(in); dropped > 0 {
			return nil, "", fmt.Errorf("%d values out of range", dropped)
		}
	}
	return PercentilesOf(h), EncodeHistogram(h), nil
}

// mergeHTTP combines the attack measures of one URL attacked from several
// machines at once: responses, connections, held-back arrivals, rates and
// Retry-After values are summed and the 429 share recomputed from the
// summed status codes. Nil when the first run is not an HTTP run. The
// URLs are the first run's and the first other one, when the runs attacked
// more than one.
func mergeHTTP(m Run, runs []Run) (*HTTPStats, []string, error) {
	if runs[0].HTTP == nil {
		for _, r := range runs[1:] {
			if r.HTTP != nil {
				return nil, nil, fmt.Errorf("%w: a run without HTTP measures and an HTTP run", ErrMismatch)
			}
		}
		return nil, nil, nil
	}
	h := *runs[0].HTTP
	h.Responses, h.Connections, h.HeldBack, h.CompletedRatePerS = 0, 0, 0, 0
	h.RetryAfterS = nil
	var urls []string
	for _, r := range runs {
		x := r.HTTP
		if x == nil {
			return nil, nil, fmt.Errorf("%w: an HTTP run and a run without HTTP measures", ErrMismatch)
		}
		if x.URL != h.URL && urls == nil {
			urls = []string{h.URL, x.URL}
		}
		h.Responses += x.Responses
		h.Connections += x.Connections
		h.HeldBack += x.HeldBack
		h.CompletedRatePerS += x.CompletedRatePerS
		h.RetryAfterS = sumCounts(h.RetryAfterS, x.RetryAfterS)
		h.HonorRetryAfter = h.HonorRetryAfter || x.HonorRetryAfter
	}
	h.TooManyPct = 0
	if h.Responses > 0 {
		h.TooManyPct = 100 * float64(m.StatusCodes["429"]) / float64(h.Responses)
	}
	return &h, urls, nil
}
