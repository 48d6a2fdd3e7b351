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

// scalarInputsBody multiplies by a dim, a float value and (with a flag)
// clamps, all three passed as MLX passes Python scalars: 0-d inputs.
const scalarInputsBody = `uint i = thread_position_in_grid.x;
if (i < uint(inp_shape[0])) {
    float v = inp[i] * float(T) * gain;
    out[i] = relu ? max(v, 0.0f) : v;
}
`

const scalarInputsYAML = `name: t_mlx_scalars
dtypes: [f32]
dtype_name: InT
dims: {N: {default: 100}, T: {default: 3}}
flags: {relu: {default: true}}
values: {gain: 0.5}
buffers:
  - {name: inp, dtype: InT, shape: [N]}
  - {name: out, dtype: InT, shape: [N], out: true}
mlx: {body_file: body.metal, inputs: [inp, T, gain, relu], outputs: [out]}
dispatches:
  - {grid: ["cdiv(N, 32)"], threads: [32]}
check: {python: ref.py}
`

const scalarInputsRef = `import numpy as np
def reference(inputs, dims):
    v = inputs["inp"] * dims["T"] * 0.5
    return {"out": np.maximum(v, 0.0) if dims["relu"] else v}
`

func scalarInputsFiles(yaml string) map[string]string {
	return map[string]string{"kernel.yaml": yaml, "body.metal": scalarInputsBody, "ref.py": scalarInputsRef}
}

// An mlx: input that names a dim, value or flag is declared as MLX
// declares a 0-d input (`const constant int& T`, float for a float value,
// bool for a flag) in its place among the inputs, and is no buffer
// argument of the dispatch; a name that is neither a buffer nor a scalar
// is refused, saying what an input may be.
func TestMLXScalarInputs(t *testing.T) {
	f, err := Load(usertest.Write(t, scalarInputsFiles(scalarInputsYAML)))
	if err != nil {
		t.Fatal(err)
	}
	code := f.src["metal"].code
	for _, w := range []string{
		"const device float* inp [[buffer(0)]],\n  const constant int* inp_shape [[buffer(1)]],\n  const constant int& T [[buffer(2)]],\n" +
			"  const constant float& gain [[buffer(3)]],\n  const constant bool& relu [[buffer(4)]],\n  device float* out [[buffer(5)]]",
	} {
		if !strings.Contains(code, w) {
			t.Errorf("the kernel lacks\n%s\n%s", w, code)
		}
	}
	if got := f.m.Dispatches[0].Args; strings.Join(got, ",") != "inp,out" {
		t.Errorf("dispatch args %v, want [inp out]", got)
	}
	for _, c := range []struct{ input, want string }{
		{"nope", `mlx.inputs[1]: "nope" is neither a buffer (inp, out) nor a dim, knob, flag or value: an input is a buffer, or a scalar (MLX's 0-d input) declared under dims:, knobs:, flags: or values:`},
		{"InT", `"InT" is neither a buffer`},
		{"gian", `"gian" is neither a buffer (inp, out) nor a dim, knob, flag or value: did you mean gain?`},
	} {
		y := strings.Replace(scalarInputsYAML, "inputs: [inp, T,", "inputs: [inp, "+c.input+",", 1)
		_, err := Load(usertest.Write(t, scalarInputsFiles(y)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("input %s: %v, want %q", c.input, err, c.want)
		}
	}
}

// The scalars reach the kernel that runs on the emulation: at T=3 and
// T=5, with and without relu, it matches the reference (an input left
// unset would be 0 there).
func TestMLXScalarInputsOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	f, err := Load(usertest.Write(t, scalarInputsFiles(scalarInputsYAML)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(f); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t    int
		relu bool
	}{{3, true}, {5, false}} {
		s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Dims: map[string]int{"N": 100, "T": c.t}, Flags: map[string]bool{"relu": c.relu}}
		res := run.NewRunner(eb).Run(context.Background(), s.WithDefaults(f.Schema()), mslemu.Options(), nil)
		if res.Status != profiler.StatusOK {
			t.Errorf("T=%d relu=%v: status %s: %s %+v", c.t, c.relu, res.Status, res.Error, res.Verdict)
		}
	}
}
