package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// symSource is a whole program in the convolution style: tables in
// constant and global memory that main() fills with cudaMemcpyToSymbol.
const symSource = `#include <cuda_runtime.h>
#include <stdio.h>
#define KERNEL_RADIUS 2
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
__constant__ float c_Kernel[KERNEL_LENGTH];
__constant__ T c_T[4];
__constant__ float c_Unknown[FROM_ELSEWHERE];
namespace tables {
__device__ float twiddle[L];
}
__device__ float* d_ptr;
__shared__ float s_tile[32];
float h_table[4];
__global__ void conv(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float s = 0;
    for (int k = 0; k < KERNEL_LENGTH; k++) s += c_Kernel[k] * inp[(i + k) % N];
    out[i] = s + tables::twiddle[i % L];
}
int main() {
    float h[KERNEL_LENGTH] = {0};
    cudaMemcpyToSymbol(c_Kernel, h, sizeof(h));
    return 0;
}
`

const symYAML = `name: t_conv
sources: {cuda: conv.cu}
dtypes: [f32]
dims:
  N: {default: 64}
  L: {default: 8}
buffers:
  - {name: out, dtype: f32, shape: [N], out: true}
  - {name: inp, dtype: f32, shape: [N]}
  - {name: c_Kernel, symbol: true, dtype: f32, shape: [5], init: "uniform(-1, 1)"}
  - {name: tw, symbol: "tables::twiddle", dtype: f32, shape: [L]}
dispatches:
  - {entry: conv, grid: ["cdiv(N, 32)"], threads: [32], args: [out, inp, N]}
check: none
`

func loadSym(t *testing.T, yaml string, files map[string]string) (*Family, error) {
	t.Helper()
	all := map[string]string{"kernel.yaml": yaml, "conv.cu": symSource}
	for k, v := range files {
		all[k] = v
	}
	return Load(usertest.Write(t, all))
}

