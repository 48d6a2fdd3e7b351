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

// placeholderBody is an MLX body kept the way Python fills it with
// str.replace: a knob, a flag and a float value as {{NAME}}.
const placeholderBody = `constexpr int UNROLL = {{UNROLL}};
constexpr bool SCALED = {{ SCALED }};
uint i = thread_position_in_grid.x * UNROLL;
for (int u = 0; u < UNROLL; ++u) {
    if (i + u < uint(inp_shape[0])) out[i + u] = (SCALED ? float({{GAIN}}) : 1.0f) * inp[i + u] + OFFSET;
}
`

const placeholderYAML = `name: t_placeholders
dtypes: [f32]
knobs: {UNROLL: {values: [1, 2, 4], default: 2}}
flags: {SCALED: {default: true}}
dims: {N: {default: 64}}
values: {GAIN: "2.0"}
buffers:
  - {name: inp, dtype: f32, shape: [N]}
  - {name: out, dtype: f32, shape: [N], out: true}
mlx:
  body_file: body.metal
  header: "constexpr float OFFSET = {{GAIN}} - 2;"
  inputs: [inp]
  outputs: [out]
dispatches:
  - {grid: ["cdiv(N, 32 * UNROLL)"], threads: [32]}
check: {python: ref.py}
`

const placeholderRef = `def reference(inputs, dims):
    return {"out": 2.0 * inputs["inp"]}
`

func placeholderFiles(edit func(yaml, body string) (string, string)) map[string]string {
	y, b := placeholderYAML, placeholderBody
	if edit != nil {
		y, b = edit(y, b)
	}
	return map[string]string{"kernel.yaml": y, "body.metal": b, "ref.py": placeholderRef}
}

// Each {{NAME}} of an mlx: body and header becomes the spec's value of the
// knob, flag or value NAME (a float with its point), in every spec's
// written kernel, on the line it was on.
func TestMLXPlaceholders(t *testing.T) {
	f, err := Load(usertest.Write(t, placeholderFiles(nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		unroll int
		scaled bool
		want   []string
	}{
		{1, true, []string{"\nconstexpr int UNROLL = 1;\nconstexpr bool SCALED = true;\n", "float(2.0)", "constexpr float OFFSET = 2.0 - 2;"}},
		{4, false, []string{"\nconstexpr int UNROLL = 4;\nconstexpr bool SCALED = false;\n"}},
	} {
		s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Knobs: map[string]int{"UNROLL": c.unroll}, Flags: map[string]bool{"SCALED": c.scaled}}.WithDefaults(f.Schema())
		p, err := f.Plan(s, emuDev)
		if err != nil {
			t.Fatal(err)
		}
		code := p.Dispatches[0].Program.Code
		for _, w := range c.want {
			if !strings.Contains(code, w) {
				t.Errorf("UNROLL=%d: the written kernel lacks %q:\n%s", c.unroll, w, code)
			}
		}
		if strings.Contains(code, "{{") {
			t.Errorf("UNROLL=%d: a placeholder is left:\n%s", c.unroll, code)
		}
		if !strings.Contains(code, "body.metal\"\nconstexpr int UNROLL") {
			t.Errorf("the body's #line does not point at its first line:\n%s", code)
		}
	}
}

// A placeholder that names nothing the manifest declares is a load error
// naming it, where it is, and what to declare.
func TestMLXPlaceholderUnknown(t *testing.T) {
	for _, c := range []struct {
		name       string
		yaml, body func(string) string
		want       []string
	}{
		{"in body_file", nil, func(b string) string { return strings.Replace(b, "{{GAIN}}", "{{MAX_N}}", 1) },
			[]string{"mlx.body_file: body.metal:5: placeholder {{MAX_N}} names no knob, dim, flag or value: declare MAX_N", "values: {MAX_N: 8}"}},
		{"in an inline body", func(y string) string {
			return strings.Replace(y, "  body_file: body.metal\n", "  body: |\n    uint i = thread_position_in_grid.x;\n    out[i] = {{ SCALE }} * inp[i];\n", 1)
		}, nil, []string{"mlx.body: kernel.yaml:13: placeholder {{ SCALE }} names no knob"}},
		{"in the header", func(y string) string { return strings.Replace(y, "{{GAIN}} - 2", "{{BIAS}}", 1) }, nil,
			[]string{"mlx.header: header:1: placeholder {{BIAS}}"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(usertest.Write(t, placeholderFiles(func(y, b string) (string, string) {
				if c.yaml != nil {
					y = c.yaml(y)
				}
				if c.body != nil {
					b = c.body(b)
				}
				return y, b
			})))
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want %q", err, w)
				}
			}
		})
	}
}

func TestPlaceholderText(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
		ok   bool
	}{
		{4, "4", true}, {int64(-3), "-3", true}, {true, "true", true}, {2.0, "2.0", true}, {1e-5, "1e-05", true}, {0.125, "0.125", true},
		{"f32", "", false},
	} {
		if got, ok := placeholderText(c.v); got != c.want || ok != c.ok {
			t.Errorf("%v: %q %v, want %q %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// The placeholders' values reach the kernel that runs: at UNROLL 1 and 4
// it matches 2·inp; with GAIN 3 (a twin whose value differs from the
// reference's) it is a mismatch.
func TestMLXPlaceholdersOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	for _, c := range []struct {
		name   string
		unroll int
		gain   string
		want   profiler.Status
	}{
		{"unroll1", 1, "2.0", profiler.StatusOK},
		{"unroll4", 4, "2.0", profiler.StatusOK},
		{"gain3", 2, "3.0", profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Load(usertest.Write(t, placeholderFiles(func(y, b string) (string, string) {
				y = strings.Replace(y, "name: t_placeholders", "name: t_placeholders_"+c.name, 1)
				return strings.Replace(y, `GAIN: "2.0"`, "GAIN: "+c.gain, 1), b
			})))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Knobs: map[string]int{"UNROLL": c.unroll}, Dims: map[string]int{"N": 37}}
			res := run.NewRunner(eb).Run(context.Background(), s.WithDefaults(f.Schema()), opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

func TestPlaceholdersAsNames(t *testing.T) {
	for in, want := range map[string]string{
		"constexpr int MAX_N = {{MAX_N}};": "constexpr int MAX_N = MAX_N;",
		"s[{{ A }} * {{B_2}}]":             "s[A * B_2]",
		"{{2X}} {x} {{}}":                  "{{2X}} {x} {{}}",
	} {
		if got := PlaceholdersAsNames(in); got != want {
			t.Errorf("PlaceholdersAsNames(%q) = %q, want %q", in, got, want)
		}
	}
}
