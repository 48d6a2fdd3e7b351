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

// A training code base's layout: the .cu includes a kernel header from a
// folder beside it, which includes the common header with floatX.
var headerEntryFiles = map[string]string{
	"scale.cu":          "#include <stdio.h>\n#include \"kernels/scale.cuh\"\n\nint main() { return 0; }\n",
	"kernels/scale.cuh": usertest.ScaleHeader("common.h"),
	"inc/common.h":      "#pragma once\ntypedef float floatX;\n",
}

const headerEntryYAML = `name: t_header_entry
sources: {cuda: scale.cu}
include_dirs: [inc]
dtype_name: floatX
dtypes: [f32]
dims: {N: {default: 64}}
values: {alpha: 0.5}
buffers:
  - {name: out, dtype: floatX, shape: [N], out: true}
  - {name: inp, dtype: floatX, shape: [N]}
dispatches:
  - {entry: scale_kernel, grid: ["cdiv(N, 32)"], threads: [32], args: [out, inp, alpha, N]}
check: none
`

func writeHeaderEntry(t *testing.T, yaml string) string {
	t.Helper()
	files := map[string]string{"kernel.yaml": yaml}
	for k, v := range headerEntryFiles {
		files[k] = v
	}
	return usertest.Write(t, files)
}

// The entry defined in a local header (found beside the including file,
// or in include_dirs) binds: its signature is read from the header, and
// messages and EntryAt name the header and its line.
func TestEntryInLocalHeader(t *testing.T) {
	path := writeHeaderEntry(t, headerEntryYAML)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sig, file, ok := f.EntryAt("cuda", 0)
	if !ok || filepath.ToSlash(file) != filepath.ToSlash(filepath.Join(filepath.Dir(path), "kernels/scale.cuh")) || sig.Line != 5 || len(sig.Params) != 4 {
		t.Fatalf("EntryAt: %v %s:%d ok=%v", sig, file, sig.Line, ok)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Dispatches[0]; len(d.Args) != 2 || len(d.Scalars) != 2 || d.Scalars[0].Kind != profiler.ScalarF32 {
		t.Errorf("dispatch args %v scalars %+v: want 2 buffers, float alpha and int N", d.Args, d.Scalars)
	}

	for _, c := range []struct{ name, from, to, want string }{
		{"too few args", "args: [out, inp, alpha, N]", "args: [out, inp, N]", "scale.cuh:5 scale_kernel("},
		{"an output at a const pointer", "args: [out, inp, alpha, N]", "args: [inp, out, alpha, N]", "kernels/scale.cuh:5, which the kernel cannot write through"},
		{"a name no file defines", "entry: scale_kernel", "entry: scale_kernal", "scale.cu and its headers kernels/scale.cuh, common.h has no kernel \"scale_kernal\" (kernels found: scale_kernel)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeHeaderEntry(t, strings.Replace(headerEntryYAML, c.from, c.to, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant %q", err, c.want)
			}
		})
	}
}

// MLX's layout: a kernel template in one header, the instantiation macro
// in another, the [[host_name]] instantiations in the .metal file. The
// entry is a host name; it binds, and runs on the MSL emulation.
func TestMetalHostNameFromHeaders(t *testing.T) {
	files := map[string]string{
		"kernel.yaml": `name: t_mlx_headers
sources: {metal: axpb.metal}
include_dirs: [lib]
dtypes: [f32]
dims: {N: {default: 100}}
values: {a: 2.0, b: 0.5}
buffers:
  - {name: out, dtype: f32, shape: [N], out: true}
  - {name: x, dtype: f32, shape: [N]}
dispatches:
  - {entry: axpb_float32, grid: ["cdiv(N, 32)"], threads: [32], args: [x, out, a, b, N]}
check: {python: ref.py}
`,
		"axpb.metal": `#include <metal_stdlib>
#include "kernels/utils.h"
#include "kernels/axpb.h"

#define instantiate_axpb(tname, type) instantiate_kernel("axpb_" #tname, axpb, type)
instantiate_axpb(float32, float)
instantiate_axpb(float16, half)
`,
		"lib/kernels/utils.h": `#pragma once
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
`,
		"lib/kernels/axpb.h": `#pragma once
using namespace metal;

template <typename T>
[[kernel]] void axpb(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                     constant float& a [[buffer(2)]], constant float& b [[buffer(3)]],
                     constant int& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    if ((int)i < n) out[i] = T(a * float(x[i]) + b);
}
`,
		"ref.py": "def reference(inputs, dims):\n    return {\"out\": dims[\"a\"] * inputs[\"x\"] + dims[\"b\"]}\n",
	}
	path := usertest.Write(t, files)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sig, file, ok := f.EntryAt("metal", 0)
	if !ok || !strings.HasSuffix(filepath.ToSlash(file), "lib/kernels/axpb.h") || sig.Line != 5 {
		t.Fatalf("EntryAt: %v %s:%d ok=%v", sig, file, sig.Line, ok)
	}
	usePython(t)
	if err := Install(f); err != nil {
		t.Fatal(err)
	}
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	res := run.NewRunner(eb).Run(context.Background(), s, mslemu.Options(), nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("status %s: %s %+v", res.Status, res.Error, res.Verdict)
	}
}

