package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// twinCU overloads one kernel name by its pointer types; two more
// overloads differ in a scalar's type alone, which the buffers cannot
// choose between.
const twinCU = `#include <cuda_fp16.h>
__global__ void twice(__half* v, const float* w, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = __float2half(w[i] * __half2float(v[i])); }
__global__ void twice(float* v, const float* w, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = w[i] * v[i]; }
__global__ void same(float* v, int n) {}
__global__ void same(float* v, unsigned n) {}
`

const twinYAML = `name: t_twins
sources: {cuda: k.cu}
dtypes: DTYPES
dims:
  N: {default: 100}
buffers:
  - {name: v, dtype: T, shape: [N], inout: true, init: "normal(0, 1)"}
  - {name: w, dtype: f32, shape: [N]}
dispatches:
  - {entry: ENTRY, grid: ["cdiv(N, 32)"], threads: [32], args: ARGS}
check: none
`

func twinFamily(t *testing.T, dtypes, entry, args string) (string, *Family, error) {
	t.Helper()
	y := strings.NewReplacer("DTYPES", dtypes, "ENTRY", entry, "ARGS", args).Replace(twinYAML)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": twinCU})
	f, err := Load(path)
	return path, f, err
}

// Each dtype takes the overload whose pointers accept its buffers; the
// entry is cast to that overload's type.
func TestOverloadByPointerType(t *testing.T) {
	_, f, err := twinFamily(t, "[f32, f16, bf16]", "twice", "[v, w, N]")
	if err != nil {
		t.Fatal(err)
	}
	for dt, want := range map[profiler.DType]string{
		profiler.F32: "(void(*)(float*, const float*, int))twice",
		profiler.F16: "(void(*)(__half*, const float*, int))twice",
	} {
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema()), cudaDev)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		if got := p.Dispatches[0].Program.Entry; got != want {
			t.Errorf("%s: entry %q, want %q", dt, got, want)
		}
	}
	_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.BF16}.WithDefaults(f.Schema()), cudaDev)
	if err == nil || !strings.Contains(err.Error(), "at bf16 no overload of twice takes these buffers (v bf16, w f32)") || !strings.Contains(err.Error(), "drop bf16 from dtypes") {
		t.Errorf("bf16: %v, want it to say no overload takes a bf16 v", err)
	}
}

func TestOverloadStillAmbiguous(t *testing.T) {
	for _, c := range []struct{ dtypes, entry, args, want string }{
		// the buffers do not choose: a scalar's type differs
		{"[f32]", "same", "[v, N]", "same is ambiguous: 2 overloads take as many arguments (line 4: same(float* v, int n); line 5: same(float* v, unsigned n))"},
		// no dtype's buffers fit either overload
		{"[f16]", "twice", "[w, v, N]", "twice is ambiguous"},
	} {
		_, _, err := twinFamily(t, c.dtypes, c.entry, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "rename one") {
			t.Errorf("%s %s: %v, want %q", c.entry, c.args, err, c.want)
		}
	}
}

// NVRTC resolves the cast name expression to each overload (where NVRTC
// is found; it skips elsewhere).
func TestOverloadCompilesWithNVRTC(t *testing.T) {
	path, _, err := twinFamily(t, "[f32, f16]", "twice", "[v, w, N]")
	if err != nil {
		t.Fatal(err)
	}
	checkCompiles(t, path, profiler.F32, "(void(*)(float*")
	checkCompiles(t, path, profiler.F16, "(void(*)(__half*")
}
