package user

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

var update = flag.Bool("update", false, "rewrite the golden files of the prepared text")

// withToolkit makes the loads of one test see a CUDA toolkit whose include
// folder holds headers (nil: no toolkit).
func withToolkit(t *testing.T, headers ...string) {
	t.Helper()
	var dirs []string
	if headers != nil {
		dir := t.TempDir()
		for _, h := range headers {
			p := filepath.Join(dir, h)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("// "+h+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs = []string{dir}
	}
	old := toolkitIncludeDirs
	toolkitIncludeDirs = func() []string { return dirs }
	t.Cleanup(func() { toolkitIncludeDirs = old })
}

var fullToolkit = []string{"cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h", "cooperative_groups/reduce.h", "cub/block/block_reduce.cuh", "cuda_runtime.h"}

// prepared plans the default spec (at dtype dt) of the manifest at path
// and returns its program with the folder of the manifest written as $DIR.
func preparedProgram(t *testing.T, path string, dt profiler.DType) (profiler.Program, *Family) {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	return p.Dispatches[0].Program, f
}

// metalPreparedProgram writes a Metal manifest named name with src as its
// k.metal and returns the program of its default spec on metalDev, the
// family and the manifest's path.
func metalPreparedProgram(t *testing.T, name, src string) (profiler.Program, *Family, string) {
	t.Helper()
	m := strings.Replace(usertest.Manifest(name), "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.metal": src})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), metalDev)
	if err != nil {
		t.Fatal(err)
	}
	return p.Dispatches[0].Program, f, path
}