// A template kernel specialised for half (FasterTransformer's style) binds
// the primary template, whether the specialization sits beside it or in
// the .cu that includes the header with the template. A true overload
// beside it stays ambiguous.
func TestExplicitSpecializationBindsThePrimaryTemplate(t *testing.T) {
	const primary = "template <typename T>\n__global__ void scale(float* out, const T* in, int n) {}\n"
	const special = "template <>\n__global__ void scale<half>(float* out, const half* in, int n) {}\n"
	const yaml = `name: t_spec
sources: {cuda: spec.cu}
dtypes: [f32, f16]
dims: {N: {default: 64}}
buffers:
  - {name: out, dtype: f32, shape: [N], out: true}
  - {name: inp, dtype: T, shape: [N]}
dispatches:
  - {entry: "scale<T>", grid: ["cdiv(N, 32)"], threads: [32], args: [out, inp, N]}
check: none
`
	for _, c := range []struct {
		name    string
		files   map[string]string
		line    int
		file    string
		wantErr string
	}{
		{"in one file", map[string]string{"spec.cu": primary + special}, 2, "spec.cu", ""},
		{"primary in a local header", map[string]string{"spec.cu": "#include \"scale.cuh\"\n" + special, "scale.cuh": primary}, 2, "scale.cuh", ""},
		{"a true overload", map[string]string{"spec.cu": primary + "__global__ void scale(float* out, const half* in, int n) {}\n"}, 0, "", "scale is ambiguous: 2 overloads"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"kernel.yaml": yaml}
			for k, v := range c.files {
				files[k] = v
			}
			f, err := Load(usertest.Write(t, files))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sig, file, ok := f.EntryAt("cuda", 0)
			if !ok || filepath.Base(file) != c.file || sig.Line != c.line || strings.Join(sig.Template, ",") != "T" {
				t.Errorf("EntryAt: %v %s:%d template %v", sig, file, sig.Line, sig.Template)
			}
		})
	}
}

// An entry's template arguments may name a type only a local header
// declares (a traits struct beside the kernel template, found beside the
// source or in include_dirs): the load accepts it; a name no file
// declares is still refused.
func TestEntryTemplateArgFromHeader(t *testing.T) {
	header := `#pragma once
template <int kThreads_, bool kScale_, typename in_t_>
struct Traits {
  using in_t = in_t_;
  static constexpr int kThreads = kThreads_;
  static constexpr bool kScale = kScale_;
};

template <typename K>
__global__ void scale_kernel(typename K::in_t* y, const typename K::in_t* x, int n) {
  int i = blockIdx.x * K::kThreads + threadIdx.x;
  if (i < n) y[i] = K::kScale ? x[i] * 2.0f : x[i];
}
`
	yaml := `name: t_traits_header
sources: {cuda: k.cu}
include_dirs: [inc]
dtypes: [f32]
dims: {N: {default: 1024}}
buffers:
  - {name: y, dtype: f32, shape: [N], out: true}
  - {name: x, dtype: f32, shape: [N]}
dispatches:
  - {entry: "scale_kernel<Traits<128, true, T>>", grid: ["cdiv(N, 128)"], threads: [128], args: [y, x, N]}
check: none
`
	for _, c := range []struct{ name, header, entry, want string }{
		{"beside the source", "k.cuh", "", ""},
		{"in include_dirs", "inc/k.cuh", "", ""},
		{"a name no file declares", "k.cuh", "scale_kernel<Trait<128, true, T>>", "unknown name Trait in the template arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := yaml
			if c.entry != "" {
				y = strings.Replace(y, "scale_kernel<Traits<128, true, T>>", c.entry, 1)
			}
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": "#include \"k.cuh\"\n", c.header: header}))
			if c.want == "" && err != nil {
				t.Fatal(err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v\nwant %q", err, c.want)
			}
		})
	}
}
