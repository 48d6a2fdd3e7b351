package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

// errHelp is returned after -h printed the help: exit 0.
var errHelp = errors.New("help shown")

// options are the flags shared by the interactive session, sweeps and run.
type options struct {
	backend    string
	csv        string
	resume     string
	json       bool
	bench      bool
	noise      float64
	timeLimit  float64
	minTime    float64
	minSamples int
	maxSamples int
	warmup     float64
	settle     float64
	hot        bool
	cache      string
	phases     bool
	seed       uint64
	maxRows    int
	timeout    float64
	isolate    string
	noColor    bool
	quiet      bool
	devices    string // --devices (sweeps): "" for one device
	shard      string // --shard (sweeps)
	yes        bool
	set        map[string]bool // flags given explicitly on the command line
	kernels    kernelPaths     // --kernel PATH: user manifests
	// partialKernels: --kernel folders may hold manifests that do not load
	// (the interactive session shows their errors and runs the others).
	partialKernels bool
}

func (o *options) register(fs *flag.FlagSet) {
	d := profiler.DefaultOptions()
	fs.StringVar(&o.backend, "backend", "auto", "backend: auto (Metal on macOS, else CUDA where libcuda.so.1 loads, else CPU), metal, cuda or cpu")
	fs.StringVar(&o.csv, "csv", "", "write one CSV row per spec to `file`, flushed as each spec finishes")
	fs.StringVar(&o.resume, "resume", "", "append to CSV `file` and skip specs already in it (implies --csv file)")
	fs.BoolVar(&o.json, "json", false, "print results as JSON lines on stdout instead of the table")
	fs.BoolVar(&o.bench, "bench", false, "print results in Go benchmark format on stdout (for benchstat)")
	fs.Float64Var(&o.noise, "noise", d.Stop.Noise, "stop sampling when the 95% confidence interval of the median is within ± this `fraction` of it")
	fs.Float64Var(&o.timeLimit, "time-limit", d.Stop.MaxTime, "stop sampling a spec after this many `seconds` whatever the noise")
	fs.Float64Var(&o.minTime, "min-time", d.Stop.MinTime, "measure at least this many `seconds` of kernel time")
	fs.IntVar(&o.minSamples, "min-samples", d.Stop.MinSamples, "take at least this many samples")
	fs.IntVar(&o.maxSamples, "max-samples", d.Stop.MaxSamples, "take at most this many samples")
	fs.Float64Var(&o.warmup, "warmup", d.Warmup, "warm up for this many `seconds` (at least one run)")
	fs.Float64Var(&o.settle, "settle", 0, "run each spec this many `seconds` before sampling, every spec in full, so the GPU's boost clock reaches the level the spec sustains (1: on an H100, 99% of the rows repeat within 2% from run to run, for 1 s more per spec; 0: off)")
	fs.BoolVar(&o.hot, "hot", false, "same as --cache hot")
	fs.StringVar(&o.cache, "cache", "cold", "last-level cache before each sample: cold (flushed, holding only clean lines, as ncu --cache-control all), hot (not flushed) or dirty (flushed by writing, full of dirty lines the kernel must write back)")
	fs.BoolVar(&o.phases, "phases", false, "print where each spec's wall time went (plan, compile, inputs, reference, verify, warm-up, measure, …) on stderr")
	fs.Uint64Var(&o.seed, "seed", d.Seed, "seed of the input generator")
	fs.IntVar(&o.maxRows, "max-rows", d.MaxRows, "check at most this many rows against the float64 reference")
	fs.Float64Var(&o.timeout, "timeout", 0, "worker watchdog per spec in `seconds` (0: 2×time-limit + settle + 60)")
	fs.StringVar(&o.isolate, "isolate", "auto", "run specs in a worker subprocess: auto (on for GPU backends and the interactive session), on, off")
	fs.BoolVar(&o.noColor, "no-color", false, "plain output without colour (also NO_COLOR=1)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	fs.Var(&o.kernels, "kernel", "add the user kernel(s) of `PATH` (a kernel.yaml or a folder of them; repeatable)")
	fs.BoolVar(&o.yes, "yes", false, fmt.Sprintf("start a sweep of more than %d specs without asking (in a terminal)", bigSweep))
}

// validate checks flag values.
func (o *options) validate(s *session) error {
	if o.partialKernels {
		// The session lists the manifests that load and shows the others'
		// errors (ui.WatchKernels).
		s.loadUserKernelsReporting(o.kernels)
	} else if err := s.loadUserKernels(o.kernels); err != nil {
		return err
	}
	if !slices.Contains(sweep.KnownBackends, o.backend) {
		return badInput("unknown backend %q: use one of %s", o.backend, strings.Join(sweep.KnownBackends, ", "))
	}
	if !slices.Contains([]string{"auto", "on", "off"}, o.isolate) {
		return badInput("--isolate=%q: use auto, on or off", o.isolate)
	}
	// Every float flag: finite first (NaN passes every comparison), then in range.
	for _, f := range []struct {
		name string
		v    float64
		ok   func(float64) bool
		want string
	}{
		{"noise", o.noise, func(v float64) bool { return v > 0 && v < 1 }, "a fraction between 0 and 1 (0.01 is 1%)"},
		{"time-limit", o.timeLimit, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"min-time", o.minTime, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"warmup", o.warmup, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"settle", o.settle, func(v float64) bool { return v >= 0 }, "0 (off) or a positive number of seconds, e.g. 1"},
		{"timeout", o.timeout, func(v float64) bool { return v >= 0 }, "a positive number of seconds (or 0 for the default)"},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || !f.ok(f.v) {
			return badInput("--%s=%g: use %s", f.name, f.v, f.want)
		}
	}
	if _, err := profiler.ParseCacheMode(o.cache); err != nil {
		return badInput("--%s", err)
	}
	if o.hot && o.set["cache"] && o.cache != string(profiler.CacheHot) {
		return badInput("--hot and --cache=%s contradict each other: use --cache alone", o.cache)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"min-samples", o.minSamples}, {"max-samples", o.maxSamples}, {"max-rows", o.maxRows}} {
		if f.v < 1 {
			return badInput("--%s=%d: use a whole number of at least 1", f.name, f.v)
		}
	}
	if o.json && o.bench {
		return badInput("--json and --bench both write to stdout: choose one")
	}
	for _, f := range []struct{ name, path string }{{"csv", o.csv}, {"resume", o.resume}} {
		switch strings.ToLower(filepath.Ext(f.path)) {
		case ".yaml", ".yml":
			return badInput("--%s %s: --%s takes the CSV file to write (e.g. results.csv); the sweep file goes in --config %s", f.name, f.path, f.name, f.path)
		}
	}
	if o.resume != "" {
		if o.csv != "" && o.csv != o.resume {
			return badInput("--resume %s and --csv %s name different files: --resume appends to its file, drop --csv", o.resume, o.csv)
		}
		o.csv = o.resume
	}
	return nil
}

