package lint

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// noTools are Options whose compilers and Python are absent.
func noTools(t *testing.T) Options {
	t.Setenv(pyref.PythonEnv, filepath.Join(t.TempDir(), "no-python"))
	return Options{
		CompileCUDA: func(p profiler.Program, arch string) (cuda.CompileReport, error) {
			return cuda.CompileReport{}, errors.New("NVRTC not found (looked in libnvrtc.so.13); install the CUDA toolkit")
		},
		CompileMetal: func(context.Context, profiler.Program) error { return mslemu.ErrNoCompiler },
	}
}

// findings are a result's findings as "level step message" lines.
func findingsOf(r Result) string {
	recordSuggestions(r)
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in\n%s", what, w, text)
		}
	}
}

// TestFolderBrokenManifestsDoNotHideTheGoodOne: every manifest of a folder
// is reported; the broken ones with their place and what to do, the good
// one loads.
func TestFolderBrokenManifestsDoNotHideTheGoodOne(t *testing.T) {
	good := usertest.Manifest("good_k")
	path := usertest.Write(t, map[string]string{
		"a_good/kernel.yaml":    good,
		"a_good/k.cu":           usertest.Source,
		"b_typo/kernel.yaml":    strings.Replace(usertest.Manifest("typo_k"), "dtypes:", "dtype:", 1),
		"b_typo/k.cu":           usertest.Source,
		"c_noentry/kernel.yaml": strings.Replace(usertest.Manifest("noentry_k"), "entry: k,", "entry: k_fwd,", 1),
		"c_noentry/k.cu":        usertest.Source,
	})
	dir := filepath.Dir(path)
	rep := Check(dir, Options{Static: true})
	if len(rep.Manifests) != 3 {
		t.Fatalf("want 3 manifests, got %d: %+v", len(rep.Manifests), rep.Manifests)
	}
	g, typo, noEntry := rep.Manifests[0], rep.Manifests[1], rep.Manifests[2]
	if g.Broken() || g.Failed() || g.Family == nil || g.Family.Name() != "good_k" || g.Count(Error) != 0 {
		t.Errorf("good manifest: %+v\n%s", g, findingsOf(g))
	}
	if !typo.Broken() || typo.Family != nil {
		t.Errorf("typo manifest loads: %s", findingsOf(typo))
	}
	mustContain(t, "typo", findingsOf(typo), "error   [load] "+filepath.Join(dir, "b_typo/kernel.yaml")+":3:1: ", `unknown field "dtype"`, "check the spelling")
	if !noEntry.Broken() {
		t.Errorf("missing entry loads: %s", findingsOf(noEntry))
	}
	mustContain(t, "missing entry", findingsOf(noEntry), "c_noentry/kernel.yaml:14:", `has no kernel "k_fwd"`, "kernels found: k")
	if got := rep.Loaded(); len(got) != 1 || got[0].Name() != "good_k" {
		t.Errorf("Loaded: %v", got)
	}
	if rep.ExitCode() != 2 {
		t.Errorf("exit code %d, want 2", rep.ExitCode())
	}
	// Static: no compile, no reference.
	for _, f := range g.Findings {
		if f.Step == StepCompile || f.Step == StepReference {
			t.Errorf("static check ran %s: %s", f.Step, f)
		}
	}
	// The good one alone is clean.
	if r := Check(filepath.Join(dir, "a_good"), Options{Static: true}); r.ExitCode() != 0 {
		t.Errorf("good alone: exit %d", r.ExitCode())
	}
}

// Two manifests of one name: which one is refused does not hang on how
// their paths sort. Where one path says broken and the other does not,
// the broken one is refused, naming the other, which loads (whichever
// sorts first); otherwise both are refused, each naming the other (a copy
// that sorts ahead of its original is not taken for the right one).
func TestFolderDuplicateNames(t *testing.T) {
	for _, c := range []struct {
		name       string
		dirs       [2]string
		broken     [2]bool
		wantOf     int // the manifest whose finding is checked
		wantPrefix string
	}{
		{"a copy sorts first", [2]string{"a_copy", "softmax"}, [2]bool{true, true}, 1, "same is also the name of the kernel in A: no manifest of that name loads until each has its own name"},
		{"the broken twin sorts first", [2]string{"a_broken", "b"}, [2]bool{true, false}, 0, "same is also the name of the kernel in B, which keeps it (its path does not say broken): give this manifest its own name, e.g. same_broken"},
		{"the broken twin sorts last", [2]string{"row_sum", "row_sum_broken"}, [2]bool{false, true}, 1, "same is also the name of the kernel in A, which keeps it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{
				c.dirs[0] + "/kernel.yaml": usertest.Manifest("same"), c.dirs[0] + "/k.cu": usertest.Source,
				c.dirs[1] + "/kernel.yaml": usertest.Manifest("same"), c.dirs[1] + "/k.cu": usertest.Source,
			})
			dir := filepath.Dir(path)
			rep := Check(dir, Options{Static: true})
			if len(rep.Manifests) != 2 || rep.Manifests[0].Broken() != c.broken[0] || rep.Manifests[1].Broken() != c.broken[1] {
				t.Fatalf("broken %v %v, want %v\n%s\n%s", rep.Manifests[0].Broken(), rep.Manifests[1].Broken(), c.broken, findingsOf(rep.Manifests[0]), findingsOf(rep.Manifests[1]))
			}
			want := strings.NewReplacer("A", filepath.Join(dir, c.dirs[0], "kernel.yaml"), "B", filepath.Join(dir, c.dirs[1], "kernel.yaml")).Replace(c.wantPrefix)
			mustContain(t, "duplicate", findingsOf(rep.Manifests[c.wantOf]), filepath.Join(c.dirs[c.wantOf], "kernel.yaml")+":1:", want)
		})
	}
}

