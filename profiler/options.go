package profiler

import "time"

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
	// Race, above 1, lets a sweep stop sampling a spec as soon as it is
	// clearly slower than Race times the best median of its shape so far
	// (the sweep sets Stop.Outpaced from it, spec by spec). 0: off.
	Race float64 `json:"race,omitempty"`
	// Cache is what the last-level cache holds before each sample: cold
	// (the default), hot or dirty (see CacheMode); "" means cold. The
	// older switch hot (--hot, hot: true) sets it to hot.
	Cache CacheMode `json:"cache,omitempty"`
	// Limits overrides what the backend reports about the device (the
	// sweep file's device_limits), e.g. where Metal's table is only an estimate.
	Limits *DeviceLimitsYAML `json:"limits,omitempty"`
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
