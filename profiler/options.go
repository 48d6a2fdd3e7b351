package profiler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// StatusCancelled marks a spec the user stopped (esc in the TUI, ctrl+c).
const StatusCancelled Status = "cancelled"

// Options are the measurement settings of one spec.
type Options struct {
	Stop    StopRule `json:"stop"`
	Seed    uint64   `json:"seed"`     // input generator seed
	MaxRows int      `json:"max_rows"` // rows checked against the reference (0: default 256)
	Warmup  float64  `json:"warmup_s"` // seconds of warm-up runs (default 0.02, at least one run)
	// Settle is seconds of the spec's own runs before sampling, taken in
	// full for every spec (0: off). A GPU's boost clock follows the power
	// of about the last second, so without it a spec is timed partly at
	// the clock the specs before it left behind; with Settle 1 each spec
	// is timed at the clock it sustains itself (README "Reproducibility").
	Settle  float64       `json:"settle_s,omitempty"`
	Timeout time.Duration `json:"timeout"` // watchdog for a worker (0: MaxTime*2 + 60 s)
	// Cache is what the last-level cache holds before each sample: cold
	// (the default), hot or dirty (see CacheMode); "" means cold. The
	// older switch hot (--hot, hot: true) sets it to hot.
	Cache CacheMode `json:"cache,omitempty"`
	// Limits overrides what the backend reports about the device (the
	// sweep file's device_limits), e.g. where Metal's table is only an estimate.
	Limits *DeviceLimitsYAML `json:"limits,omitempty"`
}

// Apply returns dev with the overrides set.
func (l *DeviceLimitsYAML) Apply(dev DeviceInfo) DeviceInfo {
	if l == nil {
		return dev
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&dev.TGMPerGroup, l.TGMPerGroup)
	set(&dev.TGMPerUnit, l.TGMPerUnit)
	set(&dev.MaxThreadsPerUnit, l.MaxThreadsPerUnit)
	set(&dev.MaxGroupsPerUnit, l.MaxGroupsPerUnit)
	dev.Notes = append(dev.Notes, "device limits overridden by the sweep file")
	return dev
}

// DefaultOptions are the settings when a user sets nothing.
func DefaultOptions() Options {
	return Options{Stop: DefaultStopRule(), Seed: 1, MaxRows: 256, Warmup: 0.02, Cache: CacheCold}
}

// CacheMode is the mode the samples are taken in: Cache, or cold when unset.
func (o Options) CacheMode() CacheMode {
	if o.Cache == "" {
		return CacheCold
	}
	return o.Cache
}

// WithDefaults fills the settings left at zero from DefaultOptions.
func (o Options) WithDefaults() Options {
	d := DefaultOptions()
	if o.Stop.Noise == 0 {
		o.Stop.Noise = d.Stop.Noise
	}
	if o.Stop.MinSamples == 0 {
		o.Stop.MinSamples = d.Stop.MinSamples
	}
	if o.Stop.MinTime == 0 {
		o.Stop.MinTime = d.Stop.MinTime
	}
	if o.Stop.MaxTime == 0 {
		o.Stop.MaxTime = d.Stop.MaxTime
	}
	if o.Stop.MaxSamples == 0 {
		o.Stop.MaxSamples = d.Stop.MaxSamples
	}
	if o.MaxRows == 0 {
		o.MaxRows = d.MaxRows
	}
	if o.Warmup == 0 {
		o.Warmup = d.Warmup
	}
	return o
}

// WarmupTime is the longest warm-up a spec can take: Warmup, or Settle
// where that is longer.
func (o Options) WarmupTime() float64 {
	return max(o.Warmup, o.Settle)
}

// WatchdogTimeout is how long a worker may take on one spec.
func (o Options) WatchdogTimeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	o = o.WithDefaults()
	return time.Duration((o.Stop.MaxTime*2+o.Settle)*float64(time.Second)) + 60*time.Second
}

// Progress reports a running spec's phase to the UI or the progress bar.
type Progress struct {
	Phase   string  `json:"phase"` // "plan", "compile", "verify", "warmup", "measure"
	Samples int     `json:"samples"`
	Median  float64 `json:"median_ns"`
	CV      float64 `json:"cv"`
}

// Executor runs specs: in process (run.Runner) or in a worker subprocess
// (run.WorkerPool). The TUI and the sweep talk to this.
type Executor interface {
	Device() DeviceInfo
	Run(ctx context.Context, s Spec, opt Options, progress func(Progress)) Result
	Close() error
}

// FormatBytes prints sizes the way people read them.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// DeviceLimitsYAML overrides what the backend reports (Metal's occupancy
// table is an estimate; a user who knows better sets it here).
type DeviceLimitsYAML struct {
	TGMPerGroup       *int `yaml:"tgm_per_group"`
	TGMPerUnit        *int `yaml:"tgm_per_unit"`
	MaxThreadsPerUnit *int `yaml:"max_threads_per_unit"`
	MaxGroupsPerUnit  *int `yaml:"max_groups_per_unit"`
}

// Job is one spec to run with its options.
type Job struct {
	Spec    Spec
	Options Options
}

// Sink receives finished Results. Sinks only read Results.
type Sink interface {
	Write(r Result) error
	Close() error
}

// InputError is bad input: a malformed or impossible sweep file or flag. The
// CLI exits 2 on it, before anything runs.
type InputError struct {
	File      string
	Line, Col int
	Field     string
	Msg       string
	Snippet   string
}

func (e *InputError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Snippet != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(e.Snippet, "\n"))
	}
	return b.String()
}

// IsInputError reports whether err is bad input (exit code 2).
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Tolerances per dtype, used by families that have no reason to differ.
// f32: accumulation-order differences only. f16: 10 mantissa bits (unit
// roundoff 4.9e-4) with outputs rounded once. bf16: 7 mantissa bits (unit
// roundoff 3.9e-3) on inputs and outputs.
var DefaultTolerances = map[DType]Tolerance{
	F32:  {ATol: 1e-5, RTol: 1e-4},
	F16:  {ATol: 1e-3, RTol: 5e-3},
	BF16: {ATol: 8e-3, RTol: 2e-2},
}
