package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// metalHeaders are Metal's standard headers the MSL emulation serves
// (MLX's utils.h includes <metal_math>, its atomics <metal_atomic>).
var metalHeaders = []string{"metal_stdlib", "metal_array", "metal_atomic", "metal_common", "metal_compute", "metal_geometric",
	"metal_graphics", "metal_integer", "metal_limits", "metal_logging", "metal_math", "metal_matrix", "metal_pack",
	"metal_quadgroup", "metal_relational", "metal_simdgroup", "metal_simdgroup_matrix", "metal_texture",
	"metal_type_traits", "metal_types", "metal_uniform"}

// metalManifest is usertest's manifest with a Metal source k.metal.
func metalManifest(name string) string {
	return strings.Replace(usertest.Manifest(name), "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
}

const metalKernel = `[[kernel]] void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& rows [[buffer(2)]],
    constant int& cols [[buffer(3)]], uint i [[thread_position_in_grid]]) {
  Y[i] = T(twice(float(X[i])));
}
`

// A source whose local header includes Metal's standard headers (not
// metal_stdlib first) and uses METAL_FUNC compiles on the emulation: the
// main file uses `constant` before any Metal header, as Apple's compiler
// allows.
func TestMetalStandardHeadersOnTheEmulation(t *testing.T) {
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("no g++")
	}
	var utils strings.Builder
	utils.WriteString("#pragma once\n")
	for _, h := range metalHeaders[1:] {
		utils.WriteString("#include <" + h + ">\n")
	}
	utils.WriteString("#include <metal_stdlib>\nusing namespace metal;\nMETAL_FUNC float twice(float x) { return x * 2.0f; }\n")
	src := "constant constexpr int kTwo = 2;\n#include \"utils.h\"\n" + metalKernel
	path := usertest.Write(t, map[string]string{"kernel.yaml": metalManifest("msl_headers"), "k.metal": src, "utils.h": utils.String()})
	opt := noTools(t)
	opt.CompileMetal = nil
	rep := Check(path, opt)
	mustContain(t, "standard headers", findingsOf(rep.Manifests[0]), "Metal f32: k compiles on the MSL emulation")
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d:\n%s", rep.ExitCode(), findingsOf(rep.Manifests[0]))
	}
	// a header Metal does not have is still an error
	bad := strings.Replace(utils.String(), "<metal_math>", "<metal_maths>", 1)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "utils.h"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = Check(path, opt)
	mustContain(t, "no such header", findingsOf(rep.Manifests[0]), "error   [compile] ", "metal_maths")
}

// Apple's compiler builtins the emulation does not have (it has the math
// and simd ones MLX's bf16_math.h calls) are beyond it: a note, "not
// compiled", exit 0; a typo beside them is not hidden when the builtins
// are absent.
func TestMetalAppleBuiltinsAreNotCompiled(t *testing.T) {
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("no g++")
	}
	src := "#include <metal_math>\nMETAL_FUNC float twice(float x) { return __metal_simd_ballot(x > 0, __METAL_SOME_MODE__) * 2.0f; }\n" + metalKernel
	path := usertest.Write(t, map[string]string{"kernel.yaml": metalManifest("msl_builtins"), "k.metal": src})
	opt := noTools(t)
	opt.CompileMetal = nil
	rep := Check(path, opt)
	r := rep.Manifests[0]
	mustContain(t, "builtins", findingsOf(r), "note    [compile] ", "Apple's Metal compiler builtins", "__METAL_SOME_MODE__, __metal_simd_ballot")
	if rep.ExitCode() != 0 || !strings.Contains(r.Verdict(), "not compiled (Apple's builtins)") {
		t.Errorf("exit %d, verdict %q", rep.ExitCode(), r.Verdict())
	}
	plain := strings.Replace(src, "__metal_simd_ballot(x > 0, __METAL_SOME_MODE__)", "fabz(x)", 1)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "k.metal"), []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = Check(path, opt)
	mustContain(t, "typo", findingsOf(rep.Manifests[0]), "error   [compile] ", "fabz")
}