func TestSymbolBufferPlan(t *testing.T) {
	f, err := loadSym(t, symYAML, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range p.SymbolBuffers() {
		got[b.Name] = b.Symbol
		if b.Role != profiler.In || !b.Init.Generated() {
			t.Errorf("%s: role %s init %s, want a generated input", b.Name, b.Role, b.Init)
		}
	}
	if got["c_Kernel"] != "c_Kernel" || got["tw"] != "tables::twiddle" || len(got) != 2 {
		t.Errorf("symbol buffers %v, want c_Kernel → c_Kernel, tw → tables::twiddle", got)
	}
	if args := p.Dispatches[0].Args; strings.Join(args, ",") != "out,inp" {
		t.Errorf("dispatch args %v: a symbol buffer is no argument", args)
	}
	if p.Bytes != 2*64*4 {
		t.Errorf("default bytes %v, want %d (out and inp; the globals are not traffic)", p.Bytes, 2*64*4)
	}
	if note := strings.Join(p.Notes, "\n"); !strings.Contains(note, "but c_Kernel, tw, module globals") {
		t.Errorf("notes do not say the globals are left out:\n%s", note)
	}
	// With work.bytes the user's count stands.
	f, err = loadSym(t, symYAML+"work: {bytes: \"2 * N * 4 + 5 * 4\"}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = f.Plan(s, cudaDev); err != nil || p.Bytes != 2*64*4+20 {
		t.Errorf("work.bytes: %v %v", p.Bytes, err)
	}
}

func TestSymbolBufferRefused(t *testing.T) {
	sub := func(old, new string) string {
		if !strings.Contains(symYAML, old) {
			t.Fatalf("test setup: %q not in the manifest", old)
		}
		return strings.Replace(symYAML, old, new, 1)
	}
	kern := `shape: [5], init: "uniform(-1, 1)"}`
	for _, c := range []struct {
		name  string
		yaml  string
		files map[string]string
		want  []string
	}{
		{"out", sub(kern, "shape: [5], out: true}"), nil, []string{"buffers[c_Kernel].symbol", "c_Kernel fills the module global c_Kernel before the launches", "drop `out: true`"}},
		{"inout", sub(kern, kern[:len(kern)-1]+", inout: true}"), nil, []string{"drop `inout: true`"}},
		{"scratch", sub(kern, kern[:len(kern)-1]+", scratch: true}"), nil, []string{"buffers[c_Kernel].symbol", "c_Kernel is scratch (reset before every launch) and fills the module global c_Kernel, which is written once per spec and never reset", "drop `scratch: true`"}},
		{"in args", sub("args: [out, inp, N]", "args: [out, c_Kernel, N]"), nil, []string{"dispatches[0].args[1]", "c_Kernel fills the module global c_Kernel (symbol:), so no parameter takes it", "drop it from args"}},
		{"not declared", sub("symbol: true", "symbol: c_Kern"), nil, []string{"kernel.yaml:10:", "the CUDA source declares no global c_Kern (its globals: c_Kernel, c_T, c_Unknown, tables::twiddle, d_ptr, s_tile)", "declare `__constant__ float c_Kern[N];` at file scope", "give `symbol:` the name the source uses"}},
		{"wrong namespace", sub(`"tables::twiddle"`, `"other::twiddle"`), nil, []string{"declares no global other::twiddle", "declare `namespace other { __constant__ float twiddle[N]; }` at file scope"}},
		{"nested namespace", sub(`"tables::twiddle"`, `"a::b::twiddle"`), nil, []string{"declares no global a::b::twiddle", "declare `namespace a::b { __constant__ float twiddle[N]; }` at file scope"}},
		{"host variable", sub("symbol: true", "symbol: h_table"), nil, []string{"h_table (conv.cu:13) is a host variable, which mltop blanks"}},
		{"shared", sub("symbol: true", "symbol: s_tile"), nil, []string{"s_tile (conv.cu:12) is __shared__"}},
		{"pointer", sub("symbol: true", "symbol: d_ptr"), nil, []string{"d_ptr (conv.cu:11) is a pointer", "pass the buffer as a kernel argument"}},
		{"not a name", sub("symbol: true", `symbol: "c Kernel"`), nil, []string{`"c Kernel" is not a C++ name`}},
		{"a number", sub("symbol: true", "symbol: 3"), nil, []string{"buffers[c_Kernel].symbol", "write `symbol: true`"}},
		{"yes", sub("symbol: true", "symbol: yes"), nil, []string{"buffers[c_Kernel].symbol", `"yes" reads as the name of a global`, "write `symbol: true`"}},
		{"metal only", sub("sources: {cuda: conv.cu}", "sources: {metal: conv.metal}"), map[string]string{"conv.metal": "kernel void conv(device float* out [[buffer(0)]], device const float* inp [[buffer(1)]], constant int& N [[buffer(2)]]) {}\n"},
			[]string{"Metal has no module globals that the host fills", "pass c_Kernel as a `constant` buffer argument"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadSym(t, c.yaml, c.files)
			errorSays(t, err, c.want)
		})
	}
}

// The declared size is checked when each spec is planned, where the source
// gives it: literal extents, the source's own macros, names mltop gives it,
// the dtype name.
func TestSymbolBufferDeclaredSize(t *testing.T) {
	for _, c := range []struct {
		name, old, new string
		dims           map[string]int
		want           string // "" plans
	}{
		{"macro extent", `shape: [5]`, `shape: [4]`, nil, "buffer c_Kernel fills c_Kernel, which conv.cu:5 declares as `__constant__ float c_Kernel[KERNEL_LENGTH]`: 5 × 4 B = 20 B, but the buffer is 4 × f32 = 16 B: make the buffer's shape and dtype match"},
		{"macro extent the manifest uses too", `shape: [5]`, `shape: ["KERNEL_LENGTH - 1"]`, nil, "declares as `__constant__ float c_Kernel[KERNEL_LENGTH]`: 5 × 4 B = 20 B, but the buffer is 4 × f32 = 16 B"},
		{"dtype differs", `dtype: f32, shape: [5]`, `dtype: f16, shape: [5]`, nil, "5 × 4 B = 20 B, but the buffer is 5 × f16 = 10 B"},
		{"dim extent", `shape: [L]}`, `shape: ["L + 1"]}`, nil, "tables::twiddle, which conv.cu:9 declares as `__device__ float twiddle[L]`: 8 × 4 B = 32 B, but the buffer is 9 × f32 = 36 B for L=8"},
		{"dim extent other value", `shape: [L]}`, `shape: [L]}`, map[string]int{"L": 16}, ""},
		{"dtype name", `symbol: true`, `symbol: c_T`, nil, "c_T, which conv.cu:6 declares as `__constant__ T c_T[4]`: 4 × 4 B = 16 B, but the buffer is 5 × f32 = 20 B"},
		{"unknown extent: the backend checks", `symbol: true`, `symbol: c_Unknown`, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := loadSym(t, strings.Replace(symYAML, c.old, c.new, 1), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), Dims: c.dims}.WithDefaults(f.Schema())
			_, err = f.Plan(s, cudaDev)
			if c.want == "" {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("plan error %v\nwant %q", err, c.want)
			}
		})
	}
}

