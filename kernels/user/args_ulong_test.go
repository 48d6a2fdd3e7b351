package user

import (
	"slices"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// Metal's ulong (MLX's rbitsc takes `constant const ulong& bytes_per_key`)
// is a 64-bit unsigned scalar, as size_t is; a plain char* takes a u8
// buffer (its bytes).
func TestMetalULongScalar(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
kernel void bytes(device const uint* keys [[buffer(0)]], device char* out [[buffer(1)]],
                  constant const bool& odd [[buffer(2)]], constant const ulong& bytes_per_key [[buffer(3)]],
                  uint2 index [[thread_position_in_grid]]) {
  out[index.x * bytes_per_key] = char(keys[index.x] + odd);
}
`
	m := `name: ulong_arg
sources: {metal: k.metal}
dims:
  K: {default: 8}
  nb: {default: 3000}
buffers:
  - {name: keys, dtype: u32, shape: [K], init: arange}
  - {name: out, dtype: u8, shape: [K], out: true}
dispatches:
  - {entry: bytes, grid: [K], threads: [1], args: [keys, out, "K > 4", nb]}
check: none
`
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.metal": src}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), metalDev)
	if err != nil {
		t.Fatal(err)
	}
	want := []profiler.Scalar{{Name: "odd", Kind: profiler.ScalarBool, I: 1}, {Name: "bytes_per_key", Kind: profiler.ScalarU64, I: 3000}}
	if got := p.Dispatches[0].Scalars; !slices.Equal(got, want) {
		t.Errorf("scalars %+v, want %+v", got, want)
	}
}
