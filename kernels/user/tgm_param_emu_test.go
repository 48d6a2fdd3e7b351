package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// groupSumMetal is a tree reduction over a `threadgroup float*
// [[threadgroup(0)]]` parameter (threadgroup memory set at dispatch, not a
// static array), with its length read from a u64 buffer.
const groupSumMetal = `#include <metal_stdlib>
using namespace metal;

kernel void group_sum(device const int* X [[buffer(0)]],
                      device const ulong* len [[buffer(1)]],
                      device long* sums [[buffer(2)]],
                      threadgroup float* part [[threadgroup(0)]],
                      uint gid [[thread_position_in_grid]],
                      uint group [[threadgroup_position_in_grid]],
                      uint tid [[thread_position_in_threadgroup]],
                      uint nt [[threads_per_threadgroup]]) {
    part[tid] = gid < len[0] ? X[gid] : 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = nt / 2; s > 0; s >>= 1) {
        if (tid < s) part[tid] += part[tid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) sums[group] = long(part[0]);
}
`

const groupSumYAML = `name: t_group_sum
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  WG: {values: [32, 64], default: 64}
dims:
  N: {default: 300}
buffers:
  - {name: X, dtype: i32, shape: [N], init: "randint(-100, 100)"}
  - {name: len, dtype: u64, shape: [1], init: "randint(N, N + 1)"}
  - {name: sums, dtype: i64, shape: ["cdiv(N, WG)"], out: true}
dispatches:
  - {entry: group_sum, grid: ["cdiv(N, WG)"], threads: WG, args: [X, len, sums], dynamic_tgm: "WG * 4"}
check: {python: ref.py}
`

const groupSumRef = `import numpy as np

def reference(inputs, dims):
    x, wg = inputs["X"], dims["WG"]
    assert int(inputs["len"][0]) == dims["N"], inputs["len"]
    pad = np.zeros(-len(x) % wg)
    return {"sums": np.concatenate([x, pad]).reshape(-1, wg).sum(axis=1)}
`

// A [[threadgroup(0)]] parameter gets, per group on the emulator, the
// dispatch's dynamic_tgm bytes; without dynamic_tgm the run fails saying
// so; a kernel that drops a partial sum is a mismatch.
func TestThreadgroupParameterOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, from, to string
		wg             int
		want           profiler.Status
		err            string
	}{
		{"ok", "", "", 64, profiler.StatusOK, ""},
		{"ok at 32 threads", "", "", 32, profiler.StatusOK, ""},
		{"drops a partial sum", "part[tid] += part[tid + s];", "part[tid] += s > 1 ? part[tid + s] : 0;", 64, profiler.StatusMismatch, ""},
		{"no dynamic_tgm", `, dynamic_tgm: "WG * 4"`, "", 64, profiler.StatusError, "give the dispatch dynamic_tgm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, yaml := groupSumMetal, strings.Replace(groupSumYAML, "t_group_sum", "t_group_sum_"+strings.ReplaceAll(c.name, " ", "_"), 1)
			if strings.Contains(src, c.from) && c.from != "" {
				src = strings.Replace(src, c.from, c.to, 1)
			} else if c.from != "" {
				yaml = strings.Replace(yaml, c.from, c.to, 1)
			}
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": yaml, "s.metal": src, "ref.py": groupSumRef}, map[string]int{"WG": c.wg}, nil)
			if res.Status != c.want || !strings.Contains(res.Error, c.err) {
				t.Fatalf("status %s, want %s (error %q, want it to say %q) %+v", res.Status, c.want, res.Error, c.err, res.Verdict)
			}
		})
	}
}
