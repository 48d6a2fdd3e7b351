package scaffold

import (
	"testing"
)

// A kernel with no bound check gets the rule that its grid covers the
// elements exactly; any comparison or clamp in its body counts as a guard
// (conservative: no rule then). Each manifest loads, plans and passes
// `mltop check`'s static steps.
func TestRuleForKernelWithoutBoundCheck(t *testing.T) {
	const rule = `  - "N % WG == 0"   # sum3 has no bound check (no comparison of its thread index): the grid must cover N exactly`
	cuda := func(body string) string {
		return "__global__ void sum3(const float* a, const float* b, float* c, int N) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
	}
	for _, c := range []struct {
		name, file, src string
		want, not       []string
	}{
		{"CUDA, unguarded", "k.cu", cuda("    c[i] = a[i] + b[i];\n"), []string{"rules:\n" + rule}, []string{"rules: []"}},
		{"Metal, unguarded", "k.metal", "#include <metal_stdlib>\nusing namespace metal;\nkernel void sum3(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]], device float* c [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n    c[i] = a[i] + b[i];\n}\n",
			[]string{`rules:` + "\n" + `  - "N % WG == 0"   # sum3 has no bound check`}, []string{"rules: []"}},
		{"if guard", "k.cu", cuda("    if (i < N) c[i] = a[i] + b[i];\n"), []string{"rules: []"}, []string{"no bound check"}},
		{"early return", "k.cu", cuda("    if (i >= N) return;\n    c[i] = a[i] + b[i];\n"), []string{"rules: []"}, []string{"no bound check"}},
		{"grid-stride loop", "k.cu", cuda("    for (; i < N; i += blockDim.x * gridDim.x) c[i] = a[i] + b[i];\n"), []string{"rules: []"}, []string{"no bound check"}},
		{"clamped index", "k.cu", cuda("    int j = min(i, N - 1);\n    c[j] = a[j] + b[j];\n"), []string{"rules: []"}, []string{"no bound check"}},
		// the check may be in what the body calls: conservative, a guard
		{"helper given the index", "k.cu", "__device__ void add(const float* a, const float* b, float* c, int i, int n) { if (i < n) c[i] = a[i] + b[i]; }\n" +
			cuda("    add(a, b, c, i, N);\n"), []string{"rules: []"}, []string{"no bound check"}},
		{"lambda to a helper", "k.cu", "template <typename F> __device__ void each(int n, F f) { for (int i = threadIdx.x; i < n; i += blockDim.x) f(i); }\n" +
			"__global__ void sum3(const float* a, const float* b, float* c, int N) {\n    each(N, [=] __device__ (int i) { c[i] = a[i] + b[i]; });\n}\n", []string{"rules: []"}, []string{"no bound check"}},
		{"functor parameter", "k.cu", "struct Add { __device__ void operator()(const float* a, const float* b, float* c, int n) const { int i = threadIdx.x; if (i < n) c[i] = a[i] + b[i]; } };\n" +
			"template <typename F> __global__ void sum3(const float* a, const float* b, float* c, int N, F op) {\n    op(a, b, c, N);\n}\n", nil, []string{"no bound check"}},
		// a math builtin given the index checks nothing
		{"builtin given the index", "k.cu", cuda("    c[i] = sqrtf(a[i]) + fabsf(b[i]) + (float)i;\n"), []string{"rules:\n" + rule}, []string{"rules: []"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "sum3", SrcPath: "/w/" + c.file, Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			if c.file == "k.metal" {
				load(t, res.Text, c.file, c.src) // no Metal device to plan for here
				return
			}
			checkScaffold(t, res.Text, map[string]string{c.file: c.src})
		})
	}
}

// A grid the scaffold cannot turn into a rule gets a TODO instead.
func TestUnguardedGridFromLaunch(t *testing.T) {
	src := "__global__ void sum3(const float* a, float* c) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    c[i] = a[i] * 2.0f;\n}\nint main() {\n    sum3<<<4096, 256>>>(0, 0);\n    return 0;\n}\n"
	res, err := Manifest(Request{Name: "sum3", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"grid: [4096, 1, 1]   # from the launch at line 6; TODO: sum3 has no bound check: the grid × threads must be exactly the elements it covers"}, []string{"rules:\n  -"})
	checkNotesHaveTODOs(t, res)
}