// A path with no manifest is one broken result.
func TestNoManifest(t *testing.T) {
	rep := Check(t.TempDir(), Options{})
	if rep.ExitCode() != 2 || len(rep.Manifests) != 1 {
		t.Fatalf("%+v", rep)
	}
	mustContain(t, "empty folder", findingsOf(rep.Manifests[0]), "holds no kernel.yaml")
}

// A TGM item no shared array declares is a warning at the item.
func TestTGMItemsAgainstSharedArrays(t *testing.T) {
	src := `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float tile[WG]; }`
	m := strings.Replace(usertest.Manifest("tgm_k"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], tgm: [{name: tile, bytes: 256}, {name: tiles, bytes: 4}]}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	r := Check(path, Options{Static: true}).Manifests[0]
	text := findingsOf(r)
	if r.Count(Warning) != 1 {
		t.Errorf("want 1 warning:\n%s", text)
	}
	mustContain(t, "tgm", text, "warning [source] "+path+":14:", "TGM item tiles of dispatch k: k.cu declares no __shared__ array named tiles (it has tile)")
	if strings.Contains(text, "TGM item tile ") {
		t.Errorf("declared item reported:\n%s", text)
	}
	if r.Failed() || r.Broken() {
		t.Errorf("a warning fails the check: %s", r.Verdict())
	}
}

func TestSharedNames(t *testing.T) {
	src := `__shared__ float a[4]; __shared__ __align__(16) T b[WG][2];
	extern __shared__ char dyn[];
	kernel void k(threadgroup float* c [[threadgroup(0)]]) { threadgroup half d[32]; threadgroup float e = 0; }
	__shared__ float r[_N_], kk[_N_ + 1], w[2][_N_]; __shared__ int n0, n1;`
	got := sharedNames(src)
	for _, n := range []string{"a", "b", "dyn", "c", "d", "e", "r", "kk", "w", "n0", "n1"} {
		if !got[n] {
			t.Errorf("%s not found in %v", n, got)
		}
	}
	if len(got) != 11 {
		t.Errorf("extra names: %v", got)
	}
}

// No NVRTC, no g++, no Python: notes, exit 0.
func TestMissingToolsAreNotes(t *testing.T) {
	m := strings.Replace(usertest.Manifest("tools_k"), "sources: {cuda: k.cu}", "sources: {cuda: k.cu, metal: k.metal}", 1)
	m = strings.Replace(m, "check: none", "check: {python: ref.py}", 1)
	metalSrc := `[[kernel]] void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant P& p [[buffer(2)]]) {}`
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source, "k.metal": metalSrc, "ref.py": "def reference(i, d): pass\n"})
	rep := Check(path, noTools(t))
	r := rep.Manifests[0]
	text := findingsOf(r)
	if r.Count(Error) != 0 || r.Count(Warning) != 0 || rep.ExitCode() != 0 {
		t.Errorf("missing tools are not notes (exit %d):\n%s", rep.ExitCode(), text)
	}
	mustContain(t, "notes", text,
		"note    [compile] "+filepath.Join(filepath.Dir(path), "k.cu")+": CUDA: not compiled: NVRTC not found (looked in",
		"note    [compile] "+filepath.Join(filepath.Dir(path), "k.metal")+": Metal: g++ not found on PATH",
		"note    [reference] "+filepath.Join(filepath.Dir(path), "ref.py")+": not run: check: python: ", "MLTOP_PYTHON")
	if got, want := r.Verdict(), "ok, but not compiled (no NVRTC), not compiled (no g++) and reference not run (no Python) (0 errors, 0 warnings, "; !strings.HasPrefix(got, want) {
		t.Errorf("verdict %q, want it to start %q", got, want)
	}
}

