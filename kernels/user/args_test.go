package user

import (
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// argsSource has a kernel of every parameter shape the args tests need.
const argsSource = `
typedef long long idx_t;
namespace ops {
template <typename T, int VEC>
__global__ void __launch_bounds__(256) scale(T* out, const T* in, float alpha, size_t n) {}
}
__global__ void mixed(int rows, const float* x, double eps, float* y, unsigned flags, idx_t big, bool on, char c) {}
__global__ void fixed(const float* x, float* y) {}
__global__ void halfarg(float* y, __half h) {}
__global__ void dtarg(T* y, T alpha) {}
__global__ void one(float* y, int n) {}
__global__ void over(float* y, int n) {}
__global__ void over(float* y, int n, int m) {}
__global__ void over(double* y, int n) {}
__global__ void pairarg(float* y, half2 h) {}
`

// argsManifest is a manifest over argsSource with one dispatch (DISPATCH).
const argsManifest = `name: t_args
sources: {cuda: k.cu}
dtypes: [f32, bf16]
knobs:
  VEC: {values: [2, 4], default: 4}
dims:
  D: {default: 64}
  N: {default: 100}
values:
  eps: 1e-5
  scale: "1.0 / sqrt(D)"
  half_n: "N / 2"
buffers:
  - {name: X, dtype: T, shape: [N]}
  - {name: Y, dtype: T, shape: [N], out: true}
  - {name: F, dtype: f32, shape: [N]}
  - {name: G, dtype: f32, shape: [N], out: true}
dispatches:
  - {DISPATCH}
check: none
`

func argsFamily(t *testing.T, dispatch string) (*Family, error) {
	t.Helper()
	y := strings.Replace(argsManifest, "DISPATCH", dispatch, 1)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": argsSource}))
}

func TestArgsBind(t *testing.T) {
	f, err := argsFamily(t, `entry: "ops::scale<T, VEC>", grid: [N], threads: [32], args: [Y, X, scale, N]`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dt    profiler.DType
		entry string
	}{{profiler.F32, "ops::scale<float, 4>"}, {profiler.BF16, "ops::scale<__nv_bfloat16, 4>"}} {
		s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
		p, err := f.Plan(s, cudaDev)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Dispatches[0]
		if d.Program.Entry != c.entry {
			t.Errorf("%s: entry %q, want %q", c.dt, d.Program.Entry, c.entry)
		}
		if !slices.Equal(d.Args, []string{"Y", "X"}) || len(d.Scalars) != 2 || d.Order != nil {
			t.Fatalf("%s: dispatch %+v", c.dt, d)
		}
		if sc := d.Scalars[0]; sc.Kind != profiler.ScalarF32 || sc.F != 0.125 || sc.Name != "alpha" {
			t.Errorf("alpha %+v", sc)
		}
		if sc := d.Scalars[1]; sc.Kind != profiler.ScalarU64 || sc.I != 100 {
			t.Errorf("n %+v", sc)
		}
	}

	f, err = argsFamily(t, `entry: mixed, grid: [N], threads: [32], args: [half_n, F, eps, G, 7, "N * 100000000", "N > 3", -2]`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	wantOrder := []profiler.ArgRef{{Scalar: true, Index: 0}, {Index: 0}, {Scalar: true, Index: 1}, {Index: 1}, {Scalar: true, Index: 2}, {Scalar: true, Index: 3}, {Scalar: true, Index: 4}, {Scalar: true, Index: 5}}
	if !slices.Equal(d.Order, wantOrder) || !slices.Equal(d.Args, []string{"F", "G"}) {
		t.Errorf("order %v args %v", d.Order, d.Args)
	}
	want := []profiler.Scalar{
		{Name: "rows", Kind: profiler.ScalarI32, I: 50},
		{Name: "eps", Kind: profiler.ScalarF64, F: 1e-5},
		{Name: "flags", Kind: profiler.ScalarU32, I: 7},
		{Name: "big", Kind: profiler.ScalarI64, I: 10_000_000_000},
		{Name: "on", Kind: profiler.ScalarBool, I: 1},
		{Name: "c", Kind: profiler.ScalarI8, I: -2},
	}
	if !slices.Equal(d.Scalars, want) {
		t.Errorf("scalars\n%+v\nwant\n%+v", d.Scalars, want)
	}
}

// TestArgsRefused: each broken dispatch is refused at load with its
// message, position and parameter.
func TestArgsRefused(t *testing.T) {
	for _, c := range []struct {
		name, dispatch string
		want           []string
	}{
		{"literal in a pointer slot", `entry: fixed, grid: [N], threads: [32], args: [F, 0]`,
			[]string{"kernel.yaml:19:", "dispatches[0].args[1]", `"0" goes to parameter ` + "`float* y`", "a pointer: bind one of the buffers (X, Y, F, G)"}},
		{"expression in a pointer slot", `entry: fixed, grid: [N], threads: [32], args: ["N * 2", G]`,
			[]string{"dispatches[0].args[0]", `"N * 2" goes to parameter ` + "`const float* x`"}},
		{"buffer in a scalar slot", `entry: one, grid: [N], threads: [32], args: [G, F]`,
			[]string{"dispatches[0].args[1]", "buffer F goes to parameter `int n`", "a by-value scalar"}},
		{"output to a const pointer", `entry: fixed, grid: [N], threads: [32], args: [G, G]`,
			[]string{"dispatches[0].args[0]", "output buffer G goes to parameter `const float* x`", "cannot write through"}},
		{"too few args", `entry: mixed, grid: [N], threads: [32], args: [N, F, eps]`,
			[]string{"dispatches[0].args", "3 args but", "takes 8 parameters", "unbound `float* y`, `unsigned flags`, `idx_t big`, `bool on`, `char c`"}},
		{"too many args", `entry: fixed, grid: [N], threads: [32], args: [F, G, N]`,
			[]string{"3 args but", "takes 2 parameters: N bind nothing"}},
		{"constant fraction for an int", `entry: one, grid: [N], threads: [32], args: [G, eps]`,
			[]string{"kernel.yaml:19:", "dispatches[0].args[1]: 'eps' = 1e-05 goes to parameter `int n` of", "1e-05 is not a whole number"}},
		{"swapped float and int", `entry: mixed, grid: [N], threads: [32], args: [eps, F, N, G, 1, 1, true, 1]`,
			[]string{"dispatches[0].args[0]: 'eps' = 1e-05 goes to parameter `int rows`", "not a whole number", "the args follow the parameter list: did you swap eps and N?"}},
		{"constant negative for an unsigned", `entry: "ops::scale<T, 4>", grid: [N], threads: [32], args: [Y, X, 1, "0 - 1"]`,
			[]string{"dispatches[0].args[3]: '0 - 1' = -1 goes to parameter `size_t n`", "-1 does not fit in u64"}},
		{"constant out of range", `entry: mixed, grid: [N], threads: [32], args: [1, F, 1, G, 1, 1, 2, 1]`,
			[]string{"dispatches[0].args[6]: '2' = 2 goes to parameter `bool on`", "2 does not fit in bool"}},
		{"name in another case", `entry: one, grid: [N], threads: [32], args: [G, EPS]`,
			[]string{"dispatches[0].args[1]", `"EPS" is neither a buffer (X, Y, F, G) nor an expression over`, "; did you mean eps?"}},
		{"misspelt value", `entry: one, grid: [N], threads: [32], args: [G, "scal * 2"]`,
			[]string{"dispatches[0].args[1]", "; did you mean scale?"}},
		{"half2 scalar", `entry: pairarg, grid: [N], threads: [32], args: [G, 1]`,
			[]string{"dispatches[0].args[1]", "expression 1 goes to parameter `half2 h`", "a struct taken by value: give a mapping of its fields, as {x: …, y: …} (fields: x, y)"}},
		{"constant beyond half", `entry: halfarg, grid: [N], threads: [32], args: [G, 70000]`,
			[]string{"dispatches[0].args[1]: '70000' = 70000 goes to parameter `__half h`", "70000 does not fit in f16 (±65504"}},
		{"no overload fits", `entry: over, grid: [N], threads: [32], args: [G]`,
			[]string{"over has 3 overloads and none takes these arguments"}},
		{"unknown entry", `entry: "nope<T>", grid: [N], threads: [32], args: [G]`,
			[]string{"has no kernel \"nope\"", "kernels found: ops::scale, mixed, fixed, halfarg, dtarg, one, over, pairarg"}},
		{"wrong namespace", `entry: "other::scale<T, 4>", grid: [N], threads: [32], args: [Y, X, 1, N]`,
			[]string{"has no kernel \"other::scale\""}},
		{"unbalanced <", `entry: "ops::scale<T, VEC", grid: [N], threads: [32], args: [Y, X, 1, N]`,
			[]string{"kernel.yaml:19:", "dispatches[0].entry", "unbalanced '<'"}},
		{"unknown name in entry", `entry: "ops::scale<T, VECC>", grid: [N], threads: [32], args: [Y, X, 1, N]`,
			[]string{"kernel.yaml:19:28", "unknown name VECC in the template arguments", "known are the dtype name T and D, N, T, VEC, eps, half_n, scale"}},
		{"bad {expr} in entry", `entry: "ops::scale<T, {VEC * W}>", grid: [N], threads: [32], args: [Y, X, 1, N]`,
			[]string{"unknown name 'W'"}},
		{"text after the arguments", `entry: "ops::scale<T, 4>x", grid: [N], threads: [32], args: [Y, X, 1, N]`,
			[]string{"unexpected \"x\" after the template arguments"}},
		{"not a name", `entry: "<T>", grid: [N], threads: [32], args: [Y]`,
			[]string{"does not start with a function name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := argsFamily(t, c.dispatch)
			if err == nil {
				t.Fatal("loaded")
			}
			if !IsError(err) {
				t.Errorf("not a manifest error: %T", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestDTypeFix: dropping a dtype from dtypes: comes first only where it
// fixes the mismatch: the buffer follows the spec's dtype and the kernel's
// type is one of dtypes:.
func TestDTypeFix(t *testing.T) {
	f, err := argsFamily(t, `entry: fixed, grid: [N], threads: [32], args: [X, Y]`)
	if err != nil {
		t.Fatal(err)
	}
	const retype = "write the parameter with the dtype's name, T"
	for _, c := range []struct {
		buf       string
		have, ptr profiler.DType
		want      string
	}{
		{"X", profiler.BF16, profiler.F32, "drop bf16 from dtypes: [f32, bf16], as the kernel takes f32 alone; or " + retype + ", so that it takes each dtype; or give the buffer `dtype: f32`"},
		{"F", profiler.F32, profiler.BF16, retype + ", or give the buffer `dtype: bf16`"}, // F is f32 at every dtype
		{"X", profiler.F32, profiler.F64, retype + ", or give the buffer `dtype: f64`"},   // f64 is not in dtypes:
	} {
		if got := f.dtypeFix(c.buf, c.have, c.ptr, retype); got != c.want {
			t.Errorf("%s %s for %s: %q\nwant %q", c.buf, c.have, c.ptr, got, c.want)
		}
	}
}

// TestArgsInvalid: what only a spec decides is refused by Plan, naming
// the argument, its type and value.
func TestArgsInvalid(t *testing.T) {
	for _, c := range []struct {
		name, dispatch string
		dt             profiler.DType
		want           []string
	}{
		{"float* given bf16", `entry: fixed, grid: [N], threads: [32], args: [X, Y]`, profiler.BF16,
			[]string{"args[0]: buffer X holds bf16 but parameter `const float* x` points to f32",
				// X follows the dtype and the kernel takes f32, one of dtypes: the likelier fix first
				"(drop bf16 from dtypes: [f32, bf16], as the kernel takes f32 alone; or write the parameter with the dtype's name, T, so that it takes each dtype; or give the buffer `dtype: f32`)"}},
		{"int overflow", `entry: one, grid: [N], threads: [32], args: [G, "N * 30000000"]`, profiler.F32,
			[]string{"args[1] 'N * 30000000' for parameter `int n`", "3000000000 does not fit in i32", "C type int"}},
		{"fraction for an int from a dim", `entry: one, grid: [N], threads: [32], args: [G, "N / 3.0"]`, profiler.F32,
			[]string{"args[1] 'N / 3.0' for parameter `int n`", "is not a whole number"}},
		{"float overflow", `entry: dtarg, grid: [N], threads: [32], args: [Y, "1e30 * 1e9"]`, profiler.F32,
			[]string{"parameter `T alpha`", "does not fit in f32"}},
		{"dtype scalar beyond bf16", `entry: dtarg, grid: [N], threads: [32], args: [Y, 3.4e38]`, profiler.BF16,
			[]string{"args[1] '3.4e+38' for parameter `T alpha`", "3.4e+38 does not fit in bf16", "C type T"}},
		{"half overflow from a dim", `entry: halfarg, grid: [N], threads: [32], args: [G, "N * 1000"]`, profiler.F32,
			[]string{"args[1] 'N * 1000' for parameter `__half h`", "100000 does not fit in f16", "C type __half"}},
		{"fractional template argument", `entry: "ops::scale<T, {scale}>", grid: [N], threads: [32], args: [Y, X, 1, N]`, profiler.F32,
			[]string{"{scale} is 0.125: a template argument must be an integer or a bool"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := argsFamily(t, c.dispatch)
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
			_, err = f.Plan(s, cudaDev)
			errorSays(t, err, c.want)
			if c.dt != profiler.F32 { // the same dispatch plans at f32
				s.DType = profiler.F32
				if _, err := f.Plan(s, cudaDev); err != nil {
					t.Errorf("at f32: %v", err)
				}
			}
		})
	}
}
