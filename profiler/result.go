package profiler

import "time"

// Status is the outcome of one spec.
type Status string

const (
	StatusOK           Status = "ok"
	StatusMismatch     Status = "mismatch"
	StatusCompileError Status = "compile_error"
	StatusInvalid      Status = "invalid"
	StatusCrashed      Status = "crashed"
	StatusTimeout      Status = "timeout"
	StatusError        Status = "error" // a backend call failed (allocation, launch)
	// StatusUnchecked: ran and was timed, but there was nothing to check
	// the outputs against (a user kernel with `check: none`).
	StatusUnchecked Status = "unchecked"
	// StatusCancelled marks a spec the user stopped (esc in the TUI, ctrl+c).
	StatusCancelled Status = "cancelled"
)

// Failed says whether the status counts as a failed spec for the exit code.
func (s Status) Failed() bool { return s != StatusOK && s != StatusInvalid && s != StatusUnchecked }

// Stats summarise samples (nanoseconds).
type Stats struct {
	N      int     `json:"n"`
	Min    float64 `json:"min_ns"`
	P10    float64 `json:"p10_ns"`
	Median float64 `json:"median_ns"`
	P90    float64 `json:"p90_ns"`
	Mean   float64 `json:"mean_ns"`
	Stdev  float64 `json:"stdev_ns"`
	CV     float64 `json:"cv"` // reported, not used to stop
	// 95% distribution-free confidence interval of the median (order
	// statistics); zero below 6 samples.
	CILo float64 `json:"ci_lo_ns,omitempty"`
	CIHi float64 `json:"ci_hi_ns,omitempty"`
}

// CIHalfRel is the half-width of the median's confidence interval relative
// to the median (0 when unknown).
func (s Stats) CIHalfRel() float64 {
	if s.Median <= 0 || s.CIHi == 0 {
		return 0
	}
	return (s.CIHi - s.CILo) / 2 / s.Median
}

// Verdict compares outputs to the float64 reference.
type Verdict struct {
	MaxAbsErr   float64 `json:"max_abs_err"`
	MaxRelErr   float64 `json:"max_rel_err"`
	RMSErr      float64 `json:"rms_err"`
	Mismatches  int     `json:"mismatches"`
	NaNInf      int     `json:"nan_inf"`
	Checked     int     `json:"elements_checked"`
	ATol        float64 `json:"atol"`
	RTol        float64 `json:"rtol"`
	RowsChecked int     `json:"rows_checked"`
	RowsTotal   int     `json:"rows_total"`
	Rows        string  `json:"rows"` // which rows, in words
	Pass        bool    `json:"pass"`
	Unchecked   bool    `json:"unchecked,omitempty"` // nothing to compare against: Pass means only "not failed"
	Worst       string  `json:"worst,omitempty"`     // the element nearest to (or furthest past) its bound, with the bound's parts
	// Growth: some checked output's bound has the growth term (terms:, a
	// family's reduction), so the bound's words name it.
	Growth bool `json:"-"`
	// WorstRatio is max |got−want|/bound over the checked elements: above 1
	// is a mismatch, and how far below 1 a pass stays is its headroom.
	WorstRatio float64 `json:"worst_over_bound"`
	// Hint, on a mismatch, is what would explain it rather than a wrong
	// kernel (every mismatch within the rounding of a sum in f16: declare
	// that accumulation).
	Hint string `json:"hint,omitempty"`
}

// BudgetReport holds one dispatch's threadgroup memory against the limit.
type BudgetReport struct {
	Dispatch    string    `json:"dispatch"`
	Items       []TGMItem `json:"items"`
	Total       int       `json:"total"`
	Limit       int       `json:"limit"`
	CompilerTGM int       `json:"compiler_tgm,omitempty"` // static TGM the compiler reports
	Threads     int       `json:"threads"`
	MaxThreads  int       `json:"max_threads,omitempty"` // compiler's limit for this pipeline
	Warnings    []string  `json:"warnings,omitempty"`
}

// Occupancy is groups resident per unit and what limits it.
type Occupancy struct {
	Dispatch      string  `json:"dispatch"`
	Available     bool    `json:"available"`
	Reason        string  `json:"reason,omitempty"` // why not available
	GroupsPerUnit int     `json:"groups_per_unit"`
	Limiter       string  `json:"limiter"` // "threads", "tgm", "registers", "groups"
	Estimate      bool    `json:"estimate"`
	Confidence    string  `json:"confidence,omitempty"` // "low" where the table is known to be rough
	Source        string  `json:"source,omitempty"`     // "driver", "table: …"
	ThreadsPct    float64 `json:"threads_pct"`          // resident threads / max threads per unit
	Registers     int     `json:"registers,omitempty"`
	SpillBytes    int     `json:"spill_bytes,omitempty"`
}