// A Python without NumPy: the verdict says the reference was not run.
func TestVerdictSaysWhatWasNotChecked(t *testing.T) {
	m := strings.Replace(usertest.Manifest("nonumpy_k"), "check: none", "check: {python: ref.py}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source, "ref.py": "def reference(i, d): pass\n"})
	opt := noTools(t)
	py := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(pyref.PythonEnv, py)
	rep := Check(path, opt)
	r := rep.Manifests[0]
	if got, want := r.Verdict(), "ok, but not compiled (no NVRTC) and reference not run (no NumPy) ("; !strings.HasPrefix(got, want) || rep.ExitCode() != 0 {
		t.Errorf("verdict %q (exit %d), want it to start %q:\n%s", got, rep.ExitCode(), want, findingsOf(r))
	}
	opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
		return cuda.CompileReport{Arch: arch, Compiler: "NVRTC 13.0", Lowered: "k"}, nil
	}
	if got := Check(path, opt).Manifests[0].Verdict(); !strings.HasPrefix(got, "ok, but reference not run (no NumPy) (") {
		t.Errorf("with NVRTC: verdict %q", got)
	}
}

// A compile error is an error of the compile step (exit 1) with the log;
// a clean compile is a note naming the entry and the arch.
func TestCompileFindings(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("cc_k"), "k.cu": usertest.Source})
	opt := noTools(t)
	var gotArch string
	opt.Arch = "sm_80"
	opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
		gotArch = arch
		if !strings.Contains(p.Code, "constexpr int rows = 8;") {
			t.Errorf("the program lacks the spec's values:\n%s", p.Code)
		}
		return cuda.CompileReport{Arch: arch, Compiler: "NVRTC 13.0", Lowered: "k", StaticShared: 0}, nil
	}
	rep := Check(path, opt)
	mustContain(t, "clean compile", findingsOf(rep.Manifests[0]), "note    [compile] ", "CUDA f32: k compiles for sm_80 with NVRTC 13.0 (lowered k, 0 B static shared)")
	if gotArch != "sm_80" || rep.ExitCode() != 0 {
		t.Errorf("arch %q, exit %d", gotArch, rep.ExitCode())
	}
	// What the compiler reserves for the system (sm_90) is said apart from the source's arrays.
	opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
		return cuda.CompileReport{Arch: "sm_90", Compiler: "NVRTC 11.8", Lowered: "k", StaticShared: 1024, ReservedShared: 1024}, nil
	}
	rep = Check(path, opt)
	mustContain(t, "reserved shared", findingsOf(rep.Manifests[0]), "note    [compile] ", "(lowered k, 1024 B static shared + 1024 B the compiler reserves for the system)")
	opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
		return cuda.CompileReport{Log: "k.cu(1): error: identifier \"Tx\" is undefined"}, errors.New("NVRTC could not compile k.cu for sm_90: NVRTC_ERROR_COMPILATION")
	}
	rep = Check(path, opt)
	r := rep.Manifests[0]
	mustContain(t, "compile error", findingsOf(r), "error   [compile] ", "CUDA f32: NVRTC could not compile k.cu", `identifier "Tx" is undefined`)
	if rep.ExitCode() != 1 || r.Broken() || !r.Failed() {
		t.Errorf("compile error: exit %d, broken %v, failed %v", rep.ExitCode(), r.Broken(), r.Failed())
	}
}

// NVRTC's log, which the compile error already quotes, is printed once;
// a log the error does not quote is appended.
func TestCompileLogOnce(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("log_once"), "k.cu": usertest.Source})
	opt := noTools(t)
	log := "k.cu:3: error: identifier \"Tx\" is undefined\n\n1 error detected in the compilation of \"k.cu\"."
	for _, quoted := range []bool{true, false} {
		msg := "NVRTC could not compile k.cu for sm_90: NVRTC_ERROR_COMPILATION"
		if quoted {
			msg = "NVRTC could not compile k.cu for sm_90: k.cu:3: error: identifier \"Tx\" is undefined\n" + log
		}
		opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
			return cuda.CompileReport{Log: log}, errors.New(msg)
		}
		got := findingsOf(Check(path, opt).Manifests[0])
		if n := strings.Count(got, "1 error detected in the compilation"); n != 1 {
			t.Errorf("quoted %v: the log appears %d times:\n%s", quoted, n, got)
		}
	}
}

// A compile whose errors all lie in headers the source includes (here a
// stub mltop serves) names the #include behind them after its first line;
// one with an error in the source's own file does not.
func TestCompileErrorsBehindAnInclude(t *testing.T) {
	src := "#include <cstdio>\n#include <torch/extension.h>\n" + usertest.Source + "\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("behind_k"), "k.cu": src})
	opt := noTools(t)
	for _, c := range []struct {
		log  string
		hint bool
	}{
		{"torch/extension.h:80: error: no\n\n1 error detected", true},
		{"torch/extension.h:80: error: no\n" + filepath.Join(filepath.Dir(path), "k.cu") + ":3: error: no\n", false},
	} {
		opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
			return cuda.CompileReport{Log: c.log}, errors.New("NVRTC could not compile k.cu for sm_90: torch/extension.h:80: error: no\n" + c.log)
		}
		got := findingsOf(Check(path, opt).Manifests[0])
		hint := "CUDA f32: NVRTC could not compile k.cu for sm_90: torch/extension.h:80: error: no\n      every error lies in headers brought in by k.cu:2: #include <torch/extension.h>, not in the source's own files"
		if strings.Contains(got, hint) != c.hint {
			t.Errorf("log %q: hint %v, want %v:\n%s", c.log, !c.hint, c.hint, got)
		}
	}
}

