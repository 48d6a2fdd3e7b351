package sweep

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const goodSweep = `backend: cpu
defaults:
  noise: 0.02
  time_limit: 2
  hot: true
sweeps:
  - kernel: test_scale
    dtypes: [f32, bf16]
    knobs:
      WG: [32, 64, 128]
    dims:
      N: [100, 1000]
    where:
      - "WG * 10 <= N"
    options:
      seed: 9
`

func TestParseSweepExpands(t *testing.T) {
	sw, err := Parse("s.yaml", []byte(goodSweep), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// per dtype: N=100 keeps WG=32 only (320>100 drops? 32*10=320 > 100: dropped) → N=100 none;
	// N=1000: WG 32, 64 (640), not 128 (1280) → 2 per dtype
	if len(sw.Jobs) != 4 {
		for _, j := range sw.Jobs {
			t.Log(j.Spec)
		}
		t.Fatalf("%d jobs, want 4", len(sw.Jobs))
	}
	j := sw.Jobs[0]
	if j.Spec.DType != profiler.F32 || j.Spec.Knobs["WG"] != 32 || j.Spec.Dims["N"] != 1000 || j.Spec.Flags["broken"] {
		t.Errorf("first job %v", j.Spec)
	}
	if sw.Jobs[2].Spec.DType != profiler.BF16 {
		t.Errorf("dtype order: %v", sw.Jobs[2].Spec)
	}
	if j.Options.Stop.Noise != 0.02 || j.Options.Stop.MaxTime != 2 || !j.Options.Hot || j.Options.Seed != 9 || j.Options.Stop.MinSamples != profiler.DefaultStopRule().MinSamples {
		t.Errorf("options %+v", j.Options)
	}
	if sw.Backend != "cpu" {
		t.Errorf("backend %q", sw.Backend)
	}
}

func TestParseSweepScalarsAndTiedDims(t *testing.T) {
	src := "sweeps:\n  - kernel: test_scale\n    knobs: {WG: 64}\n    dims: {\"N\": [10, 20]}\n    flags: {broken: [false, true]}\n"
	sw, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Jobs) != 4 || sw.Jobs[0].Spec.DType != profiler.F32 {
		t.Fatalf("jobs %d", len(sw.Jobs))
	}
}

func TestParseSweepErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"malformed", "sweeps: [\n", "s.yaml:1:"},
		{"unknown top key", "sweep:\n  - kernel: test_scale\n", "s.yaml:1:1: unknown field \"sweep\""},
		{"unknown sweep key", "sweeps:\n  - kernel: test_scale\n    knob: {WG: 32}\n", "s.yaml:3:5: unknown field \"knob\""},
		{"unknown kernel", "sweeps:\n  - kernel: flash\n", "s.yaml:2:13: sweeps[0].kernel: unknown kernel \"flash\""},
		{"missing kernel", "sweeps:\n  - dtypes: [f32]\n", "missing `kernel:`"},
		{"unknown dtype", "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, f8]\n", "s.yaml:3:19: sweeps[0].dtypes[1]: unknown dtype \"f8\""},
		{"unknown backend", "backend: rocm\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:10: backend: unknown backend \"rocm\": use one of auto, metal, cuda, cpu"},
		{"unknown knob", "sweeps:\n  - kernel: test_scale\n    knobs: {BQ: [32]}\n", "sweeps[0].knobs.BQ: test_scale has no knob \"BQ\": knobs are WG"},
		{"unknown dim", "sweeps:\n  - kernel: test_scale\n    dims: {M: [32]}\n", "has no dim \"M\""},
		{"knob off schema", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 48]}\n", "sweeps[0].knobs.WG: WG=48 is not allowed: use one of 32, 64, 128"},
		{"zero dim", "sweeps:\n  - kernel: test_scale\n    dims: {N: [0]}\n", "N=0 is out of range"},
		{"negative dim", "sweeps:\n  - kernel: test_scale\n    dims: {N: [-5]}\n", "N=-5 is out of range"},
		{"not an int", "sweeps:\n  - kernel: test_scale\n    dims: {N: [abc]}\n", "s.yaml:3:15: want an integer or a list of integers, got [abc]"},
		{"bad where", "sweeps:\n  - kernel: test_scale\n    where: [\"WG >\"]\n", "cannot parse"},
		{"where unknown name", "sweeps:\n  - kernel: test_scale\n    where: [\"BQ > 1\"]\n", "names \"BQ\", which is not a knob"},
		{"where removes all", "sweeps:\n  - kernel: test_scale\n    where: [\"WG > 1000\"]\n", "leave no specs"},
		{"bad noise", "defaults: {noise: 5}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:19: defaults.noise: noise=5 must be a fraction"},
		{"negative time", "defaults: {time_limit: -1}\nsweeps:\n  - kernel: test_scale\n", "time_limit=-1 must be positive"},
		{"no sweeps", "backend: cpu\n", "has no sweeps"},
		{"nan noise", "defaults: {noise: .nan}\nsweeps:\n  - kernel: test_scale\n", "noise=NaN must be a fraction"},
		{"inf time", "defaults: {time_limit: .inf}\nsweeps:\n  - kernel: test_scale\n", "time_limit=+Inf must be positive and finite"},
		{"unknown top-level key", "options_are_per_sweep: 1\n", `unknown field "options_are_per_sweep"`},
		{"second document", "sweeps:\n  - kernel: test_scale\n---\nsweeps:\n  - kernel: test_scale\n", "s.yaml:3: a sweep file holds one YAML document; the second starts at line 3"},
		{"all unknown keys in file order", "zeta: 1\nsweeps:\n  - kernel: test_scale\n    knbos: {WG: 32}\n    dimz: {N: 4}\nalpha: 2\n",
			`s.yaml:1:1: unknown field "zeta"; also unknown: "knbos" (line 4), "dimz" (line 5), "alpha" (line 6)`},
		{"unknown option key", "defaults: {noize: 0.1}\nsweeps:\n  - kernel: test_scale\n    options: {seeed: 1}\n", `unknown field "noize"; also unknown: "seeed" (line 4)`},
		{"bad flag word", "sweeps:\n  - kernel: test_scale\n    flags: {broken: maybe}\n", `"maybe" is not a boolean: use true/false, 1/0, yes/no or on/off`},
		{"empty file", "", "has no sweeps"},
	}
	for _, c := range cases {
		_, err := Parse("s.yaml", []byte(c.src), profiler.DefaultOptions())
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !profiler.IsInputError(err) {
			t.Errorf("%s: %T is not an InputError", c.name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error\n%s\nwant it to contain %q", c.name, err, c.want)
		}
	}
}

func TestLoadSweepMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), profiler.DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: cannot read the sweep file") {
		t.Errorf("err %v", err)
	}
}