// DispatchStats is the timing of one dispatch of a multi-kernel plan.
type DispatchStats struct {
	Name     string  `json:"name"`
	MedianNS float64 `json:"median_ns"` // = Stats.Median, at the top for people comparing with ncu
	Setup    bool    `json:"setup"`     // a setup step timed with the plan (a zero fill), not a kernel
	Stats    Stats   `json:"stats"`
}

// Result is everything known about one spec after it ran (or failed to).
type Result struct {
	Time         time.Time       `json:"time"`
	Spec         Spec            `json:"spec"`
	Backend      string          `json:"backend"`
	Device       string          `json:"device"`
	Timer        string          `json:"timer,omitempty"`
	Cache        CacheMode       `json:"cache,omitempty"`         // the cache mode the samples were taken in
	SMClockMHz   float64         `json:"sm_clock_mhz,omitempty"`  // the GPU's effective core clock during the samples (median of the probes around each batch; CUDA)
	Settle       float64         `json:"settle_s,omitempty"`      // seconds the spec ran before its samples when --settle asked for it (Options.Settle)
	StopReason   string          `json:"stop_reason,omitempty"`   // StopPrecision, StopTimeLimit, StopMaxSamples, StopOutpaced
	DriftRel     float64         `json:"drift_rel,omitempty"`     // |median of first third − last third| / median at the stop
	DriftDropped int             `json:"drift_dropped,omitempty"` // samples dropped as warm-up because the level moved during the measurement (StopRule.Restart)
	Phases       *Phases         `json:"phases,omitempty"`        // where the spec's wall time went
	Status       Status          `json:"status"`
	Error        string          `json:"error,omitempty"`
	Stats        Stats           `json:"stats"`
	Samples      []float64       `json:"samples_ns,omitempty"` // per rep, all dispatches summed, in time order
	PerDispatch  []DispatchStats `json:"per_dispatch,omitempty"`
	FLOPs        float64         `json:"flops"`
	Bytes        float64         `json:"bytes"`
	TFLOPS       float64         `json:"tflops"`
	GBps         float64         `json:"gbps"`
	PctPeakFLOP  float64         `json:"pct_peak_flops,omitempty"`
	PctPeakBW    float64         `json:"pct_peak_bw,omitempty"`
	PctMeasFLOP  float64         `json:"pct_measured_flops,omitempty"`
	PctMeasBW    float64         `json:"pct_measured_bw,omitempty"`
	MemoryBytes  int64           `json:"memory_bytes"`
	Budget       []BudgetReport  `json:"budget,omitempty"`
	Occupancy    []Occupancy     `json:"occupancy,omitempty"`
	Verdict      *Verdict        `json:"verdict,omitempty"`
	Notes        []string        `json:"notes,omitempty"`
	WallSeconds  float64         `json:"wall_s"`

	// Search marks a row measured by a search (mltop tune, a sweep's
	// search: block): which step, and how briefly; nil for other rows.
	Search *SearchMark `json:"search,omitempty"`

	// DeviceOrdinal is the GPU's ordinal on its host as the parent process
	// numbers them (the N of --devices N; 0 on a one-device run).
	DeviceOrdinal int `json:"device_ordinal"`
}

// SearchMark is where a row stands in a search: Step counts the search's
// measurements from 1; Fidelity below 1 is a brief measurement (that share
// of the time limit, successive halving); Final marks the re-measurement
// of a contender after the search.
type SearchMark struct {
	Step     int     `json:"step"`
	Fidelity float64 `json:"fidelity"`
	Final    bool    `json:"final,omitempty"`
}

// MaxTGM is the largest per-dispatch threadgroup memory total.
func (r *Result) MaxTGM() (total, limit int) {
	for _, b := range r.Budget {
		if b.Total >= total {
			total, limit = b.Total, b.Limit
		}
	}
	return total, limit
}

// MinOccupancy is the tightest available occupancy across dispatches.
func (r *Result) MinOccupancy() (Occupancy, bool) {
	var best Occupancy
	found := false
	for _, o := range r.Occupancy {
		if !o.Available {
			continue
		}
		if !found || o.GroupsPerUnit < best.GroupsPerUnit {
			best, found = o, true
		}
	}
	return best, found
}

// Sink receives finished Results. Sinks only read Results.
type Sink interface {
	Write(r Result) error
	Close() error
}
