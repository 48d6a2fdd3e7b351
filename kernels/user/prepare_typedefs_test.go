package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// uintKernel is an SGEMM-style kernel that uses glibc's uint the way
// siboehm/SGEMM_CUDA does, with nothing included.
const uintKernel = `__global__ void k(const T* X, T* Y, int rows, int cols) {
    const uint cRow = blockIdx.y;
    for (uint i = threadIdx.x; i < cols; i += blockDim.x) {
        Y[cRow * cols + i] = X[cRow * cols + i];
    }
}
`

// glibc's uint, ushort, ulong (and u_int, …) are typedef'd ahead of a CUDA
// source that uses them and neither declares nor #defines them; never when
// only host code uses them.
func TestPrepareGlibcTypedefs(t *testing.T) {
	withToolkit(t)
	const uintLine = "typedef unsigned int uint;"
	for _, c := range []struct {
		name, src  string
		header     string // common.h, included by the source when not empty
		want, lack []string
	}{
		{"uint used", uintKernel, "", []string{uintLine}, []string{"ushort;", "ulong;", "u_int;"}},
		{"ushort and ulong in a local header", "#include \"common.h\"\n" + usertest.Source + "\n",
			"#pragma once\n__device__ ushort lo(ulong v) { return (ushort)v; }\n",
			[]string{"typedef unsigned short ushort;", "typedef unsigned long ulong;"}, []string{uintLine}},
		{"in a macro body", "#define IDX(r, c) ((uint)(r) * 4 + (c))\n" + usertest.Source + "\n", "", []string{uintLine}, nil},
		{"declared by the source", "typedef unsigned int uint;\n" + uintKernel, "", nil, []string{"typedef unsigned int uint; // glibc"}},
		{"declared in a local header", "#include \"common.h\"\n" + uintKernel, "#pragma once\nusing uint = unsigned;\n", nil, []string{uintLine}},
		{"#defined by the source", "#ifndef uint\n#define uint unsigned\n#endif\n" + uintKernel, "", nil, []string{uintLine}},
		{"only host code uses it", usertest.Source + "\nvoid launch(uint n) { (void)n; }\n", "", nil, []string{uintLine}},
		{"not used", usertest.Source + "\n// uint in a comment\n", "", nil, []string{uintLine}},
		{"a #define under #if 0 does not count", "#if 0\n#define uint unsigned\n#endif\n" + uintKernel, "", []string{uintLine}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"kernel.yaml": usertest.Manifest("glibc"), "k.cu": c.src}
			if c.header != "" {
				files["common.h"] = c.header
			}
			prog, _ := preparedProgram(t, usertest.Write(t, files), profiler.F32)
			head, _, _ := strings.Cut(prog.Code, "#line 1 ")
			for _, w := range c.want {
				if !strings.Contains(head, w) {
					t.Errorf("want %q ahead of the source:\n%s", w, prog.Code)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(head, l) {
					t.Errorf("%q ahead of the source, want none:\n%s", l, prog.Code)
				}
			}
		})
	}
}

// Metal has uint, ushort and ulong built in: nothing is declared.
func TestPrepareGlibcTypedefsNotForMetal(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant uint& rows [[buffer(2)]], constant uint& cols [[buffer(3)]], uint i [[thread_position_in_grid]]) { Y[i] = X[i]; }\n"
	prog, _, _ := metalPreparedProgram(t, "mtl_uint", src)
	if code := prog.Code; strings.Contains(code, "typedef unsigned int uint;") {
		t.Errorf("Metal source got a uint typedef:\n%s", code)
	}
}

// TestGlibcTypedefsCompileWithNVRTC compiles a kernel that uses uint,
// ushort and ulong with NVRTC and the toolkit's headers where they are found
// (no GPU needed); it skips elsewhere.
func TestGlibcTypedefsCompileWithNVRTC(t *testing.T) {
	src := strings.Replace(uintKernel, "const uint cRow", "const ushort lo = (ushort)threadIdx.x; const ulong wide = lo; (void)wide;\n    const uint cRow", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("uint_nvrtc"), "k.cu": "#include <cuda_runtime.h>\n#include <sys/types.h>\n" + src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	r := compileReportOrSkip(t, prog)
	if !strings.Contains(r.Lowered, "k") {
		t.Errorf("lowered name %q", r.Lowered)
	}
}
