package user

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

func replaceOnce(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

// examples/metal_constants: the host-name entry, the function constants
// per spec, and the manifest errors around them.
func TestMetalConstantsManifest(t *testing.T) {
	f, err := Load(twin(t, "../../examples/metal_constants", "fc_good", ManifestName, func(s string) string { return s + "\n" }))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), Knobs: map[string]int{"UNROLL": 8}, Flags: map[string]bool{"relu": false}}.WithDefaults(f.Schema())
	p, err := f.Plan(s, emuDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	want := []profiler.FunctionConstant{{Name: "UNROLL", Index: 1, Kind: profiler.ConstInt, I: 8}, {Name: "use_relu", Index: 0, Kind: profiler.ConstBool, I: 0}}
	if !reflect.DeepEqual(d.Program.Constants, want) {
		t.Errorf("constants %+v, want %+v", d.Program.Constants, want)
	}
	if strings.Contains(d.Program.Code, "#define UNROLL") || strings.Contains(d.Program.Code, "#define use_relu") {
		t.Errorf("a function constant is also defined as a macro:\n%s", d.Program.Code[:200])
	}
	if d.Program.Entry != "bias_act" || !reflect.DeepEqual(d.Scalars, []profiler.Scalar{profiler.I32Param("rows", 4096), profiler.I32Param("cols", 4096)}) {
		t.Errorf("entry %s, scalars %+v", d.Program.Entry, d.Scalars)
	}

	for _, c := range []struct {
		name, file string
		edit       func(string) string
		want       string
	}{
		{"constant not given", ManifestName, replaceOnce("  use_relu: relu\n", ""), "declares function constant use_relu (bool, index 0) but constants: gives it no value"},
		{"constant not declared", ManifestName, replaceOnce("  use_relu: relu\n", "  use_relu: relu\n  BQ: 64\n"), "has no function constant BQ (it declares use_relu, UNROLL)"},
		{"bool from an int", ManifestName, replaceOnce("use_relu: relu", "use_relu: UNROLL"), "use_relu is declared bool"},
		{"entry missing", ManifestName, replaceOnce("entry: bias_act\n", "entry: bias_ac\n"), "no kernel \"bias_ac\" (kernels found: bias_act_impl, bias_act)"},
		{"scalar count", ManifestName, replaceOnce("args: [x, bias, y, rows, cols]", "args: [x, bias, y, rows]"), "unbound `constant int& cols`"},
		{"scalar to a buffer", ManifestName, replaceOnce("args: [x, bias, y, rows, cols]", "args: [x, bias, rows, y, cols]"), "\"rows\" goes to parameter `device T* y`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(twin(t, "../../examples/metal_constants", "fc_bad", c.file, c.edit))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}

	// A constant the source gives a default for may be left out.
	path := twin(t, "../../examples/metal_constants", "fc_default", "bias_act.metal", replaceOnce("constant int UNROLL [[function_constant(1)]];",
		"constant int UNROLL [[function_constant(1)]];\nconstant int EXTRA [[function_constant(2)]];\nconstant int extra_or_one = is_function_constant_defined(EXTRA) ? EXTRA : 1;"))
	if _, err := Load(path); err != nil {
		t.Errorf("a constant with a default in the source: %v", err)
	}

	// A value out of the declared type's range is refused when planned.
	f, err = Load(twin(t, "../../examples/metal_constants", "fc_range", ManifestName, replaceOnce("UNROLL: UNROLL", `UNROLL: "UNROLL * 1000000000"`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Plan(s, emuDev); err == nil || !strings.Contains(err.Error(), "UNROLL (int) = 8000000000 is out of range") {
		t.Errorf("out of range: %v", err)
	}
}

// examples/mlx_body: the written kernel per spec, its #line into the body,
// the shape scalars, and the manifest errors around mlx:.
func TestMLXManifest(t *testing.T) {
	path := twin(t, "../../examples/mlx_body", "mlx_good", ManifestName, func(s string) string { return s + "\n" })
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F16, Dims: map[string]int{"rows": 3, "cols": 5}}.WithDefaults(f.Schema())
	p, err := f.Plan(s, emuDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	body := strings.Replace(path, ManifestName, "gelu_body.metal", 1)
	for _, w := range []string{
		"template <typename T>\n[[kernel]] void custom_kernel_mlx_good_mlx_gelu(",
		"const device half* inp [[buffer(0)]]", "const constant int* inp_shape [[buffer(1)]]", "device half* out [[buffer(2)]]",
		fmt.Sprintf("#line 1 %q\n// The body of an MLX", body),
		"[[host_name(\"mlx_good_mlx_gelu\")]] [[kernel]] decltype(custom_kernel_mlx_good_mlx_gelu<half>)",
	} {
		if !strings.Contains(d.Program.Code, w) {
			t.Errorf("the written kernel lacks %q:\n%s", w, d.Program.Code)
		}
	}
	if strings.Contains(d.Program.Code, "#define T ") {
		t.Errorf("T is defined as a macro over the template's parameter")
	}
	wantSc := []profiler.Scalar{profiler.I32Param("inp_shape[0]", 3), profiler.I32Param("inp_shape[1]", 5)}
	if d.Program.Entry != "mlx_good_mlx_gelu" || d.Args[0] != "inp" || d.Args[1] != "out" || !reflect.DeepEqual(d.Scalars, wantSc) {
		t.Errorf("entry %s args %v scalars %+v", d.Program.Entry, d.Args, d.Scalars)
	}

	// An inline body's #line points at the manifest's line after `body: |`.
	inline := replaceOnce("  body_file: gelu_body.metal\n", "  body: |\n    uint i = thread_position_in_grid.x;\n    if (i < uint(inp_shape[0] * inp_shape[1])) out[i] = inp[i];\n")
	f, err = Load(twin(t, "../../examples/mlx_body", "mlx_inline", ManifestName, inline))
	if err != nil {
		t.Fatal(err)
	}
	p, err = f.Plan(s, emuDev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Dispatches[0].Program.Code, "kernel.yaml\"\nuint i = thread_position_in_grid.x;") || !strings.Contains(p.Dispatches[0].Program.Code, "#line 12 ") { // the line after `body: |`
		t.Errorf("inline body's #line:\n%s", p.Dispatches[0].Program.Code)
	}

	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"args given", replaceOnce("threads: [WG, 1, 1]", "threads: [WG, 1, 1]\n    args: [inp, out]"), "leave args out"},
		{"entry given", replaceOnce("  - grid:", "  - entry: other\n    grid:"), "an mlx: kernel's entry is its name"},
		{"input not a buffer", replaceOnce("inputs: [inp]", "inputs: [inpt]"), "\"inpt\" is neither a buffer (inp, out) nor a dim, knob, flag or value: did you mean inp? an input is a buffer"},
		{"output not out", replaceOnce("outputs: [out]", "outputs: [inp]"), "output inp is not an output buffer"},
		{"no body", replaceOnce("  body_file: gelu_body.metal\n", ""), "no body"},
		{"body twice", replaceOnce("  body_file: gelu_body.metal\n", "  body_file: gelu_body.metal\n  body: x\n"), "both body: and body_file:"},
		{"template name unknown", replaceOnce("template: {T: T}", "template: {T: TT}"), "unknown name 'TT'"},
		{"missing body file", replaceOnce("body_file: gelu_body.metal", "body_file: nope.metal"), "cannot read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(twin(t, "../../examples/mlx_body", "mlx_bad", ManifestName, c.edit))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// An MLX body's integer buffers get Metal's integer types in the written
// signature: i32 int, i64 long, u64 ulong (8 bytes each for the last two).
func TestMLXIntegerBuffers(t *testing.T) {
	edit := func(s string) string {
		s = strings.Replace(s, "inputs: [inp]", "inputs: [inp, ids, lens]", 1)
		s = strings.Replace(s, "outputs: [out]", "outputs: [out, picked]", 1)
		return strings.Replace(s, "  - {name: out, dtype: T, shape: [rows, cols], out: true}\n",
			"  - {name: out, dtype: T, shape: [rows, cols], out: true}\n"+
				"  - {name: ids, dtype: i64, shape: [rows], init: \"randint(0, cols)\"}\n"+
				"  - {name: lens, dtype: i32, shape: [rows], init: arange}\n"+
				"  - {name: picked, dtype: u64, shape: [rows], out: true}\n", 1)
	}
	f, err := Load(twin(t, "../../examples/mlx_body", "mlx_ints", ManifestName, edit))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F16, Dims: map[string]int{"rows": 3, "cols": 5}}.WithDefaults(f.Schema())
	p, err := f.Plan(s, emuDev)
	if err != nil {
		t.Fatal(err)
	}
	code := p.Dispatches[0].Program.Code
	for _, w := range []string{"const device half* inp [[buffer(", "const device long* ids [[buffer(", "const device int* lens [[buffer(", "device ulong* picked [[buffer("} {
		if !strings.Contains(code, w) {
			t.Errorf("the written kernel lacks %q:\n%s", w, code)
		}
	}
}

// metalArgsSource has Metal kernels of each way of taking scalars.
const metalArgsSource = `#include <metal_stdlib>
using namespace metal;
template <typename E>
[[kernel]] void norm_impl(const device E* x [[buffer(0)]], device E* y [[buffer(1)]], constant float& eps [[buffer(2)]],
    constant uint& n [[buffer(3)]], constant half& gain [[buffer(4)]], constant bool& on [[buffer(5)]], uint i [[thread_position_in_grid]]) {}
template [[host_name("norm_f32")]] [[kernel]] decltype(norm_impl<float>) norm_impl<float>;
struct P { int n; float eps; };
[[kernel]] void packed(const device float* x [[buffer(0)]], device float* y [[buffer(1)]], constant P& p [[buffer(2)]]) {}
[[kernel]] void mixed(device float* y [[buffer(0)]], constant P& p [[buffer(1)]], constant int& m [[buffer(2)]]) {}
[[kernel]] void table(device float* y [[buffer(0)]], constant int* lut [[buffer(1)]]) {}
[[kernel]] void middle(device float* y [[buffer(0)]], constant P& p [[buffer(1)]], const device float* x [[buffer(2)]]) {}
`

func metalArgsFamily(t *testing.T, dispatch string) (*Family, error) {
	t.Helper()
	y := strings.NewReplacer("sources: {cuda: k.cu}", "sources: {metal: k.metal}", "DISPATCH", dispatch).Replace(argsManifest)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.metal": metalArgsSource}))
}

// Metal scalars: one per `constant T&` index as the parameter's type, or
// packed into the one struct; a host-name entry finds its template.
func TestMetalArgsBind(t *testing.T) {
	for _, c := range []struct {
		name, dispatch string
		want           []profiler.Scalar
	}{
		{"per index, typed by the signature", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, eps, N, scale, "N > 50"]`,
			[]profiler.Scalar{{Name: "eps", Kind: profiler.ScalarF32, F: 1e-5}, {Name: "n", Kind: profiler.ScalarU32, I: 100},
				{Name: "gain", Kind: profiler.ScalarF16, F: 0.125}, {Name: "on", Kind: profiler.ScalarBool, I: 1}}},
		{"an integer expression into a float", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, 2, 3, 1, false]`,
			[]profiler.Scalar{{Name: "eps", Kind: profiler.ScalarF32, F: 2}, {Name: "n", Kind: profiler.ScalarU32, I: 3},
				{Name: "gain", Kind: profiler.ScalarF16, F: 1}, {Name: "on", Kind: profiler.ScalarBool}}},
		{"a half rounded once, to nearest even", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, 2, 3, 0.1, false]`,
			[]profiler.Scalar{{Name: "eps", Kind: profiler.ScalarF32, F: 2}, {Name: "n", Kind: profiler.ScalarU32, I: 3},
				{Name: "gain", Kind: profiler.ScalarF16, F: 0.0999755859375}, {Name: "on", Kind: profiler.ScalarBool}}},
		{"one struct", `entry: packed, grid: [N], threads: [32], args: [F, G, N, eps]`,
			[]profiler.Scalar{{Name: "n", Kind: profiler.ScalarI32, I: 100}, {Name: "eps", Kind: profiler.ScalarF32, F: 1e-5}}}, // named by the struct's fields
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := metalArgsFamily(t, c.dispatch)
			if err != nil {
				t.Fatal(err)
			}
			p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), emuDev)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Dispatches[0]
			if !slices.Equal(d.Args, []string{"F", "G"}) || !reflect.DeepEqual(d.Scalars, c.want) {
				t.Errorf("args %v scalars %+v, want %+v", d.Args, d.Scalars, c.want)
			}
		})
	}
	for _, c := range []struct{ name, dispatch, want string }{
		{"fraction into an unsigned", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, eps, scale, 1, true]`, "uint"},
		{"negative into an unsigned", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, eps, "-N", 1, true]`, "uint"},
		{"half out of range", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, eps, N, 1e6, true]`, "'1e6' = 1e+06 goes to parameter `constant half& gain`"},
		{"half out of range from a dim", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, eps, N, "N * 1000", true]`, "'N * 1000' for parameter `constant half& gain`: scalar gain: 100000 does not fit in f16"},
		{"buffer for a scalar", `entry: norm_f32, grid: [N], threads: [32], args: [F, G, X, N, 1, true]`, "buffer X goes to parameter `constant float& eps`"},
		{"output to the input", `entry: norm_f32, grid: [N], threads: [32], args: [G, F, eps, N, 1, true]`, "output buffer G goes to parameter `const device float* x`"},
		{"bf16 buffer to a float pointer", `entry: norm_f32, grid: [N], threads: [32], args: [X, G, eps, N, 1, true]`, "buffer X holds bf16 but parameter"},
		{"struct beside a scalar", `entry: mixed, grid: [N], threads: [32], args: [G, N, eps, 2]`, "1 constant structs and 1 `constant T&` scalars"},
		{"constant array given a float buffer", `entry: table, grid: [N], threads: [32], args: [G, F]`, "buffer F holds f32 but parameter `constant int* lut` points to i32"},
		{"missing host name", `entry: norm_f16, grid: [N], threads: [32], args: [F, G]`, "kernels found: norm_impl, packed, mixed, table, middle, norm_f32"},
		// the struct between the buffers: G pairs with x, the second buffer
		// parameter, not with the struct that is the second parameter
		{"output to the input past a struct", `entry: middle, grid: [N], threads: [32], args: [F, G, N, eps]`, "output buffer G goes to parameter `const device float* x`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := metalArgsFamily(t, c.dispatch)
			if err == nil {
				dt := profiler.F32
				if strings.Contains(c.name, "bf16") {
					dt = profiler.BF16
				}
				_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema()), emuDev)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