// measureOptions makes profiler.Options from the flags. With base, only the
// flags given explicitly override base (a sweep file's settings).
func (o *options) measureOptions(base *profiler.Options) profiler.Options {
	var m profiler.Options
	if base != nil {
		m = *base
	} else {
		m = profiler.DefaultOptions()
	}
	use := func(name string) bool { return base == nil || o.set[name] }
	if use("noise") {
		m.Stop.Noise = o.noise
	}
	if use("time-limit") {
		m.Stop.MaxTime = o.timeLimit
	}
	if use("min-time") {
		m.Stop.MinTime = o.minTime
	}
	if use("min-samples") {
		m.Stop.MinSamples = o.minSamples
	}
	if use("max-samples") {
		m.Stop.MaxSamples = o.maxSamples
	}
	if use("warmup") {
		m.Warmup = o.warmup
	}
	if use("settle") {
		m.Settle = o.settle
	}
	if use("hot") {
		m.Hot = o.hot
		if o.hot {
			m.Cache = profiler.CacheHot
		}
	}
	if use("cache") && (o.set["cache"] || !o.hot) {
		m.Cache, _ = profiler.ParseCacheMode(o.cache)
		// --cache wins over the file's hot: (the memory check counts the
		// flush buffer by Hot).
		m.Hot = m.Cache == profiler.CacheHot
	}
	if use("seed") {
		m.Seed = o.seed
	}
	if use("max-rows") {
		m.MaxRows = o.maxRows
	}
	if use("timeout") && o.timeout > 0 {
		m.Timeout = time.Duration(o.timeout * float64(time.Second))
	}
	return m
}

