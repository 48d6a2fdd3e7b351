package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// loadScaleRows loads scaleRowsYAML (check: none) with its entry and args
// replaced, over src.
func loadScaleRows(t *testing.T, src, entry, args string) (*Family, error) {
	t.Helper()
	y := strings.Replace(scaleRowsYAML, "check: {python: ref.py}", "check: none", 1)
	y = strings.Replace(y, `"scale_rows<T, K>"`, `"`+entry+`"`, 1)
	if args != "" {
		y = strings.Replace(y, "[x, y, cols, 0.5, 0.25]", args, 1)
	}
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": src}))
}

const plainScaleMetal = `#include <metal_stdlib>
using namespace metal;
[[kernel]] void scale_rows(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                           constant uint& cols [[buffer(2)]], constant float& alpha [[buffer(3)]],
                           constant T& bias [[buffer(4)]], uint2 gid [[thread_position_in_grid]]) {
    if (gid.x < cols) y[gid.y * cols + gid.x] = x[gid.y * cols + gid.x] * alpha + bias;
}
`

// A Metal template entry its template cannot take is refused when the
// manifest loads, at the entry, naming it and what to write.
func TestMetalTemplateEntryLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name, src, entry string
		want             []string
	}{
		{"no such template", scaleRowsTemplate, "scale_rowz<T, K>", []string{"dispatches[0].entry", `no kernel "scale_rowz"`, "scale_rows"}},
		{"too few", scaleRowsTemplate, "scale_rows<T>", []string{"dispatches[0].entry", "entry scale_rows<T>", "`int K`", "without a value", "write scale_rows<T, K>"}},
		{"too many", scaleRowsTemplate, "scale_rows<T, K, 4>", []string{"entry scale_rows<T, K, 4> gives 3 template arguments", "takes 2 (template <typename T, int K>)"}},
		{"a number for the type", scaleRowsTemplate, "scale_rows<4, K>", []string{"`typename T`", "takes a type, not 4"}},
		{"a type for the value", scaleRowsTemplate, "scale_rows<T, float>", []string{"`int K`", "not the type float"}},
		{"the dtype for the value", scaleRowsTemplate, "scale_rows<T, T>", []string{"`int K`", "not T, the dtype's type"}},
		{"out of range", scaleRowsTemplate, "scale_rows<T, 3000000000>", []string{"`int K`", "cannot hold 3000000000: type int holds -2147483648 to 2147483647"}},
		{"not a template", plainScaleMetal, "scale_rows<T>", []string{"kernel scale_rows is not a template: write entry: scale_rows"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadScaleRows(t, c.src, c.entry, "")
			errorSays(t, err, c.want)
		})
	}
}

// A knob's value its template parameter cannot hold makes that spec
// invalid, naming the entry, the parameter and the value; the others plan.
func TestMetalTemplateEntryValuePerSpec(t *testing.T) {
	src := strings.Replace(scaleRowsTemplate, "int K>", "short K>", 1)
	y := strings.Replace(scaleRowsYAML, "K: {values: [1, 3], default: 3}", "K: {values: [3, 40000], default: 3}", 1)
	y = strings.Replace(y, "check: {python: ref.py}", "check: none", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": src}))
	if err != nil {
		t.Fatal(err)
	}
	plan := func(k int) error {
		s := profiler.Spec{Kernel: f.Name(), DType: profiler.F16, Knobs: map[string]int{"K": k}}.WithDefaults(f.Schema())
		_, err := f.Plan(s, emuDev)
		return err
	}
	if err := plan(3); err != nil {
		t.Fatalf("K=3: %v", err)
	}
	errorSays(t, plan(40000), []string{"dispatch scale_rows", "entry scale_rows<half, 40000>", "`short K`", "cannot hold 40000", "(entry: scale_rows<T, K>)"})
}

// args are checked against the template's parameters with the entry's
// arguments put in: `constant T& bias` takes a scalar (of the dtype), a
// fixed `float` makes x and y float buffers (an f16 spec is invalid,
// naming both), and a buffer for bias is refused.
func TestMetalTemplateEntryArgs(t *testing.T) {
	f, err := loadScaleRows(t, scaleRowsTemplate, "scale_rows<float, K>", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dt  profiler.DType
		bad bool
	}{{profiler.F32, false}, {profiler.F16, true}} {
		s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
		p, err := f.Plan(s, emuDev)
		if c.bad {
			errorSays(t, err, []string{"x", "float", "f16"})
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		// bias is the last scalar: a float, as T is float for every spec
		sc := p.Dispatches[0].Scalars
		if last := sc[len(sc)-1]; last.Kind != profiler.ScalarF32 || last.F != 0.25 {
			t.Errorf("%s: bias %+v, want an f32 0.25", c.dt, last)
		}
	}
	f, err = loadScaleRows(t, scaleRowsTemplate, "scale_rows<T, K>", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), emuDev)
	if err != nil {
		t.Fatal(err)
	}
	if sc := p.Dispatches[0].Scalars; sc[len(sc)-1].Kind != profiler.ScalarF16 {
		t.Errorf("f16: bias %+v, want an f16 (T is the dtype)", sc[len(sc)-1])
	}
	// a template parameter of another name than the dtype's: bias is still
	// a scalar of the dtype
	renamed := strings.NewReplacer("typename T", "typename U", "T* ", "U* ", "T& ", "U& ", "T(", "U(").Replace(scaleRowsTemplate)
	f, err = loadScaleRows(t, renamed, "scale_rows< T , K>", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), emuDev)
	if err != nil {
		t.Fatal(err)
	}
	if sc := p.Dispatches[0].Scalars; sc[len(sc)-1].Kind != profiler.ScalarF16 {
		t.Errorf("renamed f16: bias %+v, want an f16", sc[len(sc)-1])
	}
	_, err = loadScaleRows(t, scaleRowsTemplate, "scale_rows<T, K>", "[x, y, cols, 0.5, x]")
	errorSays(t, err, []string{"args[4]", "buffer x goes to parameter `constant T& bias`", "a by-value scalar"})
}

// A non-template kernel's `constant T&` of the dtype name is a scalar of
// the dtype too, beside other `constant T&` scalars (it was read as a
// struct).
func TestMetalDTypeScalarParam(t *testing.T) {
	f, err := loadScaleRows(t, plainScaleMetal, "scale_rows", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), emuDev)
	if err != nil {
		t.Fatal(err)
	}
	if sc := p.Dispatches[0].Scalars; len(sc) != 3 || sc[2].Kind != profiler.ScalarF16 {
		t.Errorf("scalars %+v, want cols, alpha and an f16 bias", sc)
	}
}