// With both sources, the Metal plan is refused and the CUDA one plans.
func TestSymbolBufferOnMetal(t *testing.T) {
	y := strings.Replace(symYAML, "sources: {cuda: conv.cu}", "sources: {cuda: conv.cu, metal: conv.metal}", 1)
	f, err := loadSym(t, y, map[string]string{"conv.metal": "kernel void conv(device float* out [[buffer(0)]], device const float* inp [[buffer(1)]], constant int& N [[buffer(2)]]) {}\n"})
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	if _, err := f.Plan(s, metalDev); err == nil || !strings.Contains(err.Error(), "Metal has no module globals that the host fills: run it on CUDA") {
		t.Errorf("metal plan: %v", err)
	}
	if _, err := f.Plan(s, cudaDev); err != nil {
		t.Errorf("cuda plan: %v", err)
	}
}

// rows: independent slices the buffers whose leading extent is the
// outputs', but never a global: every row reads the whole table.
func TestSymbolBufferNotRowSliced(t *testing.T) {
	y := strings.Replace(symYAML, "check: none", "check: {python: ref.py, rows: independent}", 1)
	y = strings.Replace(y, `shape: [L]}`, `shape: [N]}`, 1)
	f, err := loadSym(t, y, map[string]string{"ref.py": "def reference(inputs, dims):\n    return {}\n"})
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	e, err := f.env(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.pyCall(e, s.DType, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, pb := range c.bufs {
		if want := pb.b.name == "inp" || pb.b.name == "out"; pb.rowed != want {
			t.Errorf("%s: rowed %v, want %v", pb.b.name, pb.rowed, want)
		}
	}
}

// examples/constant_table and its broken twin load and plan with the tap
// table as a module global, not an argument, and the size the source
// declares (KERNEL_LENGTH through two macros) agrees with the buffer's.
func TestConstantTableExample(t *testing.T) {
	for _, dir := range []string{"constant_table", "constant_table_broken"} {
		f, err := Load("../../examples/" + dir + "/kernel.yaml")
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
		p, err := f.Plan(s, cudaDev)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if b, ok := p.Buffer("c_Kernel"); !ok || b.Symbol != "c_Kernel" || b.Elems != 17 || b.Role != profiler.In {
			t.Errorf("%s: c_Kernel %+v, want a 17-element input filling c_Kernel", dir, b)
		}
		if args := strings.Join(p.Dispatches[0].Args, ","); args != "dst,src" {
			t.Errorf("%s: buffer args %s", dir, args)
		}
		if syms := f.Symbols(); len(syms) != 1 || !syms[0].SizeKnown || syms[0].Line != 15 {
			t.Errorf("%s: symbols %+v", dir, syms)
		}
	}
}

// rows: independent slices a buffer by its leading dimension's name, not
// its value: at tokens == hidden (4096 each, vLLM's rms_norm shape), the
// weight of [hidden] is sent whole beside outputs of [tokens, hidden].
func TestRowsIndependentByLeadingDim(t *testing.T) {
	y := `name: t_rows_lead
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  tokens: {default: 64}
  hidden: {default: 64}
buffers:
  - {name: out, dtype: f32, shape: [tokens, hidden], out: true}
  - {name: inp, dtype: f32, shape: [tokens, hidden]}
  - {name: weight, dtype: f32, shape: [hidden]}
  - {name: pos, dtype: i32, shape: [tokens], init: "randint(0, 4)"}
dispatches:
  - {entry: k, grid: [tokens], threads: [32], args: [out, inp, weight, pos, hidden]}
check: {python: ref.py, rows: independent}
`
	src := "__global__ void k(float* out, const float* inp, const float* weight, const int* pos, int hidden) {}\n"
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": src, "ref.py": "def reference(inputs, dims):\n    return {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	e, err := f.env(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.pyCall(e, s.DType, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, pb := range c.bufs {
		if want := pb.b.name != "weight"; pb.rowed != want {
			t.Errorf("%s: rowed %v, want %v", pb.b.name, pb.rowed, want)
		}
	}
}
