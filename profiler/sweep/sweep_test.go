package sweep

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if j.Options.Stop.Noise != 0.02 || j.Options.Stop.MaxTime != 2 || j.Options.Cache != profiler.CacheHot || j.Options.Seed != 9 || j.Options.Stop.MinSamples != profiler.DefaultStopRule().MinSamples {
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
		{"unknown top key", "sweep:\n  - kernel: test_scale\n", "s.yaml:1:1: unknown field \"sweep\": check the spelling; did you mean sweeps? the keys at the top level are backend, defaults, device_limits, sweeps, search (docs/sweeps.md)"},
		{"unknown sweep key", "sweeps:\n  - kernel: test_scale\n    knob: {WG: 32}\n", "s.yaml:3:5: unknown field \"knob\": check the spelling; did you mean knobs? the keys at sweeps[0] are kernel, dtypes, knobs, dims, flags, where, options"},
		{"unknown kernel", "sweeps:\n  - kernel: flash\n", "s.yaml:2:13: sweeps[0].kernel: unknown kernel \"flash\""},
		{"missing kernel", "sweeps:\n  - dtypes: [f32]\n", "missing `kernel:`"},
		{"unknown dtype", "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, f8]\n", "s.yaml:3:19: sweeps[0].dtypes[1]: unknown dtype \"f8\""},
		{"unknown backend", "backend: rocm\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:10: backend: unknown backend \"rocm\": use one of auto, metal, cuda, cpu"},
		{"unknown knob", "sweeps:\n  - kernel: test_scale\n    knobs: {BQ: [32]}\n", "sweeps[0].knobs.BQ: test_scale has no knob \"BQ\": knobs are WG"},
		{"unknown dim", "sweeps:\n  - kernel: test_scale\n    dims: {M: [32]}\n", "has no dim \"M\""},
		{"hot contradicts cache", "defaults: {hot: true, cache: dirty}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:17: defaults.hot: hot=true and cache=dirty contradict each other: use cache alone"},
		{"hot false contradicts cache hot", "sweeps:\n  - kernel: test_scale\n    options: {cache: hot, hot: false}\n", "sweeps[0].options.hot: hot=false and cache=hot contradict"},
		{"knob typo", "sweeps:\n  - kernel: test_scale\n    knobs: {wg: [32]}\n", "sweeps[0].knobs.wg: test_scale has no knob \"wg\": did you mean WG? knobs are WG"},
		{"knob under dims", "sweeps:\n  - kernel: test_scale\n    dims: {WG: [32]}\n", "sweeps[0].dims.WG: test_scale has no dim \"WG\": WG is a knob (put it under knobs:); dims are N"},
		{"dim under knobs", "sweeps:\n  - kernel: test_scale\n    knobs: {N: [32]}\n", "test_scale has no knob \"N\": N is a dim (put it under dims:); knobs are WG"},
		{"flag typo", "sweeps:\n  - kernel: test_scale\n    flags: {brokn: true}\n", "sweeps[0].flags.brokn: test_scale has no flag \"brokn\": did you mean broken? flags are broken, drift"},
		{"knob off schema", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 48]}\n", "sweeps[0].knobs.WG: WG=48 is not allowed: use one of 32, 64, 128"},
		{"zero dim", "sweeps:\n  - kernel: test_scale\n    dims: {N: [0]}\n", "N=0 is out of range"},
		{"negative dim", "sweeps:\n  - kernel: test_scale\n    dims: {N: [-5]}\n", "N=-5 is out of range"},
		{"not an int", "sweeps:\n  - kernel: test_scale\n    dims: {N: [abc]}\n", "s.yaml:3:15: sweeps[0].dims.N: want an integer or a list of integers, got [abc]"},
		{"not an int, block", "sweeps:\n  - kernel: test_scale\n    dims:\n      N: abc\n", "s.yaml:4:10: sweeps[0].dims.N: want an integer or a list of integers, got abc"},
		{"not a bool", "sweeps:\n  - kernel: test_scale\n    flags: {broken: maybe}\n", "s.yaml:3:21: sweeps[0].flags.broken: \"maybe\" is not a boolean"},
		{"option not a number", "defaults:\n  time_limit: fast\nsweeps:\n  - kernel: test_scale\n", "s.yaml:2:15: defaults.time_limit: time_limit=fast: use a positive number of seconds"},
		{"hot not a bool", "defaults: {hot: maybe}\nsweeps:\n  - kernel: test_scale\n", "defaults.hot: hot=maybe: use true or false"},
		{"kernel a list", "sweeps:\n  - kernel: [test_scale]\n", "s.yaml:2:13: sweeps[0].kernel: want a string here, got a list\n"},
		{"shape not an integer", "search:\n  shapes: [{rows: many}]\nsweeps:\n  - kernel: test_scale\n", "s.yaml:2:19: search.shapes[0].rows: want an integer here, got many (a string)"},
		{"sweeps a mapping", "sweeps:\n  kernel: test_scale\n", "sweeps: want a list (one \"- item\" per line, or [a, b]) here, got a mapping\n"},
		{"where a mapping", "sweeps:\n  - kernel: test_scale\n    where: {WG: 8}\n", "s.yaml:3:12: sweeps[0].where: want a string or a list of strings, got {WG: 8}"},
		{"dtypes a list in a list", "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, [f16]]\n", "s.yaml:3:19: sweeps[0].dtypes[1]: want a string here, got [f16]"},
		{"bad where", "sweeps:\n  - kernel: test_scale\n    where: [\"WG >\"]\n", "s.yaml:3:17: sweeps[0].where[0]: syntax error: unexpected token EOF in where 'WG >'"},
		{"where unknown name", "sweeps:\n  - kernel: test_scale\n    where: [\"WG > BQ\"]\n", "s.yaml:3:19: sweeps[0].where[0]: unknown name 'BQ' in where 'WG > BQ'; known: N, T, WG, broken, drift (the knobs, dims and flags of test_scale, and T, the dtype)"},
		{"where unknown name, plain scalar", "sweeps:\n  - kernel: test_scale\n    where:\n      - N > BQ\n", "s.yaml:4:13: sweeps[0].where[0]: unknown name 'BQ' in where 'N > BQ'"},
		{"where dtype unquoted", "sweeps:\n  - kernel: test_scale\n    where: \"T == bf16\"\n", `s.yaml:3:18: sweeps[0].where: 'bf16' in where 'T == bf16' is a dtype, which is a string here: quote it, 'T == "bf16"' (in YAML, single quotes`},
		{"where = for ==", "sweeps:\n  - kernel: test_scale\n    where: \"N = 64\"\n", `s.yaml:3:15: sweeps[0].where: syntax error: unexpected token Operator("=") in where 'N = 64': use == to compare, 'N == 64'`},
		{"empty dtypes", "sweeps:\n  - kernel: test_scale\n    dtypes: []\n", "s.yaml:3:13: sweeps[0].dtypes: empty list: give at least one value (f32"},
		{"empty flag", "sweeps:\n  - kernel: test_scale\n    flags: {broken: []}\n", "s.yaml:3:21: sweeps[0].flags.broken: empty list: give at least one value"},
		{"empty knob", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: []}\n", "s.yaml:3:17: sweeps[0].knobs.WG: empty list: give at least one value"},
		{"empty dim", "sweeps:\n  - kernel: test_scale\n    dims:\n      N: []\n", "s.yaml:4:10: sweeps[0].dims.N: empty list: give at least one value"},
		{"where not a bool", "sweeps:\n  - kernel: test_scale\n    where: [\"WG + 1\"]\n", "s.yaml:3:14: sweeps[0].where[0]: 'WG + 1' is a number, not true or false"},
		{"where int as bool", "sweeps:\n  - kernel: test_scale\n    where: [\"WG && broken\"]\n", "s.yaml:3:17: sweeps[0].where[0]: invalid operation: && (mismatched types int and bool)"},
		{"where division by zero", "sweeps:\n  - kernel: test_scale\n    where: [\"N / (WG - 64) > 1\"]\n", "division by zero"},
		{"where second filter", "sweeps:\n  - kernel: test_scale\n    where: [\"WG > 1\", \"sizeof(X) == 4\"]\n", "s.yaml:3:31: sweeps[0].where[1]: unknown name 'X' in where 'sizeof(X) == 4'"},
		{"where removes all", "sweeps:\n  - kernel: test_scale\n    where: [\"WG > 1000\"]\n", "leave no specs"},
		{"bad noise", "defaults: {noise: 5}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:19: defaults.noise: noise=5: use a fraction between 0 and 1"},
		{"negative time", "defaults: {time_limit: -1}\nsweeps:\n  - kernel: test_scale\n", "time_limit=-1: use a positive number of seconds"},
		{"negative settle", "defaults: {settle: -1}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:20: defaults.settle: settle=-1: use 0 (off) or a positive number of seconds"},
		{"nan settle", "sweeps:\n  - kernel: test_scale\n    options: {settle: .nan}\n", "settle=.nan: use 0 (off)"},
		{"no sweeps", "backend: cpu\n", "has no sweeps"},
		{"nan noise", "defaults: {noise: .nan}\nsweeps:\n  - kernel: test_scale\n", "noise=.nan: use a fraction"},
		{"inf time", "defaults: {time_limit: .inf}\nsweeps:\n  - kernel: test_scale\n", "time_limit=.inf: use a positive number of seconds"},
		{"unknown top-level key", "options_are_per_sweep: 1\n", `unknown field "options_are_per_sweep"`},
		{"second document", "sweeps:\n  - kernel: test_scale\n---\nsweeps:\n  - kernel: test_scale\n", "s.yaml:3: a sweep file holds one YAML document; the second starts at line 3"},
		{"all unknown keys in file order", "zeta: 1\nsweeps:\n  - kernel: test_scale\n    knbos: {WG: 32}\n    dimz: {N: 4}\nalpha: 2\n",
			`s.yaml:1:1: unknown field "zeta"; also unknown: "knbos" (line 4), "dimz" (line 5), "alpha" (line 6)`},
		{"unknown option key", "defaults: {noize: 0.1}\nsweeps:\n  - kernel: test_scale\n    options: {seeed: 1}\n", `unknown field "noize"; also unknown: "seeed" (line 4)`},
		{"bad flag word", "sweeps:\n  - kernel: test_scale\n    flags: {broken: maybe}\n", `"maybe" is not a boolean: use true/false, 1/0, yes/no or on/off`},
		{"empty file", "", "has no sweeps"},
		{"fractional dim", "sweeps:\n  - kernel: test_scale\n    dims: {N: 64.5}\n", "s.yaml:3:15: sweeps[0].dims.N: 64.5 is not a whole number: use an integer"},
		{"fractional dim in a list", "sweeps:\n  - kernel: test_scale\n    dims: {N: [64, 128.5]}\n", "s.yaml:3:20: sweeps[0].dims.N[1]: 128.5 is not a whole number"},
		{"fractional knob", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32.5]}\n", "sweeps[0].knobs.WG[0]: 32.5 is not a whole number"},
		{"fractional min_samples", "defaults: {min_samples: 2.5}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:25: defaults.min_samples: min_samples=2.5: use a whole number of at least 1"},
		{"fractional max_rows", "sweeps:\n  - kernel: test_scale\n    options: {max_rows: 1.5}\n", "sweeps[0].options.max_rows: max_rows=1.5: use a whole number of at least 1"},
		{"negative seed", "defaults: {seed: -1}\nsweeps:\n  - kernel: test_scale\n", "s.yaml:1:18: defaults.seed: seed=-1: use a whole number, 0 or more"},
		{"seed a word", "sweeps:\n  - kernel: test_scale\n    options: {seed: abc}\n", "sweeps[0].options.seed: seed=abc: use a whole number, 0 or more"},
		{"fractional seed", "defaults: {seed: 1.5}\nsweeps:\n  - kernel: test_scale\n", "defaults.seed: seed=1.5: use a whole number, 0 or more"},
		{"setting a list", "defaults:\n  noise: [0.1, 0.2]\nsweeps:\n  - kernel: test_scale\n", "s.yaml:2:10: defaults.noise: want one value here, got [0.1, 0.2]"},
		{"max_samples zero", "sweeps:\n  - kernel: test_scale\n    options: {max_samples: 0}\n", "sweeps[0].options.max_samples: max_samples=0: use a whole number of at least 1"},
		{"min_samples a string", "defaults: {min_samples: many}\nsweeps:\n  - kernel: test_scale\n", "defaults.min_samples: min_samples=many: use a whole number of at least 1"},
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

