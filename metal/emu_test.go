package metal_test

import (
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The Metal kernels' source text, compiled with g++ against a CPU
// emulation of the MSL subset they use (testdata/mslemu), driven through
// the real run.Runner: the family's Plan, this package's scalar
// packing and source assembly, the seeded inputs and the float64
// reference. It proves the tile logic, masks, buffer order, scalar layout
// and macros on Linux; it cannot prove the Metal compiler accepts the text
// or the hardware's fragment layout (see mltop_common.h).

func TestMetalKernelsOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	opt := mslemu.Options()
	type tc struct {
		name   string
		spec   profiler.Spec
		native bool // bf16 through the __HAVE_BFLOAT__ branch
	}
	attn := func(dt profiler.DType, causal bool, bq, bk, wm, wn, lq, lk, d, h, hkv int) profiler.Spec {
		return profiler.Spec{Kernel: "attn_fwd", DType: dt,
			Knobs: map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn},
			Dims:  map[string]int{"B": 1, "H": h, "Hkv": hkv, "Lq": lq, "Lk": lk, "D": d},
			Flags: map[string]bool{"causal": causal}}
	}
	cases := []tc{
		{"attn f32 GQA ragged WN=1", attn(profiler.F32, false, 16, 16, 2, 1, 40, 56, 64, 2, 1), false},
		{"attn f16 causal WN=2", attn(profiler.F16, true, 32, 16, 2, 2, 24, 40, 64, 2, 2), false},
		{"attn bf16 causal Lq>Lk masked rows D=96", attn(profiler.BF16, true, 16, 16, 1, 2, 40, 24, 96, 1, 1), false},
		{"attn bf16 native bfloat WN=2", attn(profiler.BF16, false, 16, 16, 2, 2, 33, 47, 64, 2, 1), true},
		{"attn f16 WN=4 D=128", attn(profiler.F16, false, 8, 32, 1, 4, 20, 70, 128, 3, 3), false},
		{"attn f32 WM=8 causal Lq>Lk", attn(profiler.F32, true, 64, 16, 8, 1, 70, 33, 64, 1, 1), false},
		{"softmax_bwd f32 WG=64", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 5, "cols": 300}}, false},
		{"softmax_bwd bf16 WG=256", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 3, "cols": 1000}}, false},
		{"softmax_bwd bf16 native WG=32", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 4, "cols": 77}}, true},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eb.NativeBF16 = c.native
			// A runner per case: its kernel cache does not know about NativeBF16.
			mslemu.Check(t, run.NewRunner(eb), c.spec, opt)
		})
	}
}