// A failed compile of a source whose quoted #include was found nowhere
// (served empty) names that header and what to do; one whose headers are
// all found, or a compile that succeeds, says nothing of it.
func TestCompileErrorNamesMissingHeaders(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		fails bool
		hint  bool
	}{
		{"missing, failed", map[string]string{"k.cu": "#include \"core/common.cuh\"\n" + usertest.Source}, true, true},
		{"found, failed", map[string]string{"k.cu": "#include \"common.cuh\"\n" + usertest.Source, "common.cuh": "#define X 1\n"}, true, false},
		{"missing, compiled", map[string]string{"k.cu": "#include \"core/common.cuh\"\n" + usertest.Source}, false, false},
	} {
		files := map[string]string{"kernel.yaml": usertest.Manifest("missing_h")}
		maps.Copy(files, c.files)
		path := usertest.Write(t, files)
		opt := noTools(t)
		opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
			if !c.fails {
				return cuda.CompileReport{Lowered: "k"}, nil
			}
			return cuda.CompileReport{Log: "k.cu:4: error: identifier \"Tx\" is undefined"}, errors.New("NVRTC could not compile k.cu for sm_90: NVRTC_ERROR_COMPILATION")
		}
		got := findingsOf(Check(path, opt).Manifests[0])
		hint := `not found, so served empty (found neither beside the including file nor in include_dirs:): k.cu:1: "core/common.cuh": if NVRTC misses a name one of them declares, add its folder to include_dirs:`
		if strings.Contains(got, hint) != c.hint {
			t.Errorf("%s: hint %v, want %v:\n%s", c.name, !c.hint, c.hint, got)
		}
	}
}

// A compiler that does not finish is stopped at the step's time limit.
func TestCompileTimeout(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("slow_k"), "k.cu": usertest.Source})
	opt := noTools(t)
	block := make(chan struct{})
	defer close(block)
	opt.CompileCUDA = func(profiler.Program, string) (cuda.CompileReport, error) { <-block; return cuda.CompileReport{}, nil }
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as ctrl-C would
	opt.Context = ctx
	rep := Check(path, opt)
	if len(rep.Manifests) != 0 {
		// A cancelled check stops before or at the first step.
		mustContain(t, "cancelled", findingsOf(rep.Manifests[0]), "the check was stopped (cancelled by user)")
	}
	opt.Context = nil
	opt.StepTimeout = 1 // 1ns
	rep = Check(path, opt)
	mustContain(t, "timeout", findingsOf(rep.Manifests[0]), "error   [compile] ", "NVRTC did not finish k within the 1ns a compile step may take")
}

// SIGTERM (or ctrl-C) while NVRTC compiles: the compile step says the
// check was stopped, and by what; not that NVRTC failed, nor the step's
// time limit, and the reference is not run (a stopped probe is no missing
// NumPy). The verdict says stopped, not failed.
func TestCompileStoppedBySignal(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("stopped_k"), "k.cu": usertest.Source})
	opt := noTools(t)
	opt.Python = ""
	started, block := make(chan struct{}), make(chan struct{})
	defer close(block)
	opt.CompileCUDA = func(profiler.Program, string) (cuda.CompileReport, error) {
		close(started)
		<-block
		return cuda.CompileReport{}, nil
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	opt.Context = ctx
	go func() { <-started; cancel(errors.New("terminated (SIGTERM)")) }()
	m := Check(path, opt).Manifests[0]
	got := findingsOf(m)
	mustContain(t, "stopped", got, "note    [compile] ", "CUDA f32: k not compiled: the check was stopped (terminated (SIGTERM)) before it finished")
	for _, bad := range []string{"did not finish", "2m0s", "error ", "NumPy", "[reference]"} {
		if strings.Contains(got, bad) {
			t.Errorf("a stopped check says %q:\n%s", bad, got)
		}
	}
	if v := m.Verdict(); !strings.HasPrefix(v, "stopped (terminated (SIGTERM)) before every step ran") {
		t.Errorf("verdict %q", v)
	}
}