// TestOneValueIsAList: every list of a sweep entry takes one value
// written alone as a list of that value (dtypes and where, as knobs, dims
// and flags always did), and an error in it is placed at the value,
// without an index.
func TestOneValueIsAList(t *testing.T) {
	entry := "sweeps:\n  - kernel: test_scale\n    dims: {N: 100}\n"
	wg := "    knobs: {WG: [32, 64]}\n"
	same := []struct{ alone, listed string }{
		{"    dtypes: bf16\n", "    dtypes: [bf16]\n"},
		{"    dtypes: \"f16\"\n", "    dtypes:\n      - f16\n"},
		{wg + "    where: WG >= 64\n", wg + "    where: [\"WG >= 64\"]\n"},
		{wg + "    where: \"WG < 64 && !broken\"\n", wg + "    where:\n      - WG < 64 && !broken\n"},
		{"    knobs: {WG: 64}\n", "    knobs: {WG: [64]}\n"},
		{"    flags: {broken: true}\n", "    flags: {broken: [true]}\n"},
	}
	for _, c := range same {
		alone, err := Parse("s.yaml", []byte(entry+c.alone), profiler.DefaultOptions())
		if err != nil {
			t.Errorf("%q: %v", c.alone, err)
			continue
		}
		listed, err := Parse("s.yaml", []byte(entry+c.listed), profiler.DefaultOptions())
		if err != nil {
			t.Fatalf("%q: %v", c.listed, err)
		}
		if a, l := specKeys(alone), specKeys(listed); a != l {
			t.Errorf("%q makes\n%s\nbut %q makes\n%s", c.alone, a, c.listed, l)
		}
	}
	if sw, err := Parse("s.yaml", []byte(entry+"    dtypes: bf16\n"), profiler.DefaultOptions()); err != nil || sw.Jobs[0].Spec.DType != profiler.BF16 {
		t.Errorf("dtypes: bf16 is not bf16 (the default is f32): %v", err)
	}
	errs := []struct{ alone, want string }{
		{"    dtypes: f8\n", "s.yaml:4:13: sweeps[0].dtypes: unknown dtype \"f8\""},
		{wg + "    where: WG > BQ\n", "s.yaml:5:17: sweeps[0].where: unknown name 'BQ' in where 'WG > BQ'"},
		{wg + "    where: \"WG + 1\"\n", "s.yaml:5:13: sweeps[0].where: 'WG + 1' is a number"},
		{wg + "    where: N / (WG - 64) > 1\n", "s.yaml:5:14: sweeps[0].where: integer division by zero"},
	}
	for _, c := range errs {
		_, err := Parse("s.yaml", []byte(entry+c.alone), profiler.DefaultOptions())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.alone, err, c.want)
		}
	}
}