// Metal's swizzles (read, written, a matrix column's) are beyond the
// emulation: a note naming the first, "not compiled on the emulation
// (swizzles)", exit 0; a typo beside them is still an error.
func TestMetalSwizzlesAreNotCompiled(t *testing.T) {
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("no g++")
	}
	src := "#include <metal_stdlib>\nusing namespace metal;\nMETAL_FUNC float twice(float x) {\n  float4 v = float4(x);\n  v.xy = v.yx;\n  float3x3 M;\n  return v.x + M[0].xyz.x + x;\n}\n" + metalKernel
	path := usertest.Write(t, map[string]string{"kernel.yaml": metalManifest("msl_swizzles"), "k.metal": src})
	opt := noTools(t)
	opt.CompileMetal = nil
	rep := Check(path, opt)
	r := rep.Manifests[0]
	mustContain(t, "swizzles", findingsOf(r), "note    [compile] ", "vector swizzles", "k.metal:5: v.xy = v.yx;")
	if rep.ExitCode() != 0 || !strings.Contains(r.Verdict(), "not compiled on the emulation (swizzles)") {
		t.Errorf("exit %d, verdict %q", rep.ExitCode(), r.Verdict())
	}
	typo := strings.Replace(src, "+ x;", "+ xx;", 1)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "k.metal"), []byte(typo), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = Check(path, opt)
	mustContain(t, "typo", findingsOf(rep.Manifests[0]), "error   [compile] ", "xx")
	if rep.ExitCode() != 1 {
		t.Errorf("a typo beside swizzles: exit %d, want 1", rep.ExitCode())
	}
}

// A [[threadgroup(0)]] parameter without dynamic_tgm, or one at another
// index, gets no memory: a warning at the dispatch; with dynamic_tgm none,
// unless a tgm: item names the parameter too (its bytes count twice).
func TestThreadgroupParamsNeedDynamicTGM(t *testing.T) {
	src := `[[kernel]] void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& rows [[buffer(2)]],
    constant int& cols [[buffer(3)]], threadgroup float* part [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {
  part[0] = X[i]; Y[i] = part[0];
}
`
	const sized = `args: [X, Y, rows, cols], dynamic_tgm: "WG * 4"}`
	for _, c := range []struct {
		name, src, manifest, want string
	}{
		{"sized", src, sized, ""},
		{"unsized", src, "", "dispatch k: parameter part [[threadgroup(0)]] is threadgroup memory sized at dispatch, but the dispatch sets no dynamic_tgm"},
		{"index 1", strings.Replace(src, "threadgroup(0)", "threadgroup(1)", 1), sized, "dispatch k: parameter part [[threadgroup(1)]] gets no threadgroup memory: mltop sets dynamic_tgm at index 0 only"},
		{"listed twice", src, `args: [X, Y, rows, cols], dynamic_tgm: "WG * 4", tgm: [{name: part, bytes: "WG * 4"}]}`,
			"dispatch k lists the threadgroup parameter part [[threadgroup(0)]] as a tgm: item and sets dynamic_tgm: the TGM budget and its limit count those bytes twice; drop the tgm: item"},
		{"another item beside dynamic_tgm", strings.Replace(src, "part[0] = X[i];", "threadgroup float red[4]; red[0] = 0; part[0] = X[i];", 1),
			`args: [X, Y, rows, cols], dynamic_tgm: "WG * 4", tgm: [{name: red, bytes: 16}]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := metalManifest("tg_param")
			if c.manifest != "" {
				m = strings.Replace(m, "args: [X, Y, rows, cols]}", c.manifest, 1)
			}
			rep := Check(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.metal": c.src}), noTools(t))
			got := findingsOf(rep.Manifests[0])
			if c.want == "" && (strings.Contains(got, "threadgroup memory") || strings.Contains(got, "twice")) {
				t.Errorf("want no warning on threadgroup memory:\n%s", got)
			}
			mustContain(t, c.name, got, c.want)
		})
	}
}
