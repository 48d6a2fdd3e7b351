package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// mixMetal takes a 2×3 matrix by a two-dimensional array declarator: each
// output row mixes the three inputs with one row of the matrix.
const mixMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void mix2x3(
    device const float* x,
    device float* y,
    constant const float m[2][3],
    uint gid [[thread_position_in_grid]]) {
  if (gid >= 2) {
    return;
  }
  y[gid] = m[gid][0] * x[0] + m[gid][1] * x[1] + m[gid][2] * x[2];
}
`

const mixYAML = `name: t_mix2x3
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  WG: {values: [32], default: 32}
buffers:
  - {name: x, shape: [3], init: "ones"}
  - {name: y, shape: [2], out: true}
dispatches:
  - entry: mix2x3
    grid: [1]
    threads: WG
    args: [x, y, [1, 2, 3, 10, 20, 30]]
check: none
`

// A multi-dimensional array parameter takes as many elements as all its
// extents give (2 × 3), not its first extent's.
func TestMultiDimArrayParamLength(t *testing.T) {
	for _, c := range []struct {
		name, args string
		want       []string // "" : loads
	}{
		{"six for [2][3]", "[1, 2, 3, 10, 20, 30]", nil},
		{"two for [2][3]", "[1, 2]", []string{"args[2]", "array value [1, 2] has 2 elements", "parameter m", "declared [2][3]: give 6, in row-major order"}},
		{"three for [2][3]", "[1, 2, 3]", []string{"has 3 elements", "give 6"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(mixYAML, "[1, 2, 3, 10, 20, 30]", c.args, 1)
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": mixMetal}))
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			errorSays(t, err, c.want)
		})
	}
}

// The six values reach the kernel as its 2×3 matrix on the MSL emulation:
// y = m · ones = [1+2+3, 10+20+30].
func TestMultiDimArrayParamOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": mixYAML, "s.metal": mixMetal}, map[string]int{"WG": 32}, nil)
	if res.Status != profiler.StatusUnchecked {
		t.Fatalf("status %s (error %q)", res.Status, res.Error)
	}
}
