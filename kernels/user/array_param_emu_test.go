package user

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// broadcastAddMetal is written in the style of MLX's binary_g kernels: the
// strides are array-declarator parameters (`constant const int64_t
// a_strides[2]`), which Metal, like C, passes as pointers. Each thread
// adds one element of a [rows, cols] a and a b broadcast by its strides.
const broadcastAddMetal = `#include <metal_stdlib>
using namespace metal;

template <typename T>
[[kernel]] void bcast_add(
    device const T* a,
    device const T* b,
    device T* c,
    constant const int shape[2],
    constant const int64_t a_strides[2],
    constant const int64_t b_strides[2],
    uint gid [[thread_position_in_grid]]) {
  if (gid >= uint(shape[0] * shape[1])) {
    return;
  }
  int64_t i = gid / shape[1], j = gid % shape[1];
  c[gid] = a[i * a_strides[0] + j * a_strides[1]] + b[i * b_strides[0] + j * b_strides[1]];
}

template [[host_name("bcast_add_float32")]] [[kernel]] decltype(bcast_add<float>) bcast_add<float>;
`

const broadcastAddYAML = `name: t_bcast_add
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  WG: {values: [32, 64], default: 32}
dims:
  rows: {default: 9}
  cols: {default: 13}
buffers:
  - {name: a, shape: [rows, cols]}
  - {name: b, shape: [cols]}
  - {name: c, shape: [rows, cols], out: true}
dispatches:
  - entry: bcast_add_float32
    grid: ["cdiv(rows * cols, WG)"]
    threads: WG
    args: [a, b, c, [rows, cols], [cols, 1], [0, 1]]
check: {python: ref.py}
`

const broadcastAddRef = `def reference(inputs, dims):
    return {"c": inputs["a"] + inputs["b"][None, :]}
`

// Array-declarator parameters take array values and run on the MSL
// emulation; b's strides are what broadcast it, so strides of a
// non-broadcast b read out of range rows and mismatch.
func TestArrayDeclaratorParamsOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, args string
		want       profiler.Status
	}{
		{"broadcast strides", "[0, 1]]", profiler.StatusOK},
		{"b read as a matrix", "[0, 0]]", profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(broadcastAddYAML, "[0, 1]]", c.args, 1)
			y = strings.Replace(y, "t_bcast_add", "t_bcast_add_"+strings.ReplaceAll(c.name, " ", "_"), 1)
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": y, "s.metal": broadcastAddMetal, "ref.py": broadcastAddRef}, map[string]int{"WG": 32}, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

// An array value for an array-declarator parameter has the declared
// length; a scalar in its place is refused as for any constant pointer.
func TestArrayDeclaratorLengthChecked(t *testing.T) {
	for _, c := range []struct {
		name, to string
		want     []string
	}{
		{"three for [2]", "[cols, 1, 0], [0, 1]]", []string{"args[4]", "array value [cols, 1, 0] has 3 elements", "a_strides", "declared [2]: give 2"}},
		{"one for [2]", "[cols, 1], [1]]", []string{"args[5]", "has 1 elements", "b_strides"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(broadcastAddYAML, "[cols, 1], [0, 1]]", c.to, 1)
			if y == broadcastAddYAML {
				t.Fatal("test setup: args moved")
			}
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": broadcastAddMetal, "ref.py": broadcastAddRef}))
			errorSays(t, err, c.want)
		})
	}
}

// runOnEmulator loads the manifest and sources in files, installs the
// family and runs one f32 spec of it (knobs and dims over the defaults)
// on the MSL emulation eb.
func runOnEmulator(t *testing.T, eb *mslemu.Backend, files map[string]string, knobs, dims map[string]int) profiler.Result {
	t.Helper()
	f, err := Load(usertest.Write(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(f); err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Knobs: knobs}.WithDefaults(f.Schema())
	maps.Copy(s.Dims, dims)
	return run.NewRunner(eb).Run(context.Background(), s, mslemu.Options(), nil)
}
