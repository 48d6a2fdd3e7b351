package scaffold

import (
	"testing"
)

// The threads come from the kernel's __launch_bounds__ first (a literal, a
// #define, a template parameter; a block-size parameter's sweep is capped
// at it), else from its launch in the same file (a literal, a #define or
// file-scope const/constexpr, a dim3 of the launching function); the grid
// from the launch when it is a literal, a dim3 of literals or an
// expression of the dims the launch's arguments are bound to. What mltop
// cannot read stays a TODO that says what it saw. Each manifest loads,
// plans and passes `mltop check`'s static steps.
func TestThreadsAndGridFromTheSource(t *testing.T) {
	const body = "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.0f * x[i];\n}\n"
	kernel := func(attrs string) string {
		return "__global__ void " + attrs + "scale(const float* x, float* y, int n) " + body
	}
	main := func(launch string) string {
		return "int main() {\n    int n = 1 << 20;\n    float *x, *y;\n" + launch + "    return 0;\n}\n"
	}
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"__launch_bounds__ literal", kernel("__launch_bounds__(128) ") + main("    scale<<<(n + 127) / 128, 128>>>(x, y, n);\n"),
			[]string{"WG: {values: [128], default: 128, doc: threads per group}   # from __launch_bounds__(128) at line 1, the most threads it is compiled for",
				`grid: ["(n + 127) / 128", 1, 1]   # from the launch at line 8`, "threads: [WG, 1, 1]"},
			[]string{"TODO: the launch at", "TODO: guessed one thread"}},
		{"__launch_bounds__ with min blocks, over a #define", "#define NT 256\n" + kernel("__launch_bounds__(NT, 2) ") + main("    scale<<<n / NT, NT>>>(x, y, n);\n"),
			[]string{"NT: {values: [256], default: 256, doc: threads per group}   # TODO: fixed by the source (line 1: #define NT 256)",
				`grid: ["n / NT", 1, 1]`, "threads: [NT, 1, 1]"}, nil},
		{"__launch_bounds__ of a template parameter", "template <int THREADS>\n__global__ void __launch_bounds__(THREADS) scale(const float* x, float* y, int n) " + body,
			[]string{"THREADS: {values: [32, 64, 128, 256, 512, 1024]", "threads: [THREADS, 1, 1]", `entry: "scale<THREADS>"`}, []string{"WG"}},
		{"__launch_bounds__ caps a block-size parameter", "__global__ void __launch_bounds__(256) scale(const float* x, float* y, int n, int block_size) " + body,
			[]string{"block_size: {values: [32, 64, 128, 256], default: 256, doc: threads per group}   # from the parameter block_size; at most 256: its __launch_bounds__ at line 1"},
			[]string{"512"}},
		{"__launch_bounds__ mltop cannot read, no launch", kernel("__launch_bounds__(2 * 32 * WARPS) "),
			[]string{"threads: [WG, 1, 1]   # TODO: threads per group; the source names no block size for this kernel (its __launch_bounds__(2 * 32 * WARPS) at line 1 is no number or constant mltop reads)"}, nil},
		{"literal launch in main: the grid over the launch's arguments", kernel("") + main("    scale<<<(n + 255) / 256, 256>>>(x, y, n);\n"),
			[]string{"WG: {values: [256], default: 256", `grid: ["(n + 255) / 256", 1, 1]   # from the launch at line 8`}, []string{"TODO: guessed one thread"}},
		{"ceil-div helper over a literal", kernel("") + "int ceil_div(int a, int b) { return (a + b - 1) / b; }\n" + main("    scale<<<ceil_div(n, 512), 512>>>(x, y, n);\n"),
			[]string{"WG: {values: [512], default: 512", `grid: ["cdiv(n, 512)", 1, 1]`}, nil},
		// hqq's dequantize launches: `int n = h*w; int blocks = cdiv(n, BLOCK_SIZE);`
		{"grid over a local of the launching function", kernel("") + "int ceil_div(int a, int b) { return (a + b - 1) / b; }\n" +
			main("    int count = n * 2;\n    int blocks = ceil_div(count, 512);\n    scale<<<blocks, 512>>>(x, y, n);\n"),
			[]string{`grid: ["cdiv((n * 2), 512)", 1, 1]   # from the launch at line 11`}, []string{"TODO: guessed one thread"}},
		{"dim3 block and grid of literals", kernel("") + main("    dim3 block(256); dim3 grid(1024);\n    scale<<<grid, block>>>(x, y, n);\n"),
			[]string{"block: {values: [32, 64, 128, 256, 512, 1024], default: 256", "grid: [1024, 1, 1]   # from the launch at line 9", "threads: [block, 1, 1]"},
			[]string{"TODO: guessed one thread"}},
		{"dim3 grid of a ceil-div over the block's .x", kernel("") + main("    dim3 block(128);\n    dim3 grid((n + block.x - 1) / block.x);\n    scale<<<grid, block>>>(x, y, n);\n"),
			[]string{`grid: ["(n + block - 1) / block", 1, 1]`, "threads: [block, 1, 1]"}, nil},
		{"#define block size the body does not read", "#define THREADS_PER_BLOCK 512\n" + kernel("") + main("    scale<<<(n + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, THREADS_PER_BLOCK>>>(x, y, n);\n"),
			[]string{"WG: {values: [512], default: 512, doc: threads per group}   # TODO: the launch at line 9 uses 512 threads (THREADS_PER_BLOCK, #define at line 1)",
				`grid: ["(n + WG - 1) / WG", 1, 1]`, "threads: [WG, 1, 1]"}, []string{"THREADS_PER_BLOCK:"}},
		{"#define of an expression of other #defines", "#define WARP_SIZE 32\n#define NUM_WARPS 8\n#define NUM_THREADS (NUM_WARPS * WARP_SIZE)  // 256\n" + kernel("__launch_bounds__(NUM_THREADS) ") + main("    scale<<<n / NUM_THREADS, NUM_THREADS>>>(x, y, n);\n"),
			[]string{"NUM_THREADS: {values: [256], default: 256, doc: threads per group}   # TODO: fixed by the source (line 3: #define NUM_THREADS (NUM_WARPS * WARP_SIZE) = 256)",
				`grid: ["n / NUM_THREADS", 1, 1]`, "threads: [NUM_THREADS, 1, 1]"}, []string{"no number or constant mltop reads"}},
		{"file-scope const int", "const int kThreads = 64;\n" + kernel("") + main("    scale<<<n / kThreads, kThreads>>>(x, y, n);\n"),
			[]string{"WG: {values: [64], default: 64", "(kThreads, constant at line 1)", `grid: ["n / WG", 1, 1]`}, nil},
		{"file-scope constexpr through a dim3", "constexpr int NT = 128;\n" + kernel("") + main("    dim3 threads(NT);\n    scale<<<n / NT, threads>>>(x, y, n);\n"),
			[]string{"WG: {values: [128], default: 128", "(NT, constant at line 1)", `grid: ["n / WG", 1, 1]`}, nil},
		// torchvision's nms: the constant in a namespace, const after the
		// type, a sizeof in its value, read by the kernel
		{"namespace's int const of a sizeof", "namespace ops {\nint const kBlock = sizeof(unsigned long long) * 8;\n" +
			"__global__ void scale(const float* x, float* y, int n) {\n    __shared__ float s[kBlock];\n    s[threadIdx.x] = x[blockIdx.x * kBlock + threadIdx.x];\n    __syncthreads();\n    y[blockIdx.x * kBlock + threadIdx.x] = s[kBlock - 1 - threadIdx.x];\n}\n" +
			"void run(const float* x, float* y, int n) {\n    dim3 threads(kBlock);\n    scale<<<n / kBlock, threads>>>(x, y, n);\n}\n}\n",
			[]string{"kBlock: {values: [64], default: 64, doc: threads per group}   # TODO: fixed by the source (line 2: constant kBlock = sizeof(unsigned long long) * 8 = 64)",
				"threads: [kBlock, 1, 1]", `{name: s, bytes: "kBlock * 4"}`}, []string{"WG", "which no knob or dim names"}},
		{"a dim3 of another function is not this launch's", kernel("") + "void other() { dim3 block(64); }\nvoid run(const float* x, float* y, int n, int block) {\n    scale<<<n / block, block>>>(x, y, n);\n}\n",
			[]string{"block: {values: [32, 64, 128, 256, 512, 1024], default: 256", `grid: ["n / block", 1, 1]`}, []string{"default: 64"}},
		{"a launch mltop cannot read", kernel("") + main("    scale<<<blocks_for(n), threads_for(n)>>>(x, y, n);\n"),
			[]string{"threads: [WG, 1, 1]   # TODO: threads per group; the source names no block size for this kernel (the launch at line 8 passes `threads_for(n)`, which mltop cannot read)",
				"# TODO: guessed one thread per element of n; set the groups (blocks) your launch uses (the launch at line 8 has grid `blocks_for(n)`, which names no dims mltop knows)"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_scale", SrcPath: "/w/scale.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"scale.cu": c.src})
		})
	}
}
