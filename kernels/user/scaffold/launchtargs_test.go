package scaffold

import (
	"testing"
)

// rowScale is a template kernel of our own like a row-wise int8 quantizer:
// the element type, a scale type only one buffer takes, and a vector width.
const rowScale = `template <typename scalar_t, typename scale_t, int VEC>
__global__ void row_absmax(const scalar_t* x, scale_t* scale, int hidden) {
    float m = 0.f;
    for (int i = threadIdx.x * VEC; i < hidden; i += blockDim.x * VEC) m = fmaxf(m, fabsf((float)x[blockIdx.x * hidden + i]));
    if (threadIdx.x == 0) scale[blockIdx.x] = (scale_t)m;
}
`

// The entry takes the template arguments of the file's launch: the dtype's
// name where the launch passes the type the dtype stands for, a fixed C
// type as itself (and the buffers of that type keep it), a literal or a
// constant as a knob of that value; several launches: the first, with a
// TODO naming the others. A grid that is a name of its own is a dim.
func TestEntryFromLaunchTemplateArgs(t *testing.T) {
	launch := func(body string) string {
		return rowScale + "#define VEC_N 4\nvoid run(const void* x, float* s, int tokens, int hidden) {\n" + body + "}\n"
	}
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"the dispatch's type and a fixed float", launch("    row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"`, "dtype_name: scalar_t", "{name: x, dtype: scalar_t,", "{name: scale, dtype: f32,",
				"VEC: {values: [8], default: 8}   # TODO: the launch at line 9 passes 8;",
				"tokens: {default: 1024, min: 1}", "grid: [tokens, 1, 1]   # from the launch at line 9: one group per tokens"},
			[]string{"<scalar_t, scalar_t", "dtype: scalar_t, shape: [hidden], out", "guessed one thread per element"}},
		{"fixed types only: the kernel runs at f32", launch("    row_absmax<float, float, VEC_N><<<tokens, 256>>>((const float*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<float, float, VEC>"`, "dtypes: [f32]", "{name: x, dtype: f32,", "{name: scale, dtype: f32,",
				"VEC: {values: [4], default: 4}   # TODO: the launch at line 9 passes VEC_N (#define at line 7);"},
			[]string{"dtype_name:", "scalar_t,"}},
		{"a dim3 grid of a name", launch("    dim3 grid(tokens);\n    row_absmax<__half, int8_t, 2><<<grid, 128>>>((const __half*)x, (int8_t*)s, hidden);\n"),
			[]string{`entry: "row_absmax<__half, int8_t, VEC>"`, "{name: x, dtype: f16,", "{name: scale, dtype: i8,", "grid: [tokens, 1, 1]"}, nil},
		{"a dispatch chain of literals: one knob of their values", launch("    if (hidden % 8 == 0) row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else if (hidden % 4 == 0) row_absmax<scalar_t, float, 4><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else row_absmax<scalar_t, float, 1><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{"entry: \"row_absmax<scalar_t, float, VEC>\"\n",
				"VEC: {values: [1, 4, 8], default: 8}   # the values the launches at lines 9, 10, 11 pass (the default: the first's)",
				"threads: [WG, 1, 1]"},
			[]string{"also launches", "VEC: {values: [1, 4, 8], default: 8, doc"}},
		{"a dispatch chain that also changes a type: the first launch, the others in a TODO", launch("    if (hidden % 8 == 0) row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else row_absmax<scalar_t, __half, 4><<<tokens, 256>>>((const scalar_t*)x, (__half*)s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"   # TODO: from the launch at line 9; the source also launches it as <scalar_t, __half, 4> at line 10: add a dispatch for each you want`,
				"VEC: {values: [8], default: 8}"}, nil},
		{"a dispatch chain of a constant and a literal: the first launch, the others in a TODO", launch("    if (hidden % 4 == 0) row_absmax<scalar_t, float, VEC_N><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else row_absmax<scalar_t, float, 1><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{"the source also launches it as <scalar_t, float, 1> at line 10", "VEC: {values: [4], default: 4}"}, nil},
		{"no template arguments at the launch: as before", launch("    row_absmax<<<tokens, 256>>>((const float*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, scalar_t, VEC>"`, "VEC: {values: [1], default: 1}   # TODO: the values of template parameter VEC to sweep"}, nil},
		{"a launch in a comment does not count", launch("    // row_absmax<double, double, 2><<<tokens, 256>>>(x, s, hidden);\n    row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"`}, []string{"double", "also launches"}},
		{"a grid that counts blocks is no dim", launch("    int blocks = (tokens * hidden + 255) / 256;\n    row_absmax<scalar_t, float, 8><<<blocks, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{"TODO: guessed one thread per element of hidden"}, []string{"blocks: {default"}},
		{"a macro's launch over continued lines (Marlin's CALL_IF), a negative literal",
			rowScale + "const int THREADS = 256;\n#define CALL_IF(VEC_ARG) \\\n  else if (vec == VEC_ARG) { \\\n    row_absmax< \\\n      scalar_t, float, VEC_ARG \\\n    ><<<tokens, THREADS>>>( \\\n      (const scalar_t*)x, s, hidden \\\n    ); \\\n  }\n" +
				"void run(const void* x, float* s, int tokens, int hidden, int vec) {\n  if (false) {}\n  CALL_IF(-1)\n  CALL_IF(8)\n}\n",
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"`, "VEC: {values: [-1, 8], default: -1}"},
			[]string{"\\ ", "<\\", "VEC: {values: [1]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "row_absmax", SrcPath: "/w/q.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"q.cu": c.src})
		})
	}
}

func TestLaunchTemplates(t *testing.T) {
	src := "k<float, 4><<<g, b>>>(x);\n// k<int, 2><<<g, b>>>(x);\nk<float,4><<<g, b>>>(y);\nns::k< __half , N * 2 ><<<g, b>>>(x);\nk<<<g, b>>>(x);\n"
	lt, ok := launchTemplates(src, "k")
	if !ok || len(lt.args) != 2 || lt.args[0] != "float" || lt.args[1] != "4" || lt.line != 1 {
		t.Fatalf("first launch: %+v, %v", lt, ok)
	}
	if len(lt.others) != 1 || lt.others[0].args != "__half, N * 2" || lt.others[0].line != 4 {
		t.Errorf("others: %+v", lt.others)
	}
	if _, ok := launchTemplates("k<<<g, b>>>(x);\n", "k"); ok {
		t.Error("a launch without template arguments gave some")
	}
	for in, want := range map[string]bool{"float": true, "int8_t": true, "unsigned  int": true, "__half": true, "scalar_t": false, "T": false, "c10::Half": false, "4": false} {
		if got := fixedCType(in); got != want {
			t.Errorf("fixedCType(%q) = %v, want %v", in, got, want)
		}
	}
}

// rowSum is a template kernel of our own whose block size is a template
// parameter that a host launcher picks at run time.
const rowSum = `template <typename T, int BS>
__global__ void row_sum(const T* x, T* y, int cols) {
    __shared__ T buf[BS];
    T s = 0;
    for (int c = threadIdx.x; c < cols; c += BS) s += x[blockIdx.x * cols + c];
    buf[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) { T t = 0; for (int i = 0; i < BS; i++) t += buf[i]; y[blockIdx.x] = t; }
}
`

// A launcher that switches between instances of one template (a switch, an
// if/else chain, a macro used once per case) that differ only in integer
// literals gives one dispatch whose knob lists those literals; where each
// launch's thread count is its literal, the knob is the threads too. Other
// differences keep the first launch and name the others in a TODO.
func TestDispatchSwitchFolds(t *testing.T) {
	host := func(body string) string {
		return rowSum + "template <typename T>\nvoid run(const T* x, T* y, int rows, int cols, int block) {\n" + body + "}\n"
	}
	cases := "  switch (block) {\n" +
		"    case 128: row_sum<T, 128><<<rows, 128>>>(x, y, cols); break;\n" +
		"    case 256: row_sum<T, 256><<<rows, 256>>>(x, y, cols); break;\n" +
		"    case 512: row_sum<T, 512><<<rows, 512>>>(x, y, cols); break;\n  }\n"
	const macro = "#define LAUNCH_SUM(B) \\\n  row_sum<T, B><<<rows, B>>>(x, y, cols)\n"
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"a switch", host(cases),
			[]string{"BS: {values: [128, 256, 512], default: 128, doc: threads per group}   # the values the launches at lines 13, 14, 15 pass",
				"entry: \"row_sum<T, BS>\"\n", "threads: [BS, 1, 1]", "grid: [rows, 1, 1]", `bytes: "BS * sizeof(T)"`},
			[]string{"also launches", "WG:"}},
		{"an if/else chain, largest first", host("  if (block >= 512) row_sum<T, 512><<<rows, 512>>>(x, y, cols);\n  else if (block >= 256) row_sum<T, 256><<<rows, 256>>>(x, y, cols);\n  else row_sum<T, 64><<<rows, 64>>>(x, y, cols);\n"),
			[]string{"BS: {values: [64, 256, 512], default: 512, doc: threads per group}", "threads: [BS, 1, 1]"}, []string{"also launches"}},
		{"a macro used in each case", macro + host("  switch (block) {\n    case 128: LAUNCH_SUM(128); break;\n    case 256: LAUNCH_SUM(256); break;\n    default: LAUNCH_SUM(1024);\n  }\n"),
			[]string{"BS: {values: [128, 256, 1024], default: 128, doc: threads per group}   # the values the launches at lines 15, 16, 17 pass", "threads: [BS, 1, 1]"},
			[]string{"also launches", "32, 64"}},
		{"a constant per case", host("  switch (block) {\n    case 128: { constexpr int kB = 128; row_sum<T, kB><<<rows, kB>>>(x, y, cols); break; }\n    default: { constexpr int kB = 256; row_sum<T, kB><<<rows, kB>>>(x, y, cols); }\n  }\n"),
			[]string{"BS: {values: [128, 256], default: 128, doc: threads per group}   # the values the launches at lines 13, 14 pass", "threads: [BS, 1, 1]"}, []string{"kB"}},
		{"a dispatch macro that sets a constant per case", "#define BLOCK_SWITCH(b, ...) switch (b) { \\\n  case 64: { constexpr int kB = 64; __VA_ARGS__; } break; \\\n  default: { constexpr int kB = 512; __VA_ARGS__; } }\n" +
			host("  BLOCK_SWITCH(block, row_sum<T, kB><<<rows, kB>>>(x, y, cols));\n"),
			[]string{"BS: {values: [64, 512], default: 64, doc: threads per group}   # the values the launches at lines 2, 3 pass", "threads: [BS, 1, 1]"}, []string{"kB"}},
		{"a macro in a comment is no use of it", macro + host("  // LAUNCH_SUM(64);\n  LAUNCH_SUM(256);\n"),
			[]string{"BS: {values: [256], default: 256, doc: threads per group}   # TODO: the launch at line 15 passes 256", "threads: [BS, 1, 1]"}, []string{"64", "[B, 1, 1]"}},
		{"the threads are not the literal: a knob of the values, threads as the launch has them", host("  if (block == 1) row_sum<T, 128><<<rows, 256>>>(x, y, cols);\n  else row_sum<T, 256><<<rows, 256>>>(x, y, cols);\n"),
			[]string{"BS: {values: [128, 256], default: 128}", "threads: [WG, 1, 1]", "WG: {values: [256]"}, nil},
		{"the cases pass different types too: as before", host("  if (block == 1) row_sum<T, 128><<<rows, 128>>>(x, y, cols);\n  else row_sum<float, 256><<<rows, 256>>>((const float*)x, (float*)y, cols);\n"),
			[]string{"the source also launches it as <float, 256> at line 13: add a dispatch for each you want", "BS: {values: [128], default: 128"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "row_sum", SrcPath: "/w/s.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"s.cu": c.src})
		})
	}
}
