package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

var cudaDevice = profiler.DeviceInfo{Backend: "cuda", Name: "test GPU", TGMPerGroup: 48 << 10, MaxThreadsPerGroup: 1024, MemoryBytes: 80 << 30}

// symProgram is a whole program whose kernel reads the tables that decls
// declares and host code fills, each case its own way.
func symProgram(decls, reads, host string) string {
	return "#include <cuda_runtime.h>\n" + decls + `
__global__ void conv(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = in[i];
` + reads + `
    out[i] = s;
}
` + host
}

// TestScaffoldSymbols: a global that host code fills and a kernel reads
// gets a `symbol:` buffer of its element type and declared size, its init
// a TODO; a global the host does not fill gets nothing. Each manifest
// loads, and its default spec plans on CUDA, which holds each symbol
// buffer's bytes against the declaration where the source gives it.
func TestScaffoldSymbols(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want, not []string          // manifest substrings
		symbols   map[string]string // buffer → global, as the plan binds them
		planErr   string            // the default spec is invalid with this message ("": it plans)
	}{
		{name: "plain", src: symProgram("__constant__ float c_taps[9];", "    for (int k = 0; k < 9; k++) s += c_taps[k];",
			"int main() { float h[9] = {0}; cudaMemcpyToSymbol(c_taps, h, sizeof(h)); return 0; }\n"),
			want: []string{
				`- {name: c_taps, symbol: true, dtype: f32, shape: [9], init: "normal(0, 1)"}   # ` + "`__constant__ float c_taps[9]` (line 2); TODO: the host fills it (cudaMemcpyToSymbol at line 10): give the values it copies, e.g. npy:c_taps.npy",
			},
			symbols: map[string]string{"c_taps": "c_taps"}},
		{name: "namespace, filled qualified and from inside it", src: symProgram(
			"namespace tables { __constant__ float twiddle[16]; __device__ int perm[16]; }",
			"    s += tables::twiddle[i % 16] * (float)tables::perm[i % 16];",
			"void fill_tw(const float* h) { cudaMemcpyToSymbol(tables::twiddle, h, 64); }\nnamespace tables {\nvoid fill_perm(const int* h) { cudaMemcpyToSymbolAsync((const void*)&perm, h, 64, 0, cudaMemcpyHostToDevice, 0); }\n}\n"),
			want: []string{
				`- {name: twiddle, symbol: "tables::twiddle", dtype: f32, shape: [16], init: "normal(0, 1)"}`,
				`- {name: perm, symbol: "tables::perm", dtype: i32, shape: [16], init: "randint(0, 1024)"}   # ` + "`__device__ int perm[16]` (line 2); TODO: the host fills it (cudaMemcpyToSymbolAsync at line 12)",
			},
			symbols: map[string]string{"twiddle": "tables::twiddle", "perm": "tables::perm"}},
		{name: "macro-sized and constant-sized", src: symProgram(
			"#define KERNEL_RADIUS 8\n#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)\n__constant__ float c_Kernel[KERNEL_LENGTH];\nconstexpr int ROWS = 4, COLS = 2 * 3;\n__constant__ float c_grid[ROWS][COLS];",
			"    s += c_Kernel[i % KERNEL_LENGTH] + c_grid[i % 4][i % 6];",
			"void setKernel(float* h) { cudaMemcpyToSymbol(c_Kernel, h, KERNEL_LENGTH * sizeof(float)); cudaMemcpyToSymbol(c_grid, h, 96); }\n"),
			want: []string{
				`- {name: c_Kernel, symbol: true, dtype: f32, shape: [17], init: "normal(0, 1)"}   # ` + "`__constant__ float c_Kernel[KERNEL_LENGTH]` (line 4), KERNEL_LENGTH = 17; TODO: the host fills it",
				`- {name: c_grid, symbol: true, dtype: f32, shape: [4, 6], init: "normal(0, 1)"}`,
			},
			symbols: map[string]string{"c_Kernel": "c_Kernel", "c_grid": "c_grid"}},
		{name: "a global only device code writes, one no kernel reads", src: symProgram(
			"__device__ unsigned int d_count;\n__constant__ float c_unused[4];\n__constant__ float c_scale;",
			"    atomicAdd(&d_count, 1u); s *= c_scale;",
			"int main() { unsigned z = 0; float f[4]; cudaMemcpyToSymbol(c_unused, f, 16); cudaMemcpyToSymbol(c_scale, f, 4); cudaMemcpy(&z, &z, 4, cudaMemcpyDefault); return 0; }\n"),
			want:    []string{`- {name: c_scale, symbol: true, dtype: f32, shape: [1], init: "normal(0, 1)"}`},
			not:     []string{"d_count", "name: c_unused"},
			symbols: map[string]string{"c_scale": "c_scale"}},
		{name: "two tables, vectors, a dim extent, HIP's spelling", src: symProgram(
			"#define HIP_SYMBOL(x) x\n__constant__ float4 c_coef[8];\n__constant__ float c_bias[n];",
			"    s += c_coef[i % 8].x + c_bias[i];",
			"void setup(const float* a, const float* b) {\n    cudaMemcpyToSymbol(HIP_SYMBOL(c_bias), b, 4);\n    cudaMemcpyToSymbol(c_coef, a, 128);\n}\n"),
			want: []string{
				`- {name: c_bias, symbol: true, dtype: f32, shape: [n], init: "normal(0, 1)"}`,
				`- {name: c_coef, symbol: true, dtype: f32, shape: [8, 4], init: "normal(0, 1)"}   # ` + "`__constant__ float4 c_coef[8]` (line 3), float4 has 4 lanes; TODO",
			},
			symbols: map[string]string{"c_coef": "c_coef", "c_bias": "c_bias"}},
		{name: "the dtype name and an extent mltop cannot tell", src: symProgram(
			"#define SQ(x) ((x) * (x))\n__constant__ T c_w[4];\n__constant__ float c_sq[SQ(4)];",
			"    s += (float)c_w[i % 4] + c_sq[i % 16];",
			"void setup(const void* a) { cudaMemcpyToSymbol(c_w, a, 16); cudaMemcpyToSymbol(c_sq, a, 64); }\n"),
			want: []string{
				`- {name: c_w, symbol: true, dtype: T, shape: [4], init: "normal(0, 1)"}`,
				`- {name: c_sq, symbol: true, dtype: f32, shape: [1], init: "normal(0, 1)"}`,
				"TODO: the extent [SQ ( 4 )] of c_sq: mltop cannot tell its value; put it in shape",
			},
			symbols: map[string]string{"c_w": "c_w", "c_sq": "c_sq"}},
		// the manifest loads; the double table's guessed f32 buffer is
		// half its bytes, which the plan names (its TODO says so)
		{name: "a pointer global and a table of doubles", src: symProgram(
			"__device__ float* d_ptr;\n__constant__ double c_d[4];",
			"    s += d_ptr[i] + (float)c_d[i % 4];",
			"int main() { float* p = 0; double h[4]; cudaMemcpyToSymbol(d_ptr, &p, sizeof(p)); cudaMemcpyToSymbol(c_d, h, sizeof(h)); return 0; }\n"),
			want: []string{
				"  # TODO: the host fills pointer global d_ptr (cudaMemcpyToSymbol at line 11): mltop fills arrays and scalars, not pointers",
				`- {name: c_d, symbol: true, dtype: f32, shape: [4], init: "normal(0, 1)"}`, "TODO: element type double: give the dtype",
			},
			not:     []string{"name: d_ptr"},
			planErr: "which conv.cu:3 declares as `__constant__ double c_d[4]`: 4 × 8 B = 32 B, but the buffer is 4 × f32 = 16 B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_conv", SrcPath: "/w/conv.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			f := load(t, res.Text, "conv.cu", c.src)
			s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
			p, err := f.Plan(s, cudaDevice)
			if c.planErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.planErr) {
					t.Errorf("plan error %v, want %q", err, c.planErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("plan: %v\n%s", err, res.Text)
			}
			got := map[string]string{}
			for _, b := range p.SymbolBuffers() {
				got[b.Name] = b.Symbol
			}
			if len(got) != len(c.symbols) {
				t.Errorf("symbol buffers %v, want %v", got, c.symbols)
			}
			for b, sym := range c.symbols {
				if got[b] != sym {
					t.Errorf("buffer %s fills %q, want %q", b, got[b], sym)
				}
			}
		})
	}
}

