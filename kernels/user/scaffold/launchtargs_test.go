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
		{"a dispatch switch: the first launch, the others in a TODO", launch("    if (hidden % 8 == 0) row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else if (hidden % 4 == 0) row_absmax<scalar_t, float, 4><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    else row_absmax<scalar_t, float, 1><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n" +
			"    row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"   # TODO: from the launch at line 9; the source also launches it as <scalar_t, float, 4> at line 10, <scalar_t, float, 1> at line 11: add a dispatch for each you want`,
				"VEC: {values: [8], default: 8}"},
			[]string{"float, 8> at line 12"}},
		{"no template arguments at the launch: as before", launch("    row_absmax<<<tokens, 256>>>((const float*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, scalar_t, VEC>"`, "VEC: {values: [1], default: 1}   # TODO: the values of template parameter VEC to sweep"}, nil},
		{"a launch in a comment does not count", launch("    // row_absmax<double, double, 2><<<tokens, 256>>>(x, s, hidden);\n    row_absmax<scalar_t, float, 8><<<tokens, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{`entry: "row_absmax<scalar_t, float, VEC>"`}, []string{"double", "also launches"}},
		{"a grid that counts blocks is no dim", launch("    int blocks = (tokens * hidden + 255) / 256;\n    row_absmax<scalar_t, float, 8><<<blocks, 256>>>((const scalar_t*)x, s, hidden);\n"),
			[]string{"TODO: guessed one thread per element of hidden"}, []string{"blocks: {default"}},
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