// golden compares the program's text (code, then every include but the
// shared mltop_user.cuh, by name) with testdata/prepare/<name>.golden.
func golden(t *testing.T, name string, prog profiler.Program, dir string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(prog.Code)
	for _, n := range slices.Sorted(mapsKeys(prog.Includes)) {
		if n != cudaHeaderName {
			fmt.Fprintf(&b, "==> %s <==\n%s", n, prog.Includes[n])
		}
	}
	got := strings.ReplaceAll(b.String(), dir, "$DIR")
	path := filepath.Join("testdata", "prepare", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("prepared text differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// userLines are the lines of the user's file in the prepared code: those
// after the first #line, the inserted #define/#line pairs dropped.
func userLines(code string) []string {
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	var out []string
	started := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#line ") {
			started = true
			continue
		}
		if !started {
			continue
		}
		if strings.HasPrefix(l, "#define ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#line ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func injectionsOf(f *Family, lang string) map[string]string {
	out := map[string]string{}
	for _, in := range f.Injections(lang) {
		out[in.Name] = string(in.How)
	}
	return out
}

const intTSource = `// int T and int N parameters, and a template <typename T> helper of its own
template <typename T>
__device__ T twice(T v) { return v + v; }

__global__ void scale_rows(floatX* out, const floatX* inp, int N, int T) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * T) {
        out[i] = twice<floatX>(inp[i]);
    }
}
`

const intTManifest = `name: int_t
sources: {cuda: k.cu}
dtypes: [f32]
dtype_name: floatX
knobs:
  WG: {values: [128, 256], default: 128}
dims:
  N: {default: 4}
  T: {default: 64}
buffers:
  - {name: out, dtype: floatX, shape: [N, T], out: true}
  - {name: inp, dtype: floatX, shape: [N, T]}
dispatches:
  - {entry: scale_rows, grid: ["cdiv(N * T, WG)"], threads: [WG], args: [out, inp, N, T]}
check: none
`

func TestPrepareParamsNamedLikeDims(t *testing.T) {
	withToolkit(t, fullToolkit...)
	path := usertest.Write(t, map[string]string{"kernel.yaml": intTManifest, "k.cu": intTSource})
	prog, f := preparedProgram(t, path, profiler.F32)
	golden(t, "int_t", prog, filepath.Dir(path))
	got := injectionsOf(f, "cuda")
	for name, how := range map[string]string{"N": "constexpr", "T": "constexpr", "floatX": "constexpr", "WG": "unused", "DTYPE": "unused"} {
		if got[name] != how {
			t.Errorf("%s: %s, want %s", name, got[name], how)
		}
	}
	if !strings.Contains(prog.Code, "constexpr int T = 64;\n") || !strings.Contains(prog.Code, "using floatX = float;\n") || strings.Contains(prog.Code, "#define T ") {
		t.Errorf("T and floatX:\n%s", prog.Code)
	}
}

func TestPrepareKnobWinsOverIfndef(t *testing.T) {
	withToolkit(t)
	src := "#include <cuda_fp16.h>\n#ifndef WG\n#define WG 256\n#endif\n__global__ void k(T* x) { __shared__ float s[WG]; Y[0] = s[0]; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("knob_wins"), "k.cu": strings.Replace(src, "T* x", "const T* X, T* Y, int rows, int cols", 1)})
	prog, f := preparedProgram(t, path, profiler.F32)
	golden(t, "knob_wins", prog, filepath.Dir(path))
	in := f.Injections("cuda")
	var wg Injection
	for _, i := range in {
		if i.Name == "WG" {
			wg = i
		}
	}
	if wg.How != InjectMacro || wg.Line != 2 {
		t.Errorf("WG: %+v, want a macro before line 2", wg)
	}
	// the macro comes after the system include and before #ifndef WG
	code := prog.Code
	inc, def, ifn := strings.Index(code, "#include <cuda_fp16.h>\n#define"), strings.Index(code, "#define WG 64\n"), strings.Index(code, "#ifndef WG")
	if inc < 0 || def < 0 || !(inc < def && def < ifn) {
		t.Errorf("order of include (%d), #define WG 64 (%d), #ifndef WG (%d):\n%s", inc, def, ifn, code)
	}
	if prog.Includes["cuda_fp16.h"] == "" {
		t.Error("no toolkit, yet cuda_fp16.h is not served (the storage-struct fallback)")
	}
}

func TestPrepareDeclaredNamesAreLeftAlone(t *testing.T) {
	withToolkit(t)
	src := "constexpr int WG = 128;\ntypedef float T;\n__global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float s[WG]; Y[0] = s[0]; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("declared"), "k.cu": src})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	code := p.Dispatches[0].Program.Code
	if strings.Contains(code, "constexpr int WG = 64") || strings.Contains(code, "using T =") || strings.Contains(code, "#define WG") {
		t.Errorf("a declared name was injected:\n%s", code)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"WG: not injected: the source declares it (k.cu:1)", "T: not injected: the source declares it (k.cu:2)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestPrepareBF16IncludesToolkitFirst(t *testing.T) {
	src := "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = __float2bfloat16((float)X[0] * 2.0f); }\n"
	m := strings.Replace(usertest.Manifest("bf16"), "dtypes: [f32]", "dtypes: [bf16]", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	withToolkit(t, fullToolkit...)
	prog, _ := preparedProgram(t, path, profiler.BF16)
	golden(t, "bf16_toolkit", prog, filepath.Dir(path))
	first := strings.SplitN(prog.Code, "\n", 3)
	if first[0] != "#include <cuda_fp16.h>" || first[1] != "#include <cuda_bf16.h>" {
		t.Errorf("the toolkit headers are not first:\n%s", prog.Code)
	}
	if i, j := strings.Index(prog.Code, "#include <cuda_bf16.h>"), strings.Index(prog.Code, "using T = __nv_bfloat16;"); j < 0 || i > j {
		t.Errorf("using T comes before cuda_bf16.h or is missing:\n%s", prog.Code)
	}
	withToolkit(t)
	prog, _ = preparedProgram(t, path, profiler.BF16)
	if strings.Contains(prog.Code, "#include <cuda_bf16.h>") || !strings.Contains(prog.Code, "struct __nv_bfloat16 { unsigned short mltop_bits_; };") {
		t.Errorf("without a toolkit, want the storage struct:\n%s", prog.Code)
	}
}

func TestPrepareLocalIncludes(t *testing.T) {
	withToolkit(t)
	m := strings.Replace(usertest.Manifest("local_inc"), "sources: {cuda: k.cu}", "sources: {cuda: src/k.cu}\ninclude_dirs: [shared]", 1)
	files := map[string]string{
		"kernel.yaml":             m,
		"src/k.cu":                "#include \"common.h\"\n#include <helpers/math.cuh>\n__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0] * SCALE; }\n",
		"src/common.h":            "#pragma once\n#include <vector>\n#ifndef WG\n#define WG 32\n#endif\nstatic std::vector<int> host_table;\n__device__ float SCALE_d = 2.0f;\n#define SCALE 2\n",
		"shared/helpers/math.cuh": "#pragma once\n__device__ inline float sq(float x) { return x * x; }\nvoid host_only() {}\n",
	}
	path := usertest.Write(t, files)
	prog, f := preparedProgram(t, path, profiler.F32)
	golden(t, "local_includes", prog, filepath.Dir(path))
	dir := filepath.Dir(path)
	if !slices.Contains(f.Files(), filepath.Join(dir, "src", "common.h")) || !slices.Contains(f.Files(), filepath.Join(dir, "shared", "helpers", "math.cuh")) {
		t.Errorf("the headers are not watched: %v", f.Files())
	}
	if h := prog.Includes["common.h"]; !strings.Contains(h, "#define WG 64\n#line 3 ") || strings.Contains(h, "host_table") {
		t.Errorf("common.h:\n%s", h)
	}
	if h := prog.Includes["helpers/math.cuh"]; strings.Contains(h, "host_only") || !strings.Contains(h, "sq(float x)") {
		t.Errorf("helpers/math.cuh:\n%s", h)
	}
	if !strings.Contains(prog.Includes["vector"], "namespace std {}") {
		t.Errorf("<vector> is not a stub: %q", prog.Includes["vector"])
	}
	if len(prog.IncludeDirs) != 1 || prog.IncludeDirs[0] != filepath.Join(dir, "shared") {
		t.Errorf("include dirs %v", prog.IncludeDirs)
	}
}

func TestPrepareDefines(t *testing.T) {
	withToolkit(t)
	m := usertest.Manifest("defs") + "defines:\n  USE_FAST: \"T == bf16\"\n  BLOCK: \"WG * 2\"\n  NEVER: false\n"
	m = strings.Replace(m, "dtypes: [f32]", "dtypes: [f32, bf16]", 1)
	src := "#include <stdio.h>\n#if defined(USE_FAST)\n#define PATH 1\n#endif\n__global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float s[BLOCK]; Y[0] = s[0]; }\n#ifdef NEVER\n#endif\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.BF16)
	golden(t, "defines_bf16", prog, filepath.Dir(path))
	for _, want := range []string{"#define USE_FAST 1\n#line 2 ", "#define BLOCK 128\n#line 5 "} {
		if !strings.Contains(prog.Code, want) {
			t.Errorf("want %q in\n%s", want, prog.Code)
		}
	}
	if strings.Contains(prog.Code, "NEVER 1") {
		t.Errorf("a false define is defined:\n%s", prog.Code)
	}
	prog, _ = preparedProgram(t, path, profiler.F32)
	if strings.Contains(prog.Code, "#define USE_FAST") {
		t.Errorf("USE_FAST defined at f32:\n%s", prog.Code)
	}
}

func TestPrepareBadDefines(t *testing.T) {
	withToolkit(t)
	for _, c := range []struct{ defines, want string }{
		{"  WG: 3\n", "WG is already knobs"},
		{"  9X: 1\n", `"9X" is not a C identifier`},
		{"  X: \"nope + 1\"\n", "unknown name 'nope'"},
	} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("bad") + "defines:\n" + c.defines, "k.cu": usertest.Source})
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("defines %q: %v, want %q", c.defines, err, c.want)
		}
	}
}

// A whole program: host functions, globals, main and launches are blanked
// with their lines kept; kernels, device helpers and types stay.
func TestPrepareWholeProgram(t *testing.T) {
	withToolkit(t, fullToolkit...)
	path := "../../examples/whole_program/kernel.yaml"
	prog, f := preparedProgram(t, path, profiler.BF16)
	golden(t, "whole_program_bf16", prog, filepath.Dir(path))
	src, err := os.ReadFile("../../examples/whole_program/layernorm.cu")
	if err != nil {
		t.Fatal(err)
	}
	lines := userLines(prog.Code)
	want := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines after preparation, the file has %d", len(lines), len(want))
	}
	code := strings.Join(lines, "\n")
	for _, gone := range []string{"int main(", "cudaMalloc", "<<<", "static int verbose", "fill_uniform", "void layernorm_forward("} {
		if strings.Contains(code, gone) {
			t.Errorf("%q survived the host-code blanking", gone)
		}
	}
	for _, kept := range []string{"__global__ void layernorm_forward_kernel(", "__device__ inline float warp_sum", "typedef __nv_bfloat16 floatX;", "#define CUDA_CHECK"} {
		if !strings.Contains(code, kept) {
			t.Errorf("%q was blanked", kept)
		}
	}
	for i, l := range want {
		if strings.TrimSpace(lines[i]) != "" && lines[i] != l {
			t.Errorf("line %d changed:\n got %q\nwant %q", i+1, lines[i], l)
		}
	}
	got := injectionsOf(f, "cuda")
	for name, how := range map[string]string{"ENABLE_BF16": "macro", "floatX": "declared", "B": "constexpr", "T": "constexpr", "C": "constexpr", "WG": "unused"} {
		if got[name] != how {
			t.Errorf("%s: %s, want %s", name, got[name], how)
		}
	}
	for _, h := range []string{"stdio.h", "stdlib.h", "math.h", "cuda_runtime.h"} {
		if prog.Includes[h] == "" {
			t.Errorf("%s is not served as a stub", h)
		}
	}
	if _, ok := prog.Includes["cuda_bf16.h"]; ok {
		t.Error("cuda_bf16.h is stubbed although the toolkit has it")
	}
}

