package user

import (
	"context"
	"path/filepath"
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
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": strings.Replace(shuffleYAML, "t_shuffle", "t_shuffle_"+c.name, 1), "s.metal": src, "ref.py": shuffleRef}, nil, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

// partialRedMetal reduces each 16-thread group (one simdgroup of 16 lanes)
// by shuffles: s = the sum of x, m = the max of int(1000·x). Its broken
// twins start at offset 16, written for a full simdgroup: on Metal lanes
// 16..31 of a 16-lane group hold undefined values.
const partialRedMetal = `#include <metal_stdlib>
using namespace metal;

kernel void red(device const float* x [[buffer(0)]], device float* s [[buffer(1)]], device float* m [[buffer(2)]],
                uint i [[thread_position_in_grid]], uint g [[threadgroup_position_in_grid]],
                uint lane [[thread_index_in_simdgroup]]) {
  float v = x[i];
  int k = int(x[i] * 1000.0f);
  for (ushort d = 8; d > 0; d /= 2) v += simd_shuffle_down(v, d);
  for (ushort d = 8; d > 0; d /= 2) k = max(k, simd_shuffle_xor(k, d));
  if (lane == 0) {
    s[g] = v;
    m[g] = float(k);
  }
}
`

// partialRedNaive is the reference: lane 0 of each group loops over it.
const partialRedNaive = `#include <metal_stdlib>
using namespace metal;

kernel void red(device const float* x [[buffer(0)]], device float* s [[buffer(1)]], device float* m [[buffer(2)]],
                uint g [[threadgroup_position_in_grid]], uint lane [[thread_index_in_threadgroup]]) {
  if (lane != 0) return;
  float v = 0.0f;
  int k = int(x[g * 16] * 1000.0f);
  for (uint j = 0; j < 16; j++) {
    v += x[g * 16 + j];
    k = max(k, int(x[g * 16 + j] * 1000.0f));
  }
  s[g] = v;
  m[g] = float(k);
}
`

const partialRedYAML = `name: t_partial_red
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 256}
rules: ["N % 16 == 0"]
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: s, dtype: f32, shape: ["N / 16"], out: true}
  - {name: m, dtype: f32, shape: ["N / 16"], out: true}
dispatches:
  - {entry: red, grid: ["N / 16"], threads: 16, args: [x, s, m]}
check: {kernel: ../naive/kernel.yaml}
`

// A shuffle in a partial simdgroup that reads past the group's width gets
// the emulation's poison (NaN for floats, 0x5A5A5A5A for ints), so a
// reduction written for 32 lanes run in a 16-thread group is caught, even
// a max, which the caller's own value would have left right; the one that
// stays inside the group passes.
func TestMetalPartialSimdgroupShuffleOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name     string
		from, to string
		want     profiler.Status
		nan      bool // the sum reads a NaN
	}{
		{"ok", "", "", profiler.StatusOK, false},
		{"shuffle_ok", "simd_shuffle_xor(k, d)", "simd_shuffle(k, ushort(lane ^ d))", profiler.StatusOK, false},
		{"sum_down_from_16", "ushort d = 8; d > 0; d /= 2) v", "ushort d = 16; d > 0; d /= 2) v", profiler.StatusMismatch, true},
		{"max_xor_from_16", "ushort d = 8; d > 0; d /= 2) k", "ushort d = 16; d > 0; d /= 2) k", profiler.StatusMismatch, false},
		{"max_shuffle_from_16", "(ushort d = 8; d > 0; d /= 2) k = max(k, simd_shuffle_xor(k, d))", "(ushort d = 16; d > 0; d /= 2) k = max(k, simd_shuffle(k, ushort(lane ^ d)))", profiler.StatusMismatch, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := partialRedMetal
			if c.from != "" {
				if !strings.Contains(src, c.from) {
					t.Fatalf("the kernel has no %q", c.from)
				}
				src = strings.Replace(src, c.from, c.to, 1)
			}
			naive := strings.Replace(strings.Replace(partialRedYAML, "t_partial_red", "t_partial_red_naive_"+c.name, 1), "{kernel: ../naive/kernel.yaml}", "none", 1)
			root := filepath.Dir(usertest.Write(t, map[string]string{
				"fast/kernel.yaml": strings.Replace(partialRedYAML, "t_partial_red", "t_partial_red_"+c.name, 1), "fast/s.metal": src,
				"naive/kernel.yaml": naive, "naive/s.metal": partialRedNaive,
			}))
			f, err := Load(filepath.Join(root, "fast", "kernel.yaml"))
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
			if c.nan != (res.Verdict.NaNInf > 0) {
				t.Errorf("%d NaN/Inf outputs, want NaN: %v: %s", res.Verdict.NaNInf, c.nan, res.Error)
			}
		})
	}
}
