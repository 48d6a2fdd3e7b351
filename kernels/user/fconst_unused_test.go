package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// weightedRowsMetal keeps, as MLX's norm files do, a forward kernel and a
// backward one in one file, instantiated by a host-name macro; only the
// backward kernel reads the function constant has_w.
const weightedRowsMetal = `#include <metal_stdlib>
using namespace metal;

constant bool has_w [[function_constant(20)]];

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

template <typename T>
[[kernel]] void weighted_rows(
    const device T* x,
    const device T* w,
    device T* out,
    constant uint& cols,
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]]) {
  if (lid < cols) {
    out[gid * cols + lid] = x[gid * cols + lid] * w[lid];
  }
}

template <typename T>
[[kernel]] void vjp_weighted_rows(
    const device T* g,
    const device T* w,
    device T* gx,
    constant uint& cols,
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]]) {
  if (lid < cols) {
    gx[gid * cols + lid] = has_w ? g[gid * cols + lid] * w[lid] : g[gid * cols + lid];
  }
}

instantiate_kernel("weighted_rowsfloat32", weighted_rows, float)
instantiate_kernel("vjp_weighted_rowsfloat32", vjp_weighted_rows, float)
`

// weightedRowsHelpers is weightedRowsMetal with a helper and a global
// that read has_w, which no kernel uses yet.
var weightedRowsHelpers = strings.Replace(weightedRowsMetal, "#define instantiate_kernel",
	"inline float w_or_one(float v) { return has_w ? v : 1.0f; }\nconstant bool weighted = has_w;\n\n#define instantiate_kernel", 1)

const weightedRowsYAML = `name: t_weighted_rows
sources: {metal: s.metal}
dtypes: [f32]
dims:
  rows: {default: 3}
  cols: {default: 40}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: w, dtype: f32, shape: [cols]}
  - {name: out, dtype: f32, shape: [rows, cols], out: true}
dispatches:
  - {entry: weighted_rowsfloat32, grid: [rows], threads: [64], args: [x, w, out, cols]}
check: {python: ref.py}
`

const weightedRowsRef = `def reference(inputs, dims):
    return {"out": inputs["x"] * inputs["w"]}
`

// A function constant that only kernels no dispatch launches read needs
// no value (MLX launches rms_single_row without has_w, which only its vjp
// kernels read), nor one only their helpers read (ggml's mul_mv helpers);
// one that the launched kernel reads, or a helper or global it uses,
// still does. The file, vjp kernel included, compiles and runs on the emulator.
func TestFunctionConstantOfAnotherKernel(t *testing.T) {
	for _, c := range []struct {
		name, file, from, to, want string
	}{
		{"read only by the vjp kernel", "", "", "", ""},
		{"the dispatch launches the vjp kernel", "kernel.yaml", "entry: weighted_rowsfloat32", "entry: vjp_weighted_rowsfloat32",
			"declares function constant has_w (bool, index 20) but constants: gives it no value"},
		{"the launched kernel reads it", "s.metal", "* w[lid];\n  }\n}\n\ntemplate", "* (has_w ? w[lid] : T(1));\n  }\n}\n\ntemplate",
			"declares function constant has_w"},
		{"a helper the launched kernel calls reads it", "s.metal", "* w[lid];\n  }\n}\n\ntemplate",
			"* w_or_one(w[lid]);\n  }\n}\n\ntemplate", "declares function constant has_w"},
		{"a helper only the vjp kernel calls reads it", "s.metal", "g[gid * cols + lid] * w[lid] : g",
			"g[gid * cols + lid] * w_or_one(w[lid]) : g", ""},
		{"a global the launched kernel reads is set from it", "s.metal", "* w[lid];\n  }\n}\n\ntemplate",
			"* (weighted ? w[lid] : T(1));\n  }\n}\n\ntemplate", "declares function constant has_w"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"kernel.yaml": weightedRowsYAML, "s.metal": weightedRowsHelpers, "ref.py": weightedRowsRef}
			if c.file != "" {
				if !strings.Contains(files[c.file], c.from) {
					t.Fatalf("test setup: %q not in %s", c.from, c.file)
				}
				files[c.file] = strings.Replace(files[c.file], c.from, c.to, 1)
			}
			_, err := Load(usertest.Write(t, files))
			if c.want == "" && err != nil {
				t.Fatalf("want it to load: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestFunctionConstantOfAnotherKernelOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	files := map[string]string{"kernel.yaml": weightedRowsYAML, "s.metal": weightedRowsMetal, "ref.py": weightedRowsRef}
	if res := runOnEmulator(t, eb, files, nil, nil); res.Status != profiler.StatusOK {
		t.Fatalf("status %s (error %q) %+v", res.Status, res.Error, res.Verdict)
	}
}
