package result

// LateShareWarn is the share of late arrivals above which a live run is
// flagged: the machine, not the limiter, was then the bottleneck.
const LateShareWarn = 0.05

// LiveStats are the measures only the live engine makes, in Run.Live.
// Times are in ns since the pass's start or, for percentiles, durations in
// ns. Every percentile set counts each request offered to the limiter once.
type LiveStats struct {
	Workers     int   `json:"workers"`
	MaxInFlight int   `json:"max_inflight"`
	LateAfterNS int64 `json:"late_after_ns"`
	// Scheduled is the arrivals whose intended instant the pass reached:
	// Offered (sent to the limiter) plus Dropped (at the in-flight cap)
	// plus Unsent, plus, for an executor pass, HTTPStats.HeldBack.
	// Arrivals still queued when a pass is interrupted are in neither.
	Scheduled int64 `json:"scheduled"`
	Dropped   int64 `json:"dropped"`
	// Unsent counts the arrivals due before the pass's end that a sender
	// fallen behind had not sent when it reached the end, where it stops
	// so that the pass's wall time stays bounded; they are in Scheduled.
	Unsent int64 `json:"unsent,omitempty"`
	// OfferedRatePerS is Scheduled over the intended span (the workload's
	// duration, or up to the interrupt); AchievedRatePerS is Offered over
	// the span it really took to send them (at least the intended span).
	OfferedRatePerS  float64 `json:"offered_rate_per_s"`
	AchievedRatePerS float64 `json:"achieved_rate_per_s"`
	// SpanNS is the intended span: the workload's duration, or up to the
	// interrupt. WallNS is the pass's wall time, drain included.
	SpanNS int64 `json:"span_ns"`
	WallNS int64 `json:"wall_ns"`
	// StartLagNS is how long after its planned start (live.Config.StartAt,
	// ratebench -start-at) the pass began; its arrivals count their
	// lateness from the planned start. 0 without a planned start.
	StartLagNS int64 `json:"start_lag_ns,omitempty"`
	// Late is how many calls started more than LateAfterNS after their
	// intended instant; LatePct the same in percent of Offered.
	Late    int64   `json:"late"`
	LatePct float64 `json:"late_pct"`
	// Service is done minus actual start of the call (for shapers,
	// including the wait); Lateness is actual start minus intended
	// instant: the sender's own delay. Run.Latency is done minus intended.
	Service     *Percentiles `json:"service_ns"`
	ServiceHDR  string       `json:"service_hdr,omitempty"`
	Lateness    *Percentiles `json:"lateness_ns"`
	LatenessHDR string       `json:"lateness_hdr,omitempty"`
	// QueueDelay is, for shapers, the Decision.Delay they gave admitted
	// requests (what the sim engine reports as latency).
	QueueDelay *Percentiles `json:"queue_delay_ns,omitempty"`
	// Unserved counts shaper waits not awaited because the pass ended
	// (Drain) or was interrupted; their latency is the promised one.
	Unserved int64 `json:"unserved,omitempty"`
	// Abandoned counts workers still inside Allow half a second after an
	// interrupt, given up on: their decisions and measures are missing.
	Abandoned int `json:"abandoned_workers,omitempty"`
	// Reordered counts decisions the collector got after a later one
	// (a harness fault: 0 is expected).
	Reordered int64 `json:"reordered,omitempty"`
	// HarnessOverheadNS is Calibration.OverheadNS (the median harness
	// cost per decision), here for the table.
	HarnessOverheadNS float64      `json:"harness_overhead_ns,omitempty"`
	Calibration       *Calibration `json:"calibration,omitempty"`
}

// Calibration is what the harness itself costs, measured by running a
// no-op limiter (admits everything, at once) on the same schedule. The
// same for every run of one Live call.
type Calibration struct {
	// DurationNS is how much of the schedule the no-op pass replayed.
	DurationNS int64 `json:"duration_ns"`
	// OverheadNS is the median time per decision a worker spends around
	// the limiter's Allow: its two clock reads, the record of the
	// decision and its counters (measured from the first clock read to a
	// third one after the bookkeeping), plus its share of the time spent
	// recording the three histograms and handing decisions to the
	// collector, which a worker does in batches.
	// OverheadMeanNS is the same with the mean, pulled up by the rare
	// decisions during which the worker was descheduled; Overhead the
	// distribution of the per-decision part.
	OverheadNS     float64      `json:"overhead_ns"`
	OverheadMeanNS float64      `json:"overhead_mean_ns"`
	Overhead       *Percentiles `json:"overhead_dist_ns"`
	// ClockReadNS is what one read of the clock costs on this machine
	// (the median of clockRounds rounds of clockReads back-to-back
	// reads): a decision takes two. It is 20-50 ns on most hardware and
	// can be much more in a virtual machine, where it then makes most of
	// OverheadNS.
	ClockReadNS float64 `json:"clock_read_ns"`
	// Latency, Service and Lateness are the no-op's: the floor under any
	// limiter's figures on this machine and schedule.
	Latency          *Percentiles `json:"latency_ns"`
	Service          *Percentiles `json:"service_ns"`
	Lateness         *Percentiles `json:"lateness_ns"`
	AchievedRatePerS float64      `json:"achieved_rate_per_s"`
	LatePct          float64      `json:"late_pct"`
}
