//go:build linux

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// symbolKernel reads three globals that host code would fill with
// cudaMemcpyToSymbol: a file-scope __constant__ table, a __device__ array
// in a namespace (a mangled name) and a static __constant__ (internal
// linkage).
const symbolKernel = `__constant__ float c_scale[4];
namespace tabs { __device__ float offs[4]; }
static __constant__ float c_bias[2];
__global__ void apply(float* out, const float* x) {
	int i = threadIdx.x;
	if (i < 4) out[i] = c_scale[i] * x[i] + tabs::offs[i] + c_bias[1];
}
`

func TestWriteSymbolOnGPU(t *testing.T) {
	b := openOrSkip(t)
	k, err := b.Compile(profiler.Program{Source: "apply", File: "apply.cu", Code: symbolKernel, Entry: "apply"})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	upload := func(vals ...float32) profiler.Buffer {
		buf, err := b.Alloc(int64(4 * len(vals)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Free(buf) })
		raw := make([]byte, 4*len(vals))
		profiler.F32.Encode(raw, vals)
		if err := b.Upload(buf, raw); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	var w profiler.SymbolWriter = b
	for sym, vals := range map[string][]float32{"c_scale": {1, 2, 3, 4}, "tabs::offs": {10, 20, 30, 40}, "c_bias": {0, 0.5}} {
		if err := w.WriteSymbol(k, sym, upload(vals...)); err != nil {
			t.Errorf("WriteSymbol(%s): %v", sym, err)
		}
	}
	x, out := upload(1, 1, 2, 2), upload(0, 0, 0, 0)
	d := &profiler.Dispatch{Name: "apply", Grid: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1}, Args: []string{"out", "x"}}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{out, x}}}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 16)
	if err := b.Download(out, raw); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	profiler.F32.Decode(raw, got)
	for i, want := range []float32{11.5, 22.5, 36.5, 48.5} {
		if got[i] != want {
			t.Errorf("out[%d] = %g, want %g (scale·x + offs + bias: a global was not filled)", i, got[i], want)
		}
	}
	for _, c := range []struct {
		sym  string
		buf  profiler.Buffer
		want string
	}{
		{"c_missing", upload(1), "has no global c_missing (looked up as c_missing, _ZL9c_missing)"},
		{"c_scale", upload(1, 2, 3), "the module's global is 16 B, the buffer 12 B"},
	} {
		err := w.WriteSymbol(k, c.sym, c.buf)
		var se *profiler.SymbolError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteSymbol(%s): %v, want a SymbolError with %q", c.sym, err, c.want)
		}
	}
}