func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// specArgs are the arguments of the commands that run one spec (run and
// watch): the shared flags, --set (repeatable), --dtype and one target.
type specArgs struct {
	o     options
	sets  []string
	dtype string
}

func (a *specArgs) declare(fs *flag.FlagSet) {
	a.o.register(fs)
	fs.Func("set", "", func(s string) error { a.sets = append(a.sets, s); return nil })
	fs.StringVar(&a.dtype, "dtype", "", "")
}

// target checks the arguments and flags of a and returns the one target:
// cmd takes what, and example shows a right call.
func (a *specArgs) target(s *session, pos []string, cmd, what, example string) (string, error) {
	if len(pos) != 1 {
		hint := straySettings(pos, a.sets)
		if hint == "" {
			hint = "e.g. " + example
		}
		return "", badInput("%s takes %s, got %d arguments %q: %s", cmd, what, len(pos), pos, hint)
	}
	a.o.set = s.given
	return pos[0], a.o.validate(s)
}

// straySettings says how to give the NAME=VALUE words among the
// arguments after the first: settings that lost their --set (often after a
// space: --set rows=64 cols=128). "" when there are none.
func straySettings(pos, sets []string) string {
	var kv []string
	for _, p := range pos[min(1, len(pos)):] {
		if name, _, ok := strings.Cut(p, "="); ok && name != "" && !strings.ContainsAny(name, "/\\.") {
			kv = append(kv, p)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is a setting: give settings to --set, joined by commas without spaces (--set %s)", kv[0], strings.Join(append(slices.Clone(sets), kv...), ","))
}

// parseSpec builds a Spec from --set pairs, checking every name and value
// against the family's schema.
// A kernel given by path is resolved first (session.resolveKernelArg).
func parseSpec(kernel, dtype string, sets []string) (profiler.Spec, error) {
	f, err := profiler.Lookup(kernel)
	if err != nil {
		return profiler.Spec{}, badInput("%v", err)
	}
	sc := f.Schema()
	spec := profiler.Spec{Kernel: kernel}
	if dtype != "" {
		dt, err := profiler.ParseDType(dtype)
		if err != nil {
			return spec, badInput("--dtype: %v", err)
		}
		spec.DType = dt
	}
	given := map[string]string{}
	for _, group := range sets {
		for _, kv := range strings.Split(group, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return spec, badInput("--set %q: write NAME=VALUE, e.g. BQ=32", kv)
			}
			k = strings.TrimSpace(k)
			if prev, dup := given[k]; dup {
				return spec, badInput("--set gives %s twice (%s=%s and %s=%s): give each name once; to try several values write a sweep file (--config)", k, k, prev, k, strings.TrimSpace(v))
			}
			given[k] = strings.TrimSpace(v)
			n, err := parseValue(strings.TrimSpace(v), isFlag(sc, k))
			if err != nil {
				return spec, badInput("--set %s=%s: %v", k, v, err)
			}
			if err := spec.Set(sc, k, n); err != nil {
				return spec, badInput("--set: %v", err)
			}
		}
	}
	spec = spec.WithDefaults(sc)
	if err := spec.CheckSchema(sc); err != nil {
		return spec, badInput("%v", err)
	}
	return spec, nil
}

// isFlag says whether name is one of the schema's boolean flags.
func isFlag(sc profiler.Schema, name string) bool {
	for _, f := range sc.Flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

// parseValue reads a flag's value as profiler.ParseBool (and so a sweep
// file) does — causal=maybe and causal=2 are refused — or else an integer.
func parseValue(v string, flag bool) (int, error) {
	if flag {
		b, err := profiler.ParseBool(v)
		if err != nil {
			return 0, err
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	return parseWholeNumber(v)
}
