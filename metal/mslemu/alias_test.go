package mslemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// aliasKernels read one buffer bound at two indices the way ggml's
// soft_max does (`src1 != src0 ? … : nullptr`: an absent mask is the
// input bound again) and write a buffer through one name that they read
// through another (an in-place update bound as input and output).
const aliasKernels = `kernel void addmask(device const float* x, device const float* m, device float* out,
                    uint i [[thread_position_in_grid]]) {
  device const float* pm = m != x ? m : nullptr;
  out[i] = x[i] + (pm ? pm[i] : 100.0f);
}

kernel void scale_in_place(device const float* src, device float* dst, device float* again,
                           uint i [[thread_position_in_grid]]) {
  dst[i] = 2.0f * src[i];
  again[i] += 1.0f;
}
`

const aliasYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {N: {default: 64}}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: m, dtype: f32, shape: [N]}
  - {name: out, dtype: f32, shape: [N], out: true}
  - {name: y, dtype: f32, shape: [N], init: "normal(0, 1)", inout: true}
dispatches:
  - {entry: addmask, grid: [2], threads: [32], args: [x, MASK, out]}
  - {entry: scale_in_place, grid: [2], threads: [32], args: [y, y, y]}
check: {python: ref.py}
`

const aliasRef = `import numpy as np

def reference(inputs, dims):
    x = inputs["x"]
    return {"out": x + MASK, "y": 2 * inputs["y"] + 1}
`

// A buffer named at several indices of one dispatch is one memory on the
// emulation, as on Metal: the kernel's pointers compare equal, and what
// it writes through one name it reads through the other. The emulation
// used to give each index its own copy, so ggml's soft_max with no mask
// (src0 bound at src1's and src2's indices too) added exp(src0[0] - max)
// to every row's sum, and an in-place update read back the unchanged copy.
func TestBufferBoundTwiceIsOneMemory(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	cases := []struct {
		name, mask, want string
	}{
		{"mask_absent", "x", "100"},
		{"mask_given", "m", `inputs["m"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runFiles(t, eb, map[string]string{
				"kernel.yaml": strings.NewReplacer("NAME", "t_emu_alias_"+c.name, "MASK", c.mask).Replace(aliasYAML),
				"k.metal":     aliasKernels, "ref.py": strings.Replace(aliasRef, "MASK", c.want, 1)})
			if res.Status != profiler.StatusOK {
				t.Fatalf("status %s, want ok: %s %+v", res.Status, res.Error, res.Verdict)
			}
		})
	}
}