// The real MSL emulation: a user kernel compiles; a typo is an error
// naming the line.
func TestMetalOnTheEmulation(t *testing.T) {
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("no g++")
	}
	m := strings.Replace(usertest.Manifest("msl_k"), "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
	m = strings.Replace(m, "dtypes: [f32]", "dtypes: [f32, bf16]", 1)
	good := "#include <metal_stdlib>\nusing namespace metal;\nstruct P { int n_rows; int n_cols; };\n[[kernel]] void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant P& p [[buffer(2)]],\n uint i [[threadgroup_position_in_grid]]) {\n  Y[i] = T(float(X[i]) * 2.0f);\n}\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.metal": good})
	opt := noTools(t)
	opt.CompileMetal = nil
	rep := Check(path, opt)
	mustContain(t, "metal ok", findingsOf(rep.Manifests[0]), "Metal f32: k compiles on the MSL emulation", "Metal bf16: k compiles")
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d:\n%s", rep.ExitCode(), findingsOf(rep.Manifests[0]))
	}
	os.WriteFile(filepath.Join(filepath.Dir(path), "k.metal"), []byte(strings.Replace(good, "T(float", "Tx(float", 1)), 0o644)
	rep = Check(path, opt)
	mustContain(t, "metal typo", findingsOf(rep.Manifests[0]), "error   [compile] ", "k.metal:6:", "Tx")
	if rep.ExitCode() != 1 {
		t.Errorf("exit %d", rep.ExitCode())
	}
}

// Several dtypes but no buffer of the spec's dtype: every spec is the same
// kernel on the same data, a warning at dtypes:.
func TestDTypesThatChangeNothing(t *testing.T) {
	two := strings.Replace(usertest.Manifest("dt_k"), "dtypes: [f32]", "dtypes: [f32, bf16]", 1)
	fixed := strings.ReplaceAll(two, "dtype: T,", "dtype: f32,")
	src := `extern "C" __global__ void k(const float* X, float* Y, int rows, int cols) {}`
	for _, c := range []struct {
		name, manifest, src string
		warn                bool
	}{
		{"fixed dtypes", fixed, src, true},
		{"dtype T", two, usertest.Source, false},
		{"one dtype", strings.ReplaceAll(usertest.Manifest("dt1_k"), "dtype: T,", "dtype: f32,"), src, false},
	} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": c.manifest, "k.cu": c.src})
		r := Check(path, Options{Static: true}).Manifests[0]
		text := findingsOf(r)
		if r.Broken() {
			t.Fatalf("%s: broken:\n%s", c.name, text)
		}
		got := strings.Contains(text, "no buffer has dtype T")
		if got != c.warn {
			t.Errorf("%s: warning %v, want %v:\n%s", c.name, got, c.warn, text)
		}
		if c.warn {
			mustContain(t, c.name, text, "warning [source] "+path+":3:", "dtypes: lists f32, bf16, but no buffer has dtype T", "(dtype: T) or list one dtype")
		}
	}
}

// An entry kept in a local header (mmcv's nms_cuda in nms_cuda_kernel.cuh,
// included by nms_cuda.cu) declares its shared arrays there: an item named
// after one is no warning, a wrong name says the headers were searched, and
// no items at all suggests the header's array.
func TestTGMItemsAgainstSharedArraysInHeaders(t *testing.T) {
	header := "#pragma once\nint const per = 64;\n" +
		`extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float boxes[per * 4]; Y[0] = X[0]; }` + "\n"
	main := "#include \"k_kernel.cuh\"\nvoid launch() {}\n"
	for _, c := range []struct {
		name, tgm, want string
	}{
		{"named after the header's array", ", tgm: [{name: boxes, bytes: 1024}]", ""},
		{"a name no file declares", ", tgm: [{name: box, bytes: 1024}]", "TGM item box of dispatch k: k.cu and its local headers declare no __shared__ array named box (they have boxes)"},
		{"no items", "", "__shared__ boxes[per * 4] (in k) but dispatch k lists no tgm: items"},
	} {
		m := strings.Replace(usertest.Manifest("tgm_h"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+c.tgm+"}", 1)
		path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": main, "k_kernel.cuh": header})
		r := Check(path, Options{Static: true}).Manifests[0]
		text := findingsOf(r)
		if r.Broken() {
			t.Fatalf("%s: broken:\n%s", c.name, text)
		}
		if c.want == "" {
			if strings.Contains(text, "TGM item") || strings.Contains(text, "lists no tgm: items") {
				t.Errorf("%s: warned about a declared array:\n%s", c.name, text)
			}
			continue
		}
		mustContain(t, c.name, text, "warning [source] "+path+":14:", c.want)
	}
}

// Shared arrays in a dispatch's entry or the helpers it calls (templated
// ones too) with no tgm: items: a warning naming the array, the helper and
// an item to add.
func TestSharedArraysWithoutTGMItems(t *testing.T) {
	helper := "template <typename U> __device__ U block_reduce_sum(U v) { __shared__ U partial[32]; partial[0] = v; return partial[0]; }\n"
	unused := "__device__ float lonely() { __shared__ float never[64]; return never[0]; }\n"
	entry := `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = block_reduce_sum<T>(X[0]); }` + "\n"
	for _, c := range []struct {
		name, src, tgm, want string
	}{
		{"templated helper", helper + unused + entry, "", "the source declares __shared__ partial[32] (in block_reduce_sum) but dispatch k lists no tgm: items: the TGM budget shows 0 B; add e.g. `tgm: [{name: partial, bytes: \"TODO\"}]` (TODO: partial holds U, whose size mltop does not know: write 32 times its bytes)"},
		{"in the entry", `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float tile[WG]; }`, "", "__shared__ tile[WG] (in k) but dispatch k lists no tgm: items: the TGM budget shows 0 B; add e.g. `tgm: [{name: tile, bytes: \"WG * 4\"}]`"},
		{"with tgm items", helper + entry, ", tgm: [{name: partial, bytes: 128}]", ""},
		{"helper not called", unused + `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {}`, "", ""},
		// overloads that each declare the same array: one item, not one per overload
		{"overloads alike", "__global__ void k(const float* X, float* Y, int rows, int cols) { __shared__ float shr[32]; }\n" +
			"__global__ void k(const __half* X, __half* Y, int rows, int cols) { __shared__ float shr[32]; }\n",
			"", "__shared__ shr[32] (in k) but dispatch k lists no tgm: items: the TGM budget shows 0 B; add e.g. `tgm: [{name: shr, bytes: 128}]`"},
	} {
		m := strings.Replace(usertest.Manifest("shared_k"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+c.tgm+"}", 1)
		path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.src})
		r := Check(path, Options{Static: true}).Manifests[0]
		text := findingsOf(r)
		got := strings.Contains(text, "lists no tgm: items")
		if got != (c.want != "") {
			t.Errorf("%s: warned %v:\n%s", c.name, got, text)
			continue
		}
		if c.want != "" {
			mustContain(t, c.name, text, "warning [source] "+path+":14:", c.want)
		}
	}
}

