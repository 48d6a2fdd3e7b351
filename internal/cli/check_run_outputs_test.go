package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
)

// twoOutputsMetal writes y = 2x and, per row, its first element to m.
const twoOutputsMetal = `#include <metal_stdlib>
using namespace metal;
kernel void two_outputs(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        device float* m [[buffer(2)]], constant int& cols [[buffer(3)]],
                        uint2 g [[thread_position_in_grid]]) {
  if (g.x >= uint(cols)) return;
  y[g.y * uint(cols) + g.x] = 2.0f * x[g.y * uint(cols) + g.x];
  if (g.x == 0) m[g.y] = x[g.y * uint(cols)];
}
`

const twoOutputsYAML = `name: test_two_outputs
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 8}, cols: {default: 32}}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: y, dtype: f32, shape: [rows, cols], out: true}
  - {name: m, dtype: f32, shape: [rows], out: true}
dispatches:
  - {entry: two_outputs, grid: ["cdiv(cols, 32)", rows], threads: [32, 1], args: [x, y, m, cols]}
check: {python: ref.py}
`

const twoOutputsRef = `def reference(inputs, dims):
    x = inputs["x"]
    return {"y": 2 * x, "m": x[:, 0]}
`

// check --run's summary names each output's element count when there are
// several, so that its total adds up: 8×32 of y and 8 of m.
func TestCheckRunNamesEachOutputsCount(t *testing.T) {
	needGxx(t)
	if st := pyref.Probe(t.Context()); !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	dir := t.TempDir()
	for name, text := range map[string]string{"kernel.yaml": twoOutputsYAML, "k.metal": twoOutputsMetal, "ref.py": twoOutputsRef} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, "check", "--run", "--quiet", dir)
	want := "264 elements checked in all 8 rows of y (256 elements) and all of m (8 elements) (python reference))"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want 0 and %q:\n%s\n%s", code, want, out, errs)
	}
}
