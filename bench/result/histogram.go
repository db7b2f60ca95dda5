package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds for delays and latencies: 1 ns to 1 hour, 3 digits.
const (
	HistLowest  = 1
	HistHighest = int64(3600e9)
	HistDigits  = 3
)

// NewHistogram returns an HdrHistogram with the bounds every ratebench
// latency histogram uses, so that any two can be merged.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistDigits)
}

// PercentilesOf reads the standard percentiles off h.
func PercentilesOf(h *hdrhistogram.Histogram) *Percentiles {
	return &Percentiles{
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), P9999: h.ValueAtQuantile(99.99), Max: h.Max(),
		Count: h.TotalCount(),
	}
}

// EncodeHistogram returns h in the HdrHistogram V2 compressed base64 form.
func EncodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "" // only for an unknown version, which this is not
	}
	return string(b)
}

// DecodeHistogram parses what EncodeHistogram wrote.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("result: latency histogram: %w", err)
	}
	return h, nil
}