// An array sized by the source's macros (in a local header too, as
// cuda-samples' histogram sizes its per-warp histograms), of one or more
// dimensions (convolutionSeparable's s_Data[4][160]), gets a suggestion
// with the macros' values, which loads as it is: a manifest's expressions
// do not know the source's macros.
func TestSharedArraySizesFromSourceMacros(t *testing.T) {
	header := "#define BINS 256\n#define LOG2_WARPS 2U\n#define MEM ((1U << LOG2_WARPS) * BINS)\n"
	src := `#include "hist.h"
#define TILE 8
extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ uint s_hist[MEM]; __shared__ float tile[TILE * WG]; __shared__ float s_rows[TILE][(TILE + 2) * 16 + 1]; }
`
	want := "`tgm: [{name: s_hist, bytes: 4096}, {name: tile, bytes: \"8 * WG * 4\"}, {name: s_rows, bytes: 5152}]`"
	m := usertest.Manifest("macro_k")
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src, "hist.h": header})
	text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
	mustContain(t, "macros", text, "__shared__ s_hist[MEM] (in k), __shared__ tile[TILE * WG] (in k), __shared__ s_rows[TILE][( TILE + 2 ) * 16 + 1] (in k)", want)

	items := strings.Trim(strings.TrimPrefix(want, "`tgm: "), "`")
	fixed := strings.Replace(m, "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], tgm: "+items+"}", 1)
	path = usertest.Write(t, map[string]string{"kernel.yaml": fixed, "k.cu": src, "hist.h": header})
	r := Check(path, Options{Static: true}).Manifests[0]
	if text := findingsOf(r); r.Broken() || strings.Contains(text, "lists no tgm: items") {
		t.Errorf("the suggested items do not load cleanly:\n%s", text)
	}
}