// Metal keeps macros only where the source tests a name, and declares the
// rest as program-scope constants; nothing is blanked or stubbed.
func TestPrepareMetal(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\n#ifndef WG\n#define WG 32\n#endif\nconstant int rows = 3;\nkernel void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& n_rows [[buffer(2)]], constant int& cols [[buffer(3)]]) { Y[0] = X[0]; }\n"
	prog, f, path := metalPreparedProgram(t, "mtl", src)
	golden(t, "metal", prog, filepath.Dir(path))
	got := injectionsOf(f, "metal")
	for name, how := range map[string]string{"WG": "macro", "rows": "declared", "cols": "constexpr", "T": "constexpr"} {
		if got[name] != how {
			t.Errorf("%s: %s, want %s", name, got[name], how)
		}
	}
	// cols is k's parameter: check's note says the declaration is hidden,
	// not that it reaches the kernel; T, which the parameters' types name,
	// is not hidden
	for _, in := range f.Injections("metal") {
		switch {
		case in.Name == "cols" && (!in.Hidden || in.HiddenIn != "k" || !strings.Contains(in.String(), "hidden inside the kernel by its parameter cols (k)")):
			t.Errorf("cols: %+v: %s", in, in)
		case in.Name == "T" && in.Hidden:
			t.Errorf("T is hidden: %+v", in)
		}
	}
}

