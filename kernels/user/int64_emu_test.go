package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// gatherMetal reads 64-bit indices (Metal's long) and writes 64-bit
// unsigned results (ulong), as an embedding lookup that also records
// which rows it read.
const gatherMetal = `#include <metal_stdlib>
using namespace metal;

kernel void gather64(device float* out [[buffer(0)]],
                     device ulong* picked [[buffer(1)]],
                     device const float* table [[buffer(2)]],
                     device const long* ids [[buffer(3)]],
                     constant int& C [[buffer(4)]],
                     uint i [[thread_position_in_grid]]) {
    long row = ids[i / C];
    out[i] = table[row * C + i % C];
    if (i % C == 0) picked[i / C] = (ulong)row * 3ul + 1ul;
}
`

const gatherMetalYAML = `name: t_gather64
sources: {metal: g.metal}
dtypes: [f32]
dims:
  N: {default: 6}
  V: {default: 40}
  C: {default: 4}
buffers:
  - {name: out, dtype: f32, shape: [N, C], out: true}
  - {name: picked, dtype: u64, shape: [N], out: true}
  - {name: table, dtype: f32, shape: [V, C]}
  - {name: ids, dtype: i64, shape: [N], init: "randint(0, V)"}
dispatches:
  - {entry: gather64, grid: [N], threads: [C], args: [out, picked, table, ids, C]}   # one thread per element: the kernel has no bound test
check: {python: ref.py}
`

const gatherRef = `import numpy as np

def reference(inputs, dims):
    ids = inputs["ids"]
    assert ids.dtype == np.int64, ids.dtype
    assert ids.min() >= 0 and ids.max() < dims["V"], (ids, dims["V"])
    return {"out": inputs["table"][ids], "picked": ids * 3 + 1}
`

// i64 and u64 buffers end to end on the MSL emulation: generated below V,
// uploaded as 8-byte integers, sent to Python as int64, the u64 output
// downloaded and compared; a kernel that writes the wrong integers is a
// mismatch.
func TestInt64BuffersOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, edit string
		dims       map[string]int
		want       profiler.Status
	}{
		{"ok", "", nil, profiler.StatusOK},
		{"ok on a small vocabulary", "", map[string]int{"V": 3, "N": 17}, profiler.StatusOK},
		{"wrong integers", "* 3ul + 1ul", nil, profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := gatherMetal
			if c.edit != "" {
				src = strings.Replace(src, c.edit, "* 3ul + 2ul", 1)
			}
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": strings.Replace(gatherMetalYAML, "t_gather64", "t_gather64_"+strings.ReplaceAll(c.name, " ", "_"), 1), "g.metal": src, "ref.py": gatherRef}, nil, c.dims)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