// A source that gives a knob a default (`#ifndef WG` / `#define WG 64`)
// gets the knob's value from mltop on every spec, so a suggestion must
// keep the knob's name, not the source's default: bytes "8 * WG * 4", not
// 2048 (right for WG=64 only).
func TestSharedArraySizeKeepsKnobsTheSourceDefaults(t *testing.T) {
	src := `#ifndef WG
#define WG 64
#endif
#define TILE 8
extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float tile[TILE * WG]; __shared__ float whole[WG]; }
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("knob_default_k"), "k.cu": src})
	text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
	mustContain(t, "knob default", text, "`tgm: [{name: tile, bytes: \"8 * WG * 4\"}, {name: whole, bytes: \"WG * 4\"}]`")
}

func TestSharedArraysIn(t *testing.T) {
	// ggml's helper_mv_reduce_and_write keeps `threadgroup float * shmem_f32[NR0];`:
	// an array of pointers into threadgroup memory, itself in thread memory.
	// RWKV's wkv kernels declare several arrays at once: `__shared__ float
	// r[_N_], k[_N_], u[_N_], w[_N_];` (each one an array; `, n = 0` after
	// an array is no array).
	src := "kernel void k(threadgroup float* buf [[threadgroup(0)]], uint i) { threadgroup half tile[WG * 2]; threadgroup float * rowp[NR0]; threadgroup float *& ref = rowp[0]; __shared__ __align__(16) float s[8]; extern __shared__ float dyn[]; __shared__ float rows[4][10 * 16 + 1]; __shared__ float r[_N_], kk[_N_], w[2][_N_]; __shared__ int c[4], n; }"
	var got []string
	for _, a := range sharedArraysIn(csrc.Tokenize(src), "k") {
		got = append(got, a.Elem+" "+a.String())
	}
	if want := "half tile[WG * 2]|float s[8]|float dyn[]|float rows[4][10 * 16 + 1]|float r[_N_]|float kk[_N_]|float w[2][_N_]|int c[4]"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

// mltop check compiles the Metal examples written the way MLX-style
// libraries write kernels — a [[host_name]] template instantiation with
// function constants, and an MLX body — as the emulation runner does
// (their entries are host names, not functions of the source).
func TestMetalExamplesCheck(t *testing.T) {
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("no g++")
	}
	for _, ex := range []string{"metal_constants", "mlx_body"} {
		opt := noTools(t)
		opt.CompileMetal = nil
		rep := Check("../../../examples/"+ex+"/kernel.yaml", opt)
		if len(rep.Manifests) != 1 {
			t.Fatalf("%s: %d manifests", ex, len(rep.Manifests))
		}
		mustContain(t, ex, findingsOf(rep.Manifests[0]), "compiles on the MSL emulation")
		if rep.ExitCode() != 0 {
			t.Errorf("%s: exit %d:\n%s", ex, rep.ExitCode(), findingsOf(rep.Manifests[0]))
		}
	}
}

// An extern (unsized) shared array is sized at launch by dynamic_tgm or,
// without it, by the tgm: items beyond the static arrays: no warning when
// either sizes it, a warning naming dynamic_tgm when nothing does (no
// items, or items that name static arrays only), and never an item of
// unknown size.
func TestExternSharedArrays(t *testing.T) {
	src := `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { extern __shared__ float sram[]; sram[0] = X[0]; Y[0] = sram[0]; }`
	withStatic := strings.Replace(src, "extern __shared__", "__shared__ float part[4]; part[0] = 0; extern __shared__", 1)
	const nudge = "dispatch k's kernel declares an extern (unsized) shared array, sized at launch, but the dispatch sets no dynamic_tgm: add `dynamic_tgm: <bytes>`"
	for _, c := range []struct {
		name, src, extra, want string
	}{
		{"with dynamic_tgm", src, ", dynamic_tgm: \"WG * 4\"", ""},
		{"without dynamic_tgm", src, "", nudge},
		{"sized by its tgm: item", src, ", tgm: [{name: sram, bytes: \"WG * 4\"}]", ""},
		{"sized by the tgm: items beyond the static ones", withStatic, ", tgm: [{name: part, bytes: 16}, {name: sram, bytes: \"WG * 4\"}]", ""},
		{"tgm: items of static arrays only", withStatic, ", tgm: [{name: part, bytes: 16}]", nudge},
	} {
		m := strings.Replace(usertest.Manifest("extern_k"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+c.extra+"}", 1)
		path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.src})
		text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
		if strings.Contains(text, "lists no tgm: items") || strings.Contains(text, "BYTES_PER_ELEMENT") {
			t.Errorf("%s: a tgm: item of unknown size is suggested:\n%s", c.name, text)
		}
		if got := strings.Contains(text, "extern (unsized) shared array"); got != (c.want != "") {
			t.Errorf("%s: warned %v:\n%s", c.name, got, text)
		} else if c.want != "" {
			mustContain(t, c.name, text, c.want)
		}
		if strings.Contains(text, "count those bytes twice") {
			t.Errorf("%s: warned of bytes counted twice:\n%s", c.name, text)
		}
	}
	// the type written ahead of __shared__ (cuda-samples'
	// reductionMultiBlockCG): the same extern array
	typeFirst := strings.Replace(src, "extern __shared__ float sram[]", "extern double __shared__ sram[]", 1)
	m0 := usertest.Manifest("extern_k")
	if text := findingsOf(Check(usertest.Write(t, map[string]string{"kernel.yaml": m0, "k.cu": typeFirst}), Options{Static: true}).Manifests[0]); !strings.Contains(text, nudge) {
		t.Errorf("extern double __shared__: not warned:\n%s", text)
	}
	// listed as a tgm: item too: its bytes would count twice
	m := strings.Replace(usertest.Manifest("extern_k"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], dynamic_tgm: \"WG * 4\", tgm: [{name: sram, bytes: \"WG * 4\"}]}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	mustContain(t, "both", findingsOf(Check(path, Options{Static: true}).Manifests[0]),
		"dispatch k lists the extern shared array sram as a tgm: item and sets dynamic_tgm: the TGM budget and its limit count those bytes twice; drop the tgm: item")
}