// TestFilledGlobal: the spellings of a fill call's first argument that
// name a global, and the lookup through namespaces.
func TestFilledGlobal(t *testing.T) {
	globals := []*global{{name: "c_K"}, {name: "c_K", scope: "ns"}, {name: "lut", scope: "a::b"}, {name: "only", scope: "x"}}
	for _, c := range []struct {
		arg, scope string
		want       *global // nil: none
	}{
		{"c_K", "", globals[0]},
		{"(const void*)&c_K", "", globals[0]},
		{"HIP_SYMBOL(c_K)", "", globals[0]},
		{"reinterpret_cast<const void*>(&c_K)", "", globals[0]},
		{"::c_K", "", globals[0]},
		{"::c_K", "ns", globals[0]},
		{"ns::c_K", "", globals[1]},
		{"c_K", "ns", globals[1]},     // inside namespace ns, its own
		{"c_K", "ns::in", globals[1]}, // an enclosing namespace's
		{"b::lut", "", globals[2]},
		{"a::b::lut", "", globals[2]},
		{"only", "", globals[3]}, // the only global of the name (a using directive)
		{"lut", "", globals[2]},
		{"h_K", "", nil},
		{"ns::lut", "", nil},
	} {
		toks := csrc.Tokenize("f(" + c.arg + ", h, 4)")
		if got := filledGlobal(firstArg(toks, 1), c.scope, globals); got != c.want {
			t.Errorf("%s in %q: got %+v, want %+v", c.arg, c.scope, got, c.want)
		}
	}
}

