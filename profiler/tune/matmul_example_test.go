package tune_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/profiler/tune"
)

// The tuning example examples/tune_matmul, its exhaustive landscape
// (configs/landscapes/user_matmul5-f32-2048.yaml) and its 12-shape tuning
// table (examples/tune_matmul/tune-table.yaml, scripts/tune-header-gpu.sh) as
// the engine reads them, without a GPU.

// h100 is what the CUDA backend reports of an H100 that matters here.
var h100 = profiler.DeviceInfo{Backend: "cuda", Name: "NVIDIA H100 80GB HBM3 (test)", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10,
	MaxThreadsPerGroup: 1024, MemoryBytes: 80 << 30}

var sweepOpts = sweep.Options{ResolveKernel: func(path string) (string, error) {
	fs, err := user.Register(path)
	if err != nil {
		return "", err
	}
	return fs[0].Name(), nil
}}

func matmul5(t *testing.T) profiler.Family {
	t.Helper()
	if _, err := user.Register("../../examples/tune_matmul"); err != nil {
		t.Fatal(err)
	}
	f, err := profiler.Lookup("user_matmul5")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// schemaValues is each knob's values in the manifest.
func schemaValues(f profiler.Family) map[string][]int {
	out := map[string][]int{}
	for _, p := range f.Schema().Knobs {
		out[p.Name] = p.Choices()
	}
	return out
}

// The landscape lists every value of all six knobs at 2048³ for CUDA, and
// the engine (what a sweep and the tune driver call invalid before
// running) keeps 2 078 of its 3 600 combinations on an H100.
func TestTuneMatmulLandscapeCountsTheSpace(t *testing.T) {
	f := matmul5(t)
	sw, err := sweep.LoadWith("../../configs/landscapes/user_matmul5-f32-2048.yaml", profiler.DefaultOptions(), sweepOpts)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Backend != "cuda" || len(sw.Jobs) != 3600 {
		t.Fatalf("backend %q, %d jobs: want cuda, 3600", sw.Backend, len(sw.Jobs))
	}
	seen := map[string]map[int]bool{}
	cache := run.NewPlanCache(0)
	valid := 0
	for _, j := range sw.Jobs {
		s := j.Spec
		if s.Kernel != "user_matmul5" || s.DType != profiler.F32 || s.Dims["M"] != 2048 || s.Dims["N"] != 2048 || s.Dims["K"] != 2048 {
			t.Fatalf("spec %v", s)
		}
		for k, v := range s.Knobs {
			if seen[k] == nil {
				seen[k] = map[int]bool{}
			}
			seen[k][v] = true
		}
		if _, ok := run.Runnable(j, h100, cache); ok {
			valid++
		}
	}
	if valid != 2078 {
		t.Errorf("%d valid configurations, want 2078 (the manifest's rules changed?)", valid)
	}
	for k, vals := range schemaValues(f) {
		if len(seen[k]) != len(vals) {
			t.Errorf("knob %s: the landscape has %d of its %d values", k, len(seen[k]), len(vals))
		}
	}
}

// The rules refuse what would not launch or compile: fewer than 32 or
// more than 1024 threads, more than 64 accumulators, static shared memory
// over 48 KiB; and allow the edges.
func TestTuneMatmulRules(t *testing.T) {
	f := matmul5(t)
	base := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16}.WithDefaults(f.Schema())
	for _, c := range []struct {
		knobs map[string]int
		ok    bool
	}{
		{map[string]int{}, true}, // defaults: 64×64, 4×4, 256 threads
		{map[string]int{"BM": 32, "BN": 32, "TM": 8, "TN": 8}, false},                        // 16 threads
		{map[string]int{"BM": 32, "BN": 32, "TM": 4, "TN": 8}, true},                         // 32 threads
		{map[string]int{"BM": 128, "BN": 128, "TM": 1, "TN": 16}, true},                      // 1024 threads
		{map[string]int{"BM": 256, "BN": 256, "TM": 1, "TN": 16}, false},                     // 4096 threads
		{map[string]int{"BM": 256, "BN": 256, "TM": 16, "TN": 8}, false},                     // 128 accumulators
		{map[string]int{"BM": 256, "BN": 256, "BK": 32, "TM": 8, "TN": 8, "PAD": 0}, false},  // 64 KiB shared
		{map[string]int{"BM": 256, "BN": 128, "BK": 32, "TM": 8, "TN": 8, "PAD": 4}, false},  // (256+128+8)·32·4 = 50176 B shared
		{map[string]int{"BM": 128, "BN": 128, "BK": 32, "TM": 8, "TN": 8, "PAD": 4}, true},   // 33 KiB
		{map[string]int{"BM": 256, "BN": 128, "BK": 16, "TM": 16, "TN": 4, "PAD": 4}, true},  // 25 KiB, 512 threads
		{map[string]int{"BM": 64, "BN": 64, "BK": 8, "TM": 16, "TN": 16, "PAD": 1}, false},   // 256 accumulators
		{map[string]int{"BM": 32, "BN": 256, "BK": 32, "TM": 1, "TN": 1, "PAD": 0}, false},   // 8192 threads
		{map[string]int{"BM": 256, "BN": 256, "BK": 16, "TM": 8, "TN": 8, "PAD": 0}, true},   // 32 KiB, 1024 threads
		{map[string]int{"BM": 256, "BN": 256, "BK": 16, "TM": 16, "TN": 4, "PAD": 0}, true},  // 1024 threads
		{map[string]int{"BM": 256, "BN": 256, "BK": 16, "TM": 16, "TN": 2, "PAD": 0}, false}, // 2048 threads
	} {
		s := base.Clone()
		for k, v := range c.knobs {
			s.Knobs[k] = v
		}
		err := f.Validate(s, h100)
		if (err == nil) != c.ok {
			t.Errorf("%v: Validate = %v, want ok=%v", c.knobs, err, c.ok)
		}
	}
}