// specKeys lists a sweep's specs, one a line.
func specKeys(sw *Sweep) string {
	var b strings.Builder
	for _, j := range sw.Jobs {
		b.WriteString(j.Spec.Key() + "\n")
	}
	return b.String()
}

// A float without a fraction is the integer it spells (YAML writers emit
// 64.0) in knobs and dims; only a fraction is refused. Settings read their
// text as the command line does: min_samples: 30.0 is refused like
// --min-samples 30.0 (TestSettingsTable).
func TestParseSweepWholeFloats(t *testing.T) {
	src := "defaults: {min_samples: 30, max_rows: 8}\nsweeps:\n  - kernel: test_scale\n    knobs: {WG: 64.0}\n    dims: {N: [100.0, 1000]}\n"
	sw, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Jobs) != 2 || sw.Jobs[0].Spec.Knobs["WG"] != 64 || sw.Jobs[0].Spec.Dims["N"] != 100 || sw.Jobs[1].Spec.Dims["N"] != 1000 {
		t.Fatalf("jobs %v", sw.Jobs)
	}
	if o := sw.Jobs[0].Options; o.Stop.MinSamples != 30 || o.MaxRows != 8 {
		t.Errorf("options %+v", o)
	}
}

// A sweep's cache: overrides a hot: true from defaults; hot: false undoes
// an inherited hot (one mode: the memory check reads it too).
func TestParseSweepCacheOverridesDefaultsHot(t *testing.T) {
	src := "defaults: {hot: true}\nsweeps:\n  - kernel: test_scale\n    options: {cache: cold}\n  - kernel: test_scale\n    dims: {N: 50}\n    options: {hot: false}\n  - kernel: test_scale\n"
	sw, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Jobs) != 3 {
		t.Fatalf("%d jobs", len(sw.Jobs))
	}
	for i, want := range []profiler.CacheMode{profiler.CacheCold, profiler.CacheCold, profiler.CacheHot} {
		if got := sw.Jobs[i].Options.Cache; got != want {
			t.Errorf("sweep %d after defaults {hot: true}: cache %q, want %q", i, got, want)
		}
	}
}

