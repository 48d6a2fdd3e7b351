package scaffold

import "testing"

// Host code under `#ifndef __CUDA_ARCH__` (or `#if !defined(…)`) is host
// code: mltop new reads its launches, its symbol fills and the launcher
// headers it includes, as nvcc's host pass does; NVRTC's view (the
// loader's) would take it as dead.
func TestScaffoldReadsHostCodeUnderArchGuard(t *testing.T) {
	const kern = "#include <cuda_runtime.h>\n__constant__ float c_taps[9];\n" +
		"__global__ void scale(const float* x, float* y, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
		"    float s = 0; for (int k = 0; k < 9; k++) s += c_taps[k];\n    if (i < n) y[i] = s * x[i];\n}\n"
	const host = "void launch(const float* x, float* y, int n) {\n    float h[9] = {0};\n    cudaMemcpyToSymbol(c_taps, h, sizeof(h));\n" +
		"    scale<<<(n + 127) / 128, 128>>>(x, y, n);\n}\n"
	symbol := `- {name: c_taps, symbol: true, dtype: f32, shape: [9]`
	for _, c := range []struct {
		name, src string
		files     map[string]string
		want      []string
	}{
		{"#ifndef __CUDA_ARCH__", kern + "#ifndef __CUDA_ARCH__\n" + host + "#endif\n", nil,
			[]string{symbol, "(cudaMemcpyToSymbol at line 11)", `grid: ["(n + 127) / 128", 1, 1]   # from the launch at line 12`, "WG: {values: [128], default: 128"}},
		{"#if !defined(__CUDA_ARCH__)", kern + "#if !defined(__CUDA_ARCH__)\n" + host + "#endif\n", nil,
			[]string{symbol, `grid: ["(n + 127) / 128", 1, 1]`}},
		{"the #else of #ifdef __CUDA_ARCH__", kern + "#ifdef __CUDA_ARCH__\n#define WHERE 1\n#else\n" + host + "#endif\n", nil,
			[]string{symbol, `grid: ["(n + 127) / 128", 1, 1]`}},
		{"a launcher header included under the guard", kern + "#ifndef __CUDA_ARCH__\n#include \"launch.cuh\"\n#endif\n",
			map[string]string{"launch.cuh": host},
			[]string{symbol, "(cudaMemcpyToSymbol at line 3 of launch.cuh)", `grid: ["(n + 127) / 128", 1, 1]   # from the launch at line 4 of launch.cuh`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_scale", SrcPath: "/w/scale.cu", Src: c.src, Dir: "/w", Read: readFrom(c.files)})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, []string{"TODO: guessed one thread"})
			checkNotesHaveTODOs(t, res)
		})
	}
}