// One configuration's plan: the template instantiation by its C++ name,
// (BM/TM)·(BN/TN) threads, a grid that covers any M and N, the shared
// arrays as budget items; its code does not change with the shape, so a
// configuration compiles once for every shape of a tuning table.
func TestTuneMatmulPlan(t *testing.T) {
	f := matmul5(t)
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16, Dims: map[string]int{"M": 1000, "N": 3000, "K": 70},
		Knobs: map[string]int{"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 4, "PAD": 1}}.WithDefaults(f.Schema())
	p, err := f.Plan(s, h100)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	if !strings.Contains(d.Program.Entry, "matmul5<") || !strings.Contains(d.Program.Entry, "128, 64, 8, 8, 4, 1>") {
		t.Errorf("entry %q", d.Program.Entry)
	}
	if d.Grid != [3]int{47, 8, 1} || d.Group != [3]int{256, 1, 1} || d.TGMBytes() != 8*(128+1)*4+8*(64+1)*4 {
		t.Errorf("grid %v, group %v, TGM %d", d.Grid, d.Group, d.TGMBytes())
	}
	other := s.Clone()
	other.Dims = map[string]int{"M": 4096, "N": 64, "K": 16384}
	q, err := f.Plan(other, h100)
	if err != nil {
		t.Fatal(err)
	}
	if q.Dispatches[0].Program.Code != d.Program.Code {
		t.Error("the code of one configuration differs between shapes: each shape would compile it again")
	}
}

// shapesRE finds the SHAPES assignments of scripts/tune-header-gpu.sh.
var shapesRE = regexp.MustCompile(`(?m)^SHAPES\+?="([^"]*)"`)

// The 12-shape table: the sweep file and the GPU script tune the same
// shapes (square, tall, wide, small and large K).
func TestTuneTableShapesAgree(t *testing.T) {
	matmul5(t) // the sweep file names it by path
	st, err := sweep.LoadStream("../../examples/tune_matmul/tune-table.yaml", profiler.DefaultOptions(), sweepOpts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search == nil || st.Backend != "cuda" || st.Search.Header == "" {
		t.Fatalf("backend %q, search %+v: want cuda and a search with a header", st.Backend, st.Search)
	}
	script, err := os.ReadFile("../../scripts/tune-header-gpu.sh")
	if err != nil {
		t.Fatal(err)
	}
	var joined []string
	for _, m := range shapesRE.FindAllStringSubmatch(string(script), -1) {
		joined = append(joined, strings.TrimPrefix(m[1], ";"))
	}
	fromScript, err := tune.ParseShapes(strings.Join(joined, ";"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := st.Search.Shapes
	if len(yaml) < 12 || len(fromScript) != len(yaml) {
		t.Fatalf("%d shapes in the sweep file, %d in the script: want the same 12 or more", len(yaml), len(fromScript))
	}
	kinds := map[string]bool{}
	for i, sh := range yaml {
		if !equalDims(sh, fromScript[i]) {
			t.Errorf("shape %d: %v in the sweep file, %v in the script", i, sh, fromScript[i])
		}
		m, n, k := sh["M"], sh["N"], sh["K"]
		switch {
		case m == n && n == k:
			kinds["square"] = true
		case m >= 8*n:
			kinds["tall"] = true
		case n >= 8*m:
			kinds["wide"] = true
		case k*8 <= min(m, n):
			kinds["small K"] = true
		case k >= 8*max(m, n):
			kinds["large K"] = true
		}
	}
	if len(kinds) != 5 {
		t.Errorf("the shapes cover %v: want square, tall, wide, small K and large K", slices.Sorted(maps.Keys(kinds)))
	}
}

func equalDims(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Where NVRTC and the CUDA toolkit's headers are found (no GPU needed),
// the corners of the space compile at every dtype; elsewhere it skips.
func TestTuneMatmulCompilesWithNVRTC(t *testing.T) {
	f := matmul5(t)
	for _, knobs := range []map[string]int{
		{},
		{"BM": 256, "BN": 256, "BK": 16, "TM": 8, "TN": 8, "PAD": 0},
		{"BM": 32, "BN": 32, "BK": 32, "TM": 4, "TN": 8, "PAD": 4},
		{"BM": 128, "BN": 128, "BK": 8, "TM": 1, "TN": 16, "PAD": 1},
	} {
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt, Knobs: knobs}.WithDefaults(f.Schema())
			p, err := f.Plan(s, h100)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cuda.CheckCompile(p.Dispatches[0].Program, "sm_90")
			if err != nil && r.Compiler == "" {
				t.Skipf("NVRTC not found: %v", err)
			}
			if err != nil {
				t.Errorf("%v at %s: %v\n%s", knobs, dt, err, r.Log)
			}
		}
	}
}
