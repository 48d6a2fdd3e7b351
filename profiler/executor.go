package profiler

import "context"

// Executor runs specs: in process (run.Runner) or in a worker subprocess
// (run.WorkerPool). The TUI and the sweep talk to this.
type Executor interface {
	Device() DeviceInfo
	Run(ctx context.Context, s Spec, opt Options, progress func(Progress)) Result
	Close() error
}

// Job is one spec to run with its options.
type Job struct {
	Spec    Spec
	Options Options
}

// Progress reports a running spec's phase to the UI or the progress bar.
type Progress struct {
	Phase   string  `json:"phase"` // "plan", "compile", "verify", "warmup", "measure"
	Samples int     `json:"samples"`
	Median  float64 `json:"median_ns"`
	CV      float64 `json:"cv"`
}
