package user

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// shuffleMetal reads other lanes of full 32-lane simdgroups with a
// different value in every lane, so that each collective's lane
// arithmetic shows in y: simd_shuffle_down (the top delta lanes keep their
// own value), simd_shuffle_up (the bottom delta lanes keep theirs),
// simd_shuffle_xor and simd_broadcast_first.
const shuffleMetal = `#include <metal_stdlib>
using namespace metal;

kernel void shuf(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  float v = x[i];
  float d = simd_shuffle_down(v, 3);
  float u = simd_shuffle_up(v, 2);
  float s = simd_shuffle_xor(v, 5);
  float b = simd_broadcast_first(v + float(lane));
  y[i] = d + 2.0f * u + 4.0f * s + 8.0f * b;
}
`

const shuffleYAML = `name: t_shuffle
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 128}
rules: ["N % 32 == 0"]
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: shuf, grid: ["N / 32"], threads: 32, args: [x, y]}
check: {python: ref.py}
`

const shuffleRef = `import numpy as np

def reference(inputs, dims):
    x = inputs["x"].reshape(-1, 32)
    lane = np.arange(32)
    d = np.where(lane + 3 < 32, x[:, np.minimum(lane + 3, 31)], x)
    u = np.where(lane >= 2, x[:, np.maximum(lane - 2, 0)], x)
    s = x[:, lane ^ 5]
    b = np.repeat(x[:, :1], 32, axis=1)
    return {"y": (d + 2 * u + 4 * s + 8 * b).reshape(-1)}
`

// The MSL emulation's lane-reading simdgroup functions against NumPy: right
// as written; a kernel that shuffles by the wrong delta, or wrong way, is a
// mismatch (so an emulation that returned the caller's own value, or read
// the wrong lane, fails the first case).
func TestMetalShufflesOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name     string
		from, to string
		want     profiler.Status
	}{
		{"ok", "", "", profiler.StatusOK},
		{"down_by_two", "simd_shuffle_down(v, 3)", "simd_shuffle_down(v, 2)", profiler.StatusMismatch},
		{"up_not_down", "simd_shuffle_up(v, 2)", "simd_shuffle_down(v, 2)", profiler.StatusMismatch},
		{"xor_four", "simd_shuffle_xor(v, 5)", "simd_shuffle_xor(v, 4)", profiler.StatusMismatch},
		{"broadcast_own", "simd_broadcast_first(v + float(lane))", "(v + float(lane))", profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := shuffleMetal
			if c.from != "" {
				src = strings.Replace(src, c.from, c.to, 1)
			}
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(shuffleYAML, "t_shuffle", "t_shuffle_"+c.name, 1), "s.metal": src, "ref.py": shuffleRef}))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			res := run.NewRunner(eb).Run(context.Background(), s, mslemu.Options(), nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