// TestScaffoldSymbolsRealistic: the repository's constant-table example,
// and the cuda-samples layout (the extent's macros in a local header, the
// setter an extern "C" function), each gets its c_Kernel buffer and loads.
func TestScaffoldSymbolsRealistic(t *testing.T) {
	example, err := os.ReadFile("../../../examples/constant_table/convolution.cu")
	if err != nil {
		t.Fatal(err)
	}
	header := "#pragma once\n#define KERNEL_RADIUS 8\n#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)\n"
	split := `#include "common.h"
__constant__ float c_Kernel[KERNEL_LENGTH];
__global__ void rows(float* d_Dst, const float* d_Src, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0;
    for (int k = 0; k < KERNEL_LENGTH; k++) s += c_Kernel[k] * d_Src[x + k];
    d_Dst[x] = s;
}
extern "C" void setConvolutionKernel(float* h_Kernel) {
    cudaMemcpyToSymbol(c_Kernel, h_Kernel, KERNEL_LENGTH * sizeof(float));
}
`
	for _, c := range []struct {
		name, src, want string
	}{
		{"examples/constant_table", string(example), `- {name: c_Kernel, symbol: true, dtype: f32, shape: [17], init: "normal(0, 1)"}   # ` +
			"`__constant__ float c_Kernel[KERNEL_LENGTH]` (line 15), KERNEL_LENGTH = 17; TODO: the host fills it (cudaMemcpyToSymbol at line 34)"},
		{"a local header, an extern \"C\" setter", split, `- {name: c_Kernel, symbol: true, dtype: f32, shape: [17], init: "normal(0, 1)"}   # ` +
			"`__constant__ float c_Kernel[KERNEL_LENGTH]` (line 2), KERNEL_LENGTH = 17; TODO: the host fills it (cudaMemcpyToSymbol at line 10)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(path string) ([]byte, error) {
				if filepath.Base(path) == "common.h" {
					return []byte(header), nil
				}
				return nil, os.ErrNotExist
			}
			res, err := Manifest(Request{Name: "my_conv", SrcPath: "/w/conv.cu", Src: c.src, Dir: "/w", Read: read})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, c.want) {
				t.Errorf("manifest lacks %q:\n%s", c.want, res.Text)
			}
			checkNotesHaveTODOs(t, res)
			path := usertest.Write(t, map[string]string{"kernel.yaml": res.Text, "conv.cu": c.src, "common.h": header})
			f, err := user.Load(path)
			if err != nil {
				t.Fatalf("the scaffold does not load: %v\n%s", err, res.Text)
			}
			if syms := f.Symbols(); len(syms) != 1 || syms[0].Symbol != "c_Kernel" || !syms[0].SizeKnown {
				t.Errorf("symbols %+v, want c_Kernel with its size known", syms)
			}
			if _, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), cudaDevice); err != nil {
				t.Errorf("plan: %v", err)
			}
		})
	}
}

// manifestSays checks that the manifest text has every line of want and
// none of not.
func manifestSays(t *testing.T, text string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, text)
		}
	}
	for _, w := range not {
		if strings.Contains(text, w) {
			t.Errorf("manifest has %q:\n%s", w, text)
		}
	}
}