// A templated or namespaced entry (`k<T, WG>`, `ns::k`) is looked up by
// its function's name: its shared arrays are linted as a plain entry's.
func TestSharedArraysOfTemplatedEntries(t *testing.T) {
	body := "(const F* X, F* Y, int rows, int cols) { __shared__ float part[BLOCK / 32]; extern __shared__ float sram[]; part[0] = sram[0]; }"
	for _, c := range []struct{ entry, src string }{
		{"k<T, WG>", "template <typename F, int BLOCK> __global__ void k" + body},
		{"ns::k", "namespace ns { constexpr int BLOCK = 64; using F = float; __global__ void k" + body + " }"},
	} {
		for _, tc := range []struct{ extra, want string }{
			{", dynamic_tgm: \"WG * 4\", tgm: [{name: sram, bytes: \"WG * 4\"}]", "dispatch k lists the extern shared array sram as a tgm: item and sets dynamic_tgm"},
			{"", "dispatch k's kernel declares an extern (unsized) shared array, sized at launch, but the dispatch sets no dynamic_tgm"},
			{", dynamic_tgm: \"WG * 4\"", "the source declares __shared__ part[BLOCK / 32] (in k) but dispatch k lists no tgm: items"},
		} {
			m := strings.Replace(usertest.Manifest("tmpl_k"), "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+tc.extra+"}", 1)
			m = strings.Replace(m, "{entry: k,", fmt.Sprintf("{name: k, entry: %q,", c.entry), 1)
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.src})
			mustContain(t, c.entry, findingsOf(Check(path, Options{Static: true}).Manifests[0]), tc.want)
		}
	}
}

// A knob the source #defines unguarded never reaches the kernel: check
// warns at the source's line; with the #ifndef guard it says nothing.
func TestKnobTheSourceRedefines(t *testing.T) {
	const kern = "extern \"C\" __global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float s[WG]; Y[0] = s[0]; }\n"
	for _, c := range []struct {
		name, head string
		warns      bool
	}{
		{"unguarded", "#define WG 1024\n", true},
		{"guarded", "#ifndef WG\n#define WG 1024\n#endif\n", false},
		{"the knob's only value is the source's", "#define WG 64\n", false},
		{"the knob has the source's value among others", "#define WG 64\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := usertest.Manifest("redefined_k")
			if c.name == "the knob's only value is the source's" {
				m = strings.Replace(m, "values: [64, 128]", "values: [64]", 1)
			}
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.head + kern})
			text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
			warned := false
			for _, l := range strings.Split(text, "\n") {
				warned = warned || strings.HasPrefix(l, "warning [source] ") && strings.Contains(l, "/k.cu:1: WG: #define before k.cu:1, where the source #defines it again without #ifndef WG")
			}
			if warned != c.warns {
				t.Errorf("warned %v, want %v:\n%s", warned, c.warns, text)
			}
		})
	}
}

// A manifest with TODO marks (what `mltop new` leaves on its guesses) gets
// one warning naming their lines; new's header ("fill in the TODOs") is
// not one, and a manifest without marks gets none.
func TestTODOsLeftAreAWarning(t *testing.T) {
	base := usertest.Manifest("todo_k")
	for _, c := range []struct {
		name, manifest, want string
	}{
		{"two marks", "# fill in the TODOs\n" + strings.Replace(base, "dispatches:", "# TODO: the grid\ndispatches:", 1) + "# work: {flops: \"TODO\"}\n", "2 TODOs left (lines "},
		{"none", "# fill in the TODOs\n" + base, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": c.manifest, "k.cu": usertest.Source})
			got := findingsOf(Check(path, noTools(t)).Manifests[0])
			if c.want == "" {
				if strings.Contains(got, " left (line") {
					t.Errorf("a TODO warning without marks:\n%s", got)
				}
				return
			}
			mustContain(t, c.name, got, "warning [load] ", c.want, "make it right and delete the TODO")
		})
	}
}

// tgm: items that do not add up to what the compiler reports (static +
// dynamic_tgm) are a warning: the budget and occupancy come from them.
// Items that add up (up to padding), and a dispatch without items, get
// none.
func TestTGMItemsAgainstTheCompiler(t *testing.T) {
	for _, c := range []struct {
		name, items string
		warned      bool
	}{
		{"half the array", `tgm: [{name: red, bytes: "2048"}], `, true},
		{"the array", `tgm: [{name: red, bytes: "4096"}], `, false},
		{"padding under 16 B", `tgm: [{name: red, bytes: "4088"}], `, false}, // alignment, as a run's budget counts it
		{"no items", ``, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := strings.Replace(usertest.Manifest("tgm_k"), "{entry: k, grid: [rows], ", "{entry: k, grid: [rows], "+c.items, 1)
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source})
			opt := noTools(t)
			opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
				return cuda.CompileReport{Arch: "sm_90", Compiler: "NVRTC 13.0", Lowered: "k", StaticShared: 4096}, nil
			}
			got := findingsOf(Check(path, opt).Manifests[0])
			if warned := strings.Contains(got, "but the compiler reports"); warned != c.warned {
				t.Errorf("warned %v, want %v:\n%s", warned, c.warned, got)
			}
			if c.warned {
				mustContain(t, c.name, got, "warning [compile] ", "its tgm: items sum to 2048 B (red 2048 B), but the compiler reports 4096 B static shared + 0 B dynamic_tgm = 4096 B")
			}
		})
	}
}
