package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// --cache picks the mode the Result reports; --hot is its older spelling;
// a wrong value or a contradiction is bad input.
func TestCacheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want profiler.CacheMode
	}{
		{nil, profiler.CacheCold},
		{[]string{"--cache", "dirty"}, profiler.CacheDirty},
		{[]string{"--cache=hot"}, profiler.CacheHot},
		{[]string{"--hot"}, profiler.CacheHot},
	} {
		args := append([]string{"run", "softmax_bwd", "--set", "rows=4,cols=64", "--backend", "cpu", "--isolate", "off", "--time-limit", "0.2", "--json", "--quiet"}, c.args...)
		code, stdout, stderr := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		var res profiler.Result
		if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res); err != nil {
			t.Fatalf("%v: %v: %s", c.args, err, stdout)
		}
		if res.Cache != c.want || res.StopReason == "" || res.Phases == nil || res.Phases.Measure <= 0 {
			t.Errorf("%v: cache %q stop %q phases %+v", c.args, res.Cache, res.StopReason, res.Phases)
		}
	}
	code, stdout, stderr := runMain(t, "run", "softmax_bwd", "--set", "rows=4,cols=64", "--backend", "cpu", "--isolate", "off", "--json", "--quiet", "--max-samples", "7", "--min-samples", "30")
	var res profiler.Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res); code != 0 || err != nil || res.Stats.N != 7 || res.StopReason != profiler.StopMaxSamples {
		t.Errorf("--max-samples 7: exit %d %v n=%d %q %s", code, err, res.Stats.N, res.StopReason, stderr)
	}
	if code, _, stderr := runMain(t, "run", "softmax_bwd", "--cache", "warm"); code != exitBadInput || !strings.Contains(stderr, `--cache=warm: use cold`) {
		t.Errorf("--cache warm: exit %d %s", code, stderr)
	}
	if code, _, stderr := runMain(t, "run", "softmax_bwd", "--cache", "dirty", "--hot"); code != exitBadInput || !strings.Contains(stderr, "contradict") {
		t.Errorf("--cache dirty --hot: exit %d %s", code, stderr)
	}
}

// --phases prints each spec's breakdown, the sum over the sweep, and the
// share of the sweep's wall time the device was busy measuring, and
// running kernels with the checks' runs (the CPU backend times them).
func TestPhasesFlag(t *testing.T) {
	cfg := writeFile(t, "s.yaml", "backend: cpu\ndefaults: {time_limit: 0.2}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 4, cols: [64, 128]}\n")
	code, _, stderr := runMain(t, "--config", cfg, "--phases", "--isolate", "off", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "mltop: phases softmax_bwd") != 2 || !strings.Contains(stderr, "phases over 2 specs") || !strings.Contains(stderr, "measure ") ||
		!regexp.MustCompile(`mltop: phases 1 device in [0-9.]+ s: the device was busy measuring [0-9]+% of it \([0-9.]+ s\), running kernels [0-9]+% \(with the checks' runs [0-9.]+ s; host work`).MatchString(stderr) {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// --settle (and a sweep file's settle:) warms every spec up for that long,
// the second spec of a sweep too, which otherwise gets a quarter of
// --warmup (runner.warmupFor).
func TestSettle(t *testing.T) {
	const settle = 0.6 // far above a warm-up of 0.02 s, and its noise on a busy machine
	fileSettle := writeFile(t, "settle.yaml", "backend: cpu\ndefaults: {time_limit: 0.2, settle: 0.6}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 4, cols: [64, 128]}\n")
	plain := writeFile(t, "plain.yaml", "backend: cpu\ndefaults: {time_limit: 0.2}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 4, cols: [64, 128]}\n")
	for _, c := range []struct {
		name    string
		args    []string
		settled bool
	}{
		{"flag", []string{"--config", plain, "--settle", "0.6"}, true},
		{"file", []string{"--config", fileSettle}, true},
		{"flag 0 overrides the file", []string{"--config", fileSettle, "--settle", "0"}, false},
		{"none", []string{"--config", plain}, false},
	} {
		code, stdout, stderr := runMain(t, append(c.args, "--isolate", "off", "--json", "--quiet")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d results: %s", c.name, len(lines), stdout)
		}
		for i, l := range lines {
			var res profiler.Result
			if err := json.Unmarshal([]byte(l), &res); err != nil || res.Phases == nil {
				t.Fatalf("%s: %v: %s", c.name, err, l)
			}
			if got := res.Phases.Warmup >= settle; got != c.settled {
				t.Errorf("%s: spec %d warmed up %.3f s; want settled=%v (>= %g s)", c.name, i, res.Phases.Warmup, c.settled, settle)
			}
		}
	}
	if code, _, stderr := runMain(t, "run", "softmax_bwd", "--settle", "-1"); code != exitBadInput || !strings.Contains(stderr, "--settle=-1: use 0 (off) or a positive number of seconds") {
		t.Errorf("--settle -1: exit %d %s", code, stderr)
	}
}

// --cache overrides a sweep file's hot: true in full (the memory check
// reads the mode too); --hot=false undoes the file's hot; no flag keeps it.
func TestCacheFlagOverridesFileHot(t *testing.T) {
	base := profiler.DefaultOptions()
	base.Cache = profiler.CacheHot
	for _, c := range []struct {
		args []string
		want profiler.CacheMode
	}{
		{[]string{"--cache", "cold"}, profiler.CacheCold},
		{[]string{"--cache", "dirty"}, profiler.CacheDirty},
		{[]string{"--hot=false"}, profiler.CacheCold},
		{nil, profiler.CacheHot},
	} {
		var o options
		fs := newFlagSet("mltop")
		o.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		o.set = setFlags(fs)
		if m := o.measureOptions(&base); m.Cache != c.want {
			t.Errorf("%v over hot: true: cache %q, want %q", c.args, m.Cache, c.want)
		}
	}
}