func FuzzParseSweep(f *testing.F) {
	f.Add([]byte(goodSweep))
	f.Add([]byte("sweeps:\n  - kernel: test_scale\n    where: [\"(WG+1)*2 % 3 != 0 && !broken\"]\n"))
	f.Add([]byte("sweeps: [{kernel: test_scale, dims: {N: [1, 2]}}]"))
	f.Add([]byte("defaults: {noise: 0.5, seed: 3}\nsweeps:\n - kernel: x\n"))
	f.Add([]byte("\ufeffsweeps:\n  - kernel: test_scale\n"))
	f.Add([]byte("sweeps:\n  - kernel: test_scale\n---\nsweeps: []\n"))
	f.Add([]byte("zz: 1\nsweeps:\n  - kernel: test_scale\n    qq: 2\n    flags: {broken: yes}\n"))
	f.Add([]byte("defaults: {noise: .nan, time_limit: .inf}\nsweeps:\n  - kernel: test_scale\n"))
	f.Add([]byte("sweeps:\n  - &a {kernel: test_scale, knobs: {WG: 32}}\n  - *a\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		sw, err := Parse("fuzz.yaml", src, profiler.DefaultOptions())
		if err != nil {
			if !profiler.IsInputError(err) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(sw.Jobs) == 0 {
			t.Fatal("no error and no jobs")
		}
		for _, j := range sw.Jobs {
			f, err := profiler.Lookup(j.Spec.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Spec.CheckSchema(f.Schema()); err != nil {
				t.Fatalf("accepted spec fails its schema: %v", err)
			}
		}
	})
}

func TestExpr(t *testing.T) {
	vars := map[string]int{"BQ": 32, "BK": 16, "WM": 4, "causal": 1}
	cases := map[string]bool{
		"BQ >= BK":                true,
		"BQ % (8*WM) == 0":        true,
		"BQ / BK == 2 && causal":  true,
		"!causal || BQ < BK":      false,
		"-BQ + 40 == 8":           true,
		"BQ*BK <= 256 || WM == 4": true,
		"(BQ + BK) * 2 != 96":     false,
		"BQ > BK > 0":             true, // (BQ > BK) > 0
		"true && !false":          true,
		"BK - 1 - 1 == 14":        true, // left associative
		"BQ / 4 / 2 == 4":         true,
	}
	for src, want := range cases {
		e, err := ParseExpr(src)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		got, err := e.Eval(vars)
		if err != nil || got != want {
			t.Errorf("%q = %v (%v), want %v", src, got, err, want)
		}
	}
	for _, bad := range []string{"", "BQ >", "(BQ", "BQ $ 2", "BQ BK"} {
		if _, err := ParseExpr(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	e, _ := ParseExpr("BQ / (BK - 16) > 0")
	if _, err := e.Eval(vars); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("division by zero: %v", err)
	}
}

func TestCacheKey(t *testing.T) {
	sw, err := Parse("c.yaml", []byte("defaults: {cache: dirty}\nsweeps:\n  - kernel: test_scale\n    dims: {N: 64}\n"), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Jobs) == 0 || sw.Jobs[0].Options.Cache != profiler.CacheDirty {
		t.Errorf("cache: %+v", sw.Jobs)
	}
	_, err = Parse("c.yaml", []byte("defaults: {cache: warm}\nsweeps:\n  - kernel: test_scale\n    dims: {N: 64}\n"), profiler.DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "c.yaml:1") || !strings.Contains(err.Error(), "warm") {
		t.Errorf("bad cache mode: %v", err)
	}
}

func TestParseSweepBOMAndBoolWords(t *testing.T) {
	src := "\ufeffsweeps:\n  - kernel: test_scale\n    flags: {broken: [no, yes, off, on, 0, 1, false, True]}\n---\n"
	sw, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, j := range sw.Jobs {
		got = append(got, j.Spec.Flags["broken"])
	}
	want := []bool{false, true, false, true, false, true, false, true}
	if len(got) != len(want) {
		t.Fatalf("flags %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flags %v, want %v", got, want)
		}
	}
}

// TestUnknownKeysDeterministic: the report is the same on every parse (map
// order must not pick which key is named).
func TestUnknownKeysDeterministic(t *testing.T) {
	src := "sweeps:\n  - kernel: test_scale\n    knobs: {WG: 32}\n    a1: 1\n    b2: 2\n    c3: 3\n    d4: 4\n"
	_, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err == nil {
		t.Fatal("no error")
	}
	for range 20 {
		_, again := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
		if again.Error() != err.Error() {
			t.Fatalf("reports differ:\n%s\n%s", err, again)
		}
	}
	if !strings.Contains(err.Error(), `unknown field "a1"; also unknown: "b2" (line 5), "c3" (line 6), "d4" (line 7)`) {
		t.Errorf("err %v", err)
	}
}