func TestInjectionString(t *testing.T) {
	for _, c := range []struct {
		in   Injection
		want string
	}{
		{Injection{Name: "WG", How: InjectMacro, File: "/a/k.cu", Line: 3}, "WG: #define before k.cu:3, its first preprocessor use"},
		{Injection{Name: "WG", How: InjectMacro, File: "/a/k.cu", Line: 4, SourceWins: true}, "WG: #define before k.cu:4, where the source #defines it again without #ifndef WG: the source's value replaces the manifest's; wrap that #define in #ifndef WG … #endif, or drop WG from the manifest: its expressions may name the source's WG as it is"},
		{Injection{Name: "T", How: InjectConstexpr}, "T: declared ahead of the source (constexpr, or using for the dtype)"},
		{Injection{Name: "cols", How: InjectConstexpr, Hidden: true, HiddenIn: "row_sum"}, "cols: declared ahead of the source (constexpr), and hidden inside the kernel by its parameter cols (row_sum): the kernel reads the argument, not this value"},
		{Injection{Name: "T", How: InjectConstexpr, Hidden: true, HiddenIn: "row_softmax", HiddenByTemplate: true}, "T: declared ahead of the source (constexpr, or using for the dtype), and hidden inside the kernel by its template parameter T (row_softmax): the entry's template argument sets it there"},
		{Injection{Name: "n", How: InjectConstexpr, Hidden: true}, "n: declared ahead of the source (constexpr), and hidden by locals named n wherever the source uses it: the source reads them, not this value"},
		{Injection{Name: "WG", How: InjectDeclared, File: "/a/k.cu", Line: 1}, "WG: not injected: the source declares it (k.cu:1), so the manifest's value does not reach it"},
		{Injection{Name: "N", How: InjectUnused}, "N: not injected: the source does not use it"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestDTypeName(t *testing.T) {
	withToolkit(t)
	withT := strings.Replace(usertest.Manifest("dn"), "  cols: {default: 16}", "  cols: {default: 16}\n  T: {default: 4}", 1)
	for _, c := range []struct{ yaml, want string }{
		{withT, "T is already the dtype's name in the source: set `dtype_name: floatX`"},
		{"dtype_name: 9x\n" + usertest.Manifest("dn"), `"9x" is not a C identifier`},
		{"dtype_name: DTYPE\n" + usertest.Manifest("dn"), "DTYPE is a macro mltop defines in the source (the code of the spec's dtype): rename the dtype_name"},
		{"dtype_name: floatX\n" + usertest.Manifest("dn"), "dtype: unknown dtype \"T\""},
	} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": c.yaml, "k.cu": usertest.Source})
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// with dtype_name, T is free for a dim and buffers say floatX
	good := "dtype_name: floatX\n" + strings.ReplaceAll(withT, "dtype: T", "dtype: floatX")
	path := usertest.Write(t, map[string]string{"kernel.yaml": good, "k.cu": strings.ReplaceAll(usertest.Source, "T*", "floatX*")})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if code := p.Dispatches[0].Program.Code; !strings.Contains(code, "using floatX = float;") || strings.Contains(code, "using T =") {
		t.Errorf("dtype_name floatX:\n%s", code)
	}
	if p.Buffers[0].Type != profiler.F32 || s.Dims["T"] != 4 {
		t.Errorf("buffer %+v, dims %v", p.Buffers[0], s.Dims)
	}
}

// mltop_user.cuh, which no folder holds, reaches the compiler as mltop's
// header (to_f32, from_f32), not as an empty stub for an unknown system
// header: the examples written for mltop include it.
func TestMltopHeaderIsNotStubbed(t *testing.T) {
	f, err := Load("../../examples/softmax/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16}.WithDefaults(f.Schema())
	p, err := f.Plan(s, profiler.DeviceInfo{Backend: "cuda", Name: "test", MaxThreadsPerGroup: 1024, TGMPerGroup: 48 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Dispatches[0].Program.Includes[cudaHeaderName]; !strings.Contains(h, "to_f32") {
		t.Errorf("%s reaches the compiler as %q", cudaHeaderName, h)
	}
}

// A name only host code mentions is unused: the host code is blanked, so a
// constexpr for it would reach nothing (and a host global of that name does
// not count as the source declaring it).
func TestPrepareHostOnlyMentionsAreUnused(t *testing.T) {
	withToolkit(t)
	src := "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0]; }\n" +
		"static int WG = 3;\nint main() { int n = WG * 2; k<<<1, 1>>>(0, 0, n, n); return 0; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("hostonly"), "k.cu": src})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	how := map[string]InjectHow{}
	for _, in := range f.Injections("cuda") {
		how[in.Name] = in.How
	}
	if how["WG"] != InjectUnused || how["T"] != InjectConstexpr {
		t.Errorf("WG %s (want unused: only host code names it), T %s (want constexpr)", how["WG"], how["T"])
	}
}

// A knob the source #defines (or #undefs) with no #ifndef of its own name
// before it is replaced by the source's value: the injection says so, and
// so do the plan's notes, since the compiler only warns.
func TestPrepareSourceRedefinesKnob(t *testing.T) {
	withToolkit(t)
	const kern = "__global__ void k(const T* X, T* Y, int rows, int cols) { __shared__ float s[WG]; Y[0] = s[0]; }\n"
	for _, c := range []struct {
		name, head string
		wins       bool
		line       int
	}{
		{"plain define", "#define WG 1024\n", true, 1},
		{"guarded by ifndef", "#ifndef WG\n#define WG 1024\n#endif\n", false, 1},
		{"guarded by if !defined", "#if !defined(WG)\n#define WG 1024\n#endif\n", false, 1},
		{"undef then define", "#undef WG\n#define WG 32\n", true, 1},
		{"guarded by another name", "#ifdef FAST\n#define WG 512\n#endif\n", true, 2},
		{"tested only", "#if WG > 128\n#define BIG 1\n#endif\n", false, 1},
		{"dead define, then a test", "#if 0\n#define WG 8\n#endif\n#if WG\n#endif\n", false, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("redefined"), "k.cu": c.head + kern})
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var wg Injection
			for _, in := range f.Injections("cuda") {
				if in.Name == "WG" {
					wg = in
				}
			}
			if wg.How != InjectMacro || wg.Line != c.line || wg.SourceWins != c.wins {
				t.Fatalf("WG: %+v, want a macro before line %d with SourceWins %v", wg, c.line, c.wins)
			}
			p, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), cudaDev)
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(p.Notes, "\n")
			said := strings.Contains(notes, "the source's value replaces the manifest's")
			if said != c.wins {
				t.Errorf("plan notes name the redefinition: %v, want %v:\n%s", said, c.wins, notes)
			}
		})
	}
}
