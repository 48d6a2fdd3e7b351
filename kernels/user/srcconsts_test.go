package user

import (
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// constsSource is a whole program whose launch geometry lives in its own
// macros and constants (as gpu-mode's reduce_coarsening.cu keeps it).
const constsSource = `#include "sizes.h"
#define BLOCK_DIM 1024
#define COARSE_FACTOR 2
#define SHIFT (1 << 3)
constexpr int kThreads = 128;
constexpr int kTwice = kThreads * 2;
#if 0
#define DEAD 5
#endif
__global__ void reduce(const float* in, float* out, int n, int per) {
    __shared__ float input_s[BLOCK_DIM];
}
int main() { return 0; }
`

// constsHeader is a local header with more of them.
const constsHeader = `#pragma once
#define VEC 4
static const unsigned kTile{8};
`

// constsManifest uses the constants in every kind of expression.
const constsManifest = `name: srcconsts
sources: {cuda: k.cu}
dims:
  size: {default: 65536}
values: {span: "BLOCK_DIM * COARSE_FACTOR"}
rules: ["size % span == 0", "size >= kTwice"]
buffers:
  - {name: in, dtype: f32, shape: ["size"]}
  - {name: out, dtype: f32, shape: ["cdiv(size, span) * VEC"], out: true}
dispatches:
  - entry: reduce
    grid: ["cdiv(size, span)", kTile, 1]
    threads: [kThreads, 1, 1]
    tgm: [{name: input_s, bytes: "BLOCK_DIM * 4"}]
    dynamic_tgm: "SHIFT * 4"
    args: [in, out, size, "COARSE_FACTOR + 1"]
work: {flops: "size * VEC", bytes: "4 * size + kTile"}
check: none
`

func TestSourceConstantsInExpressions(t *testing.T) {
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": constsManifest, "k.cu": constsSource, "sizes.h": constsHeader}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	if d.Grid != [3]int{32, 8, 1} || d.Group != [3]int{128, 1, 1} || d.DynamicTGM != 32 {
		t.Errorf("grid %v threads %v dynamic_tgm %d; want [32 8 1] [128 1 1] 32", d.Grid, d.Group, d.DynamicTGM)
	}
	if len(d.TGM) == 0 || d.TGM[0].Name != "input_s" || d.TGM[0].Bytes != 4096 {
		t.Errorf("tgm %+v; want input_s 4096 bytes", d.TGM)
	}
	if len(d.Scalars) != 2 || d.Scalars[1].I != 3 {
		t.Errorf("scalars %+v; want per = COARSE_FACTOR + 1 = 3", d.Scalars)
	}
	if p.Buffers[1].Elems != 128 {
		t.Errorf("out has %d elements; want cdiv(65536, 2048) * 4 = 128", p.Buffers[1].Elems)
	}
	if p.FLOPs != 65536*4 || p.Bytes != 4*65536+8 {
		t.Errorf("work %v flops %v bytes", p.FLOPs, p.Bytes)
	}
	s.Dims["size"] = 4096 + 1024
	if err := f.Validate(s, cudaDev); err == nil || !strings.Contains(err.Error(), "size % span == 0") {
		t.Errorf("rule over a source constant not held: %v", err)
	}
	var got []string
	for _, c := range f.SourceConstants() {
		got = append(got, c.String())
	}
	want := "BLOCK_DIM = 1024 (k.cu:2), COARSE_FACTOR = 2 (k.cu:3), kTwice = 256 (k.cu:6), VEC = 4 (sizes.h:2), kTile = 8 (sizes.h:3), kThreads = 128 (k.cu:5), SHIFT = 8 (k.cu:4)"
	if strings.Join(got, ", ") != want {
		t.Errorf("SourceConstants\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// A rule's lower bound from a source constant holds like any other.
func TestSourceConstantRuleBound(t *testing.T) {
	y := strings.Replace(constsManifest, `"size % span == 0", `, "", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": constsSource, "sizes.h": constsHeader}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	s.Dims["size"] = 128
	if err := f.Validate(s, cudaDev); err == nil || !strings.Contains(err.Error(), "size >= kTwice") {
		t.Errorf("size 128 below kTwice 256: %v", err)
	}
}

// The manifest's names win over the source's: a knob, a value and a
// define of a name the source #defines take the manifest's value.
func TestManifestNamesWinOverSource(t *testing.T) {
	src := "#ifndef BLOCK\n#define BLOCK 256\n#endif\n#define EXTRA 7\n__global__ void k(float* y, int n) {}\n"
	y := `name: wins
sources: {cuda: k.cu}
knobs: {BLOCK: {values: [64, 128], default: 64}}
values: {EXTRA: 3}
buffers: [{name: y, dtype: f32, shape: [BLOCK], out: true}]
dispatches: [{entry: k, grid: [1], threads: [BLOCK], args: [y, EXTRA]}]
check: none
`
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": src}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Dispatches[0].Group[0]; g != 64 || p.Dispatches[0].Scalars[0].I != 3 {
		t.Errorf("threads %d, n %v: want the knob's 64 and the value's 3", g, p.Dispatches[0].Scalars[0].I)
	}
	if c := f.SourceConstants(); len(c) != 0 {
		t.Errorf("source constants used: %v; want none (the manifest's names win)", c)
	}
}

// A constant in a namespace, with its qualifier after the type and a
// sizeof in its value (torchvision's nms: `int const threadsPerBlock =
// sizeof(unsigned long long) * 8;` in vision::ops's anonymous namespace),
// is the source's constant like one at file scope.
func TestSourceConstantInNamespace(t *testing.T) {
	src := "namespace vision {\nnamespace ops {\nnamespace {\nint const kBlock = sizeof(unsigned long long) * 8;\n}\n}\n}\n" + usertest.Source
	y := strings.Replace(usertest.Manifest("nsconst"), "grid: [rows]", "grid: [kBlock]", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": src}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Dispatches[0].Grid[0]; g != 64 {
		t.Errorf("grid %d; want kBlock = sizeof(unsigned long long) * 8 = 64", g)
	}
}

// A source name without one integer value is refused where an expression
// uses it, naming it, its definitions and the fix; a name the source only
// defines in dead code, or #undefs, is unknown.
func TestSourceConstantsRefused(t *testing.T) {
	for _, c := range []struct {
		name, src, use string
		want           []string
	}{
		{"ambiguous under #if", "#ifdef FAST\n#define COARSE 4\n#else\n#define COARSE 2\n#endif\n", "COARSE",
			[]string{"kernel.yaml:14:", "COARSE in grid[0] 'COARSE' is the source's", "k.cu:2 (#define COARSE 4), k.cu:4 (#define COARSE 2)", "write the number, or declare COARSE in the manifest (a knob, which the source takes where it reads it under #ifndef COARSE; or values: {COARSE: N} for the expressions alone)"}},
		{"const redefined in branches", "#if X\nconstexpr int N = 4;\n#else\nconstexpr int N = 8;\n#endif\n", "N",
			[]string{"N in grid[0]", "k.cu:2 (constexpr int N = 4;), k.cu:4 (constexpr int N = 8;)", "with different values"}},
		{"float constexpr", "constexpr float kScale = 0.5f;\n", "kScale",
			[]string{"kScale is not an integer constant (k.cu:1 (constexpr float kScale = 0.5f;)): it is of type float", "or values: {kScale: N}"}},
		{"float macro", "#define EPS 1e-5f\n", "EPS", []string{"its value \"1e-5f\" is not an integer constant expression", "k.cu:1 (#define EPS 1e-5f)"}},
		{"function-like macro", "#define WIDTH(x) ((x) * 4)\n", "WIDTH", []string{"WIDTH is a function-like macro"}},
		{"empty macro", "#define USE_FAST\n", "USE_FAST", []string{"USE_FAST is defined without a value"}},
		{"array", "constexpr int kSizes[] = {1, 2};\n", "kSizes", []string{"it is an array"}},
		{"depends on a knob", "#define SPAN (WG * 2)\n", "SPAN", []string{"it uses WG, a name of the manifest, so write the expression with WG itself"}},
		{"depends on an ambiguous one", "#ifdef A\n#define C 1\n#else\n#define C 2\n#endif\n#define D (C * 4)\n", "D", []string{"it uses C, which the source defines more than once"}},
		{"undef", "#define GONE 4\n#undef GONE\n", "GONE", []string{"unknown name 'GONE'"}},
		{"dead", "#if 0\n#define DEAD 4\n#endif\n", "DEAD", []string{"unknown name 'DEAD'"}},
		{"two namespaces, two values", "namespace a { constexpr int kN = 4; }\nnamespace b { constexpr int kN = 8; }\n", "kN",
			[]string{"k.cu:1 (constexpr int kN = 4;), k.cu:2 (constexpr int kN = 8;)", "with different values"}},
		{"mutable global", "int kN = 4;\n", "kN", []string{"unknown name 'kN'"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(usertest.Manifest("refused"), "grid: [rows]", "grid: ["+c.use+"]", 1)
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": c.src + usertest.Source}))
			errorSays(t, err, c.want)
		})
	}
}

func TestConstInit(t *testing.T) {
	for _, c := range []struct {
		text, name, want string
		ok               bool
	}{
		{"constexpr int kThreads = 128;", "kThreads", "128", true},
		{"static const unsigned kTile{8};", "kTile", "8", true},
		{"const int N(4);", "N", "4", true},
		{"__device__ constexpr long long kBig = 1LL << 40;", "kBig", "1LL << 40", true},
		{"constant uint kWidth = 32;", "kWidth", "32", true},
		{"constexpr int kSpan = BLOCK * (2 + 1);", "kSpan", "BLOCK * (2 + 1)", true},
		{"const float eps = 1e-5f;", "eps", "\x00of type float", true},
		{"constexpr int table[] = {1, 2};", "table", "\x00an array", true},
		{"const char* name = \"x\";", "name", "\x00of type char *", true},
		{"int N = 4;", "N", "", false},
		{"extern const int N;", "N", "", false},
		{"template <int B> constexpr int twice = B * 2;", "twice", "", false},
		{"constexpr int", "x", "", false},
	} {
		got, ok := constInit(c.text, c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("constInit(%q) = %q, %v; want %q, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// FuzzConstInit: any declaration text reads without panicking, and a
// declaration it accepts as an integer gives a non-empty initializer.
func FuzzConstInit(f *testing.F) {
	for _, s := range []string{"constexpr int k = 1;", "static const unsigned t{8};", "const int n(", "const float e = 1.f;", "constexpr int a[] = {1};", "const", "const int k = ;", "const int k {"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, name := range []string{"k", "t", "n", "e", "a"} {
			got, ok := constInit(text, name)
			if ok && strings.TrimSpace(got) == "" {
				t.Errorf("constInit(%q, %q) accepted an empty initializer", text, name)
			}
		}
	})
}

// FuzzSourceConsts: any source reads without panicking, and a name that
// gets a value has exactly one value text, which evaluates to it.
func FuzzSourceConsts(f *testing.F) {
	for _, s := range []string{constsSource, constsHeader, "#ifdef A\n#define C 1\n#else\n#define C 2\n#endif\n#define D (C*4)\n", "#define A B\n#define B A\n", "constexpr int x = y; constexpr int y = x;", "#define X(a) a\n#undef X\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		u := &unit{path: "k.cu", code: src, scan: csrc.Scan(src)}
		for name, c := range collectSourceConsts([][]*unit{{u}}, map[string]bool{"WG": true}) {
			if c.resolve().why != "" {
				continue
			}
			if distinct := slices.Compact(slices.Sorted(slices.Values(c.init))); len(distinct) != 1 {
				t.Errorf("%s = %d from %d value texts %q", name, c.value, len(distinct), distinct)
			}
		}
	})
}

// A global's extent that is a knob the source defaults under #ifndef takes
// the knob's value, not the source's default: no size error when the knob
// moves (the extent is the manifest's name, so the static check gives up).
func TestSymbolExtentKnobNotSourceDefault(t *testing.T) {
	src := "#ifndef TILE\n#define TILE 4\n#endif\n__constant__ float c_tab[TILE];\n__global__ void k(float* y) {}\n"
	y := `name: knob_extent
sources: {cuda: k.cu}
knobs: {TILE: {values: [4, 8], default: 4}}
buffers:
  - {name: y, dtype: f32, shape: [TILE], out: true}
  - {name: c_tab, symbol: true, dtype: f32, shape: [TILE]}
dispatches: [{entry: k, grid: [1], threads: [32], args: [y]}]
check: none
`
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": src}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Knobs: map[string]int{"TILE": 8}}.WithDefaults(f.Schema())
	if _, err := f.Plan(s, cudaDev); err != nil {
		t.Errorf("TILE=8: %v", err)
	}
}

// A Metal source's file-scope `constant` integers and macros are usable too.
func TestSourceConstantsMetal(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\n#define VEC 4\nconstant int kWidth = 64;\nkernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {}\n"
	y := `name: metal_consts
sources: {metal: k.metal}
buffers: [{name: y, dtype: f32, shape: ["kWidth * VEC"], out: true}]
dispatches: [{entry: k, grid: [VEC], threads: [kWidth], args: [y]}]
check: none
`
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.metal": src}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), metalDev)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Dispatches[0]; d.Grid[0] != 4 || d.Group[0] != 64 || p.Buffers[0].Elems != 256 {
		t.Errorf("grid %v threads %v elems %d; want 4, 64, 256", d.Grid, d.Group, p.Buffers[0].Elems)
	}
}