// A setting's key without a value is ignored (not refused, not zero);
// timeout: 0 is the default watchdog, as --timeout 0.
func TestParseSweepEmptySettings(t *testing.T) {
	src := "defaults:\n  noise:\n  seed: ~\n  timeout: 0\n  max_samples: 9\nsweeps:\n  - kernel: test_scale\n"
	base := profiler.DefaultOptions()
	base.Timeout = 5 * time.Second
	sw, err := Parse("s.yaml", []byte(src), base)
	if err != nil {
		t.Fatal(err)
	}
	o := sw.Jobs[0].Options
	if o.Stop.Noise != base.Stop.Noise || o.Seed != base.Seed || o.Timeout != 0 || o.Stop.MaxSamples != 9 {
		t.Errorf("options %+v", o)
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
	f.Add([]byte("sweeps:\n  - kernel: test_scale\n    where: [\"cdiv(N, WG) > sizeof(T) && min(N, 3) == 3\"]\n"))
	f.Add([]byte("sweeps:\n  - kernel: test_scale\n    where:\n      - N / (WG - 64) > 0\n"))
	f.Add([]byte("sweeps:\n  - kernel: ./k/kernel.yaml\n"))
	f.Add([]byte("sweeps:\n  - kernel: test_scale\n    dtypes: bf16\n    where: WG > 32\n    knobs: {WGG: 1}\n    dims: {\"M,N\": 8}\n"))
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

// where: filters are profiler/expr expressions over the knobs, dims,
// flags (booleans) and T of the kernel: the manifests' language.
func TestWhere(t *testing.T) {
	cases := []struct {
		where string
		want  int // jobs kept of WG {32, 64, 128} × N {100, 1000} × broken {false, true} × dtype {f32, bf16}
	}{
		{"WG >= 64", 16},
		{"WG % (8 * 8) == 0", 16},
		{"N / WG == 7", 4}, // integer division: 1000/128 = 7
		{"cdiv(N, WG) == 8", 4},
		{"!broken || WG == 32", 16},
		{"broken && T == \"bf16\"", 6},
		{"sizeof(T) == 2", 12},
		{"sizeof(T) * N <= 2000", 18},
		{"min(WG, 64) == 64 and max(N, 500) == 500", 8},
		{"-WG + 40 == 8", 8},
		{"WG * N <= 6400 || WG == 128", 16},
		{"true && !false", 24},
	}
	for _, c := range cases {
		src := "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, bf16]\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 1000]}\n    flags: {broken: [false, true]}\n    where: [" + strconv.Quote(c.where) + "]\n"
		sw, err := Parse("w.yaml", []byte(src), profiler.DefaultOptions())
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		if len(sw.Jobs) != c.want {
			t.Errorf("%s: %d jobs, want %d", c.where, len(sw.Jobs), c.want)
		}
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
	// hot and cache that agree, in one block or across blocks (a sweep's
	// options override defaults), are fine.
	for _, src := range []string{
		"defaults: {hot: true, cache: hot}\nsweeps:\n  - kernel: test_scale\n    dims: {N: 64}\n",
		"defaults: {hot: false, cache: dirty}\nsweeps:\n  - kernel: test_scale\n    dims: {N: 64}\n",
		"defaults: {hot: true}\nsweeps:\n  - kernel: test_scale\n    dims: {N: 64}\n    options: {cache: dirty}\n",
	} {
		if _, err := Parse("c.yaml", []byte(src), profiler.DefaultOptions()); err != nil {
			t.Errorf("%q: %v", src, err)
		}
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
	// every word reads as a bool; the repeats are one spec each
	want := []bool{false, true}
	if len(got) != len(want) || sw.Duplicates != 6 {
		t.Fatalf("flags %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flags %v, want %v", got, want)
		}
	}
}

// `kernel:` may be a path to a user kernel, relative to the sweep file:
// the program's resolver gets it joined to the file's folder.
func TestKernelPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweeps")
	var asked []string
	o := Options{ResolveKernel: func(p string) (string, error) {
		asked = append(asked, p)
		if strings.Contains(p, "broken") {
			return "", errors.New("k/kernel.yaml:2:1: unknown key \"sourcez\"")
		}
		return "test_scale", nil
	}}
	src := "sweeps:\n  - kernel: ../k/kernel.yaml\n    knobs: {WG: [32, 64]}\n    where: [\"WG > 32\"]\n  - kernel: test_scale\n    knobs: {WG: [32]}\n"
	sw, err := ParseWith(filepath.Join(dir, "s.yaml"), []byte(src), profiler.DefaultOptions(), o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "..", "k", "kernel.yaml"); len(asked) != 1 || asked[0] != want {
		t.Errorf("resolver asked %q, want [%s]", asked, want)
	}
	if len(sw.Jobs) != 2 || sw.Jobs[0].Spec.Kernel != "test_scale" || sw.Jobs[0].Spec.Knobs["WG"] != 64 || sw.Jobs[1].Spec.Knobs["WG"] != 32 {
		t.Errorf("jobs %v", sw.Jobs)
	}
	// a name is never a path; a bare folder name is one when it exists
	if isKernelPath("test_scale", dir) || !isKernelPath("k.yaml", dir) || !isKernelPath("./k", dir) || isKernelPath("nope", dir) {
		t.Error("isKernelPath")
	}
	for _, c := range []struct {
		name, src string
		o         Options
		want      string
	}{
		{"resolver error", "sweeps:\n  - kernel: ./broken/kernel.yaml\n", o,
			"s.yaml:2:13: sweeps[0].kernel: cannot load the user kernel ./broken/kernel.yaml (" + filepath.Join(dir, "broken", "kernel.yaml") + "; paths are relative to the sweep file): k/kernel.yaml:2:1: unknown key \"sourcez\""},
		{"no resolver", "sweeps:\n  - kernel: ./k/kernel.yaml\n", Options{},
			"s.yaml:2:13: sweeps[0].kernel: ./k/kernel.yaml is a path to a user kernel, and this program does not load them here"},
	} {
		_, err := ParseWith(filepath.Join(dir, "s.yaml"), []byte(c.src), profiler.DefaultOptions(), c.o)
		if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
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

// Any `where:` text either fails the file with an InputError or keeps
// specs of the sweep; it never panics.
func FuzzWhere(f *testing.F) {
	for _, s := range []string{"WG > 32", "cdiv(N, WG) > sizeof(T)", "!broken || N % WG == 0", "N / (WG - 64) > 1", "min(", "T == 'f32'", "WG && 1", "1 ? true : false", "N > 1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		src := "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64]}\n    dims: {N: [7, 1000]}\n    where: [" + strconv.Quote(w) + "]\n"
		sw, err := Parse("w.yaml", []byte(src), profiler.DefaultOptions())
		if err != nil {
			if !profiler.IsInputError(err) {
				t.Fatalf("%q: error of type %T: %v", w, err, err)
			}
			return
		}
		if len(sw.Jobs) == 0 || len(sw.Jobs) > 4 {
			t.Fatalf("%q: %d jobs", w, len(sw.Jobs))
		}
	})
}
