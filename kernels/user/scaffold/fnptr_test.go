package scaffold

import "testing"

// A launch through a local function-pointer variable (exllamav2's
// rms_norm: `fp kernel = pick(n); kernel<<<grid, block>>>(…)`) is the
// entry's launch: its grid and block (here a dim3 whose members are set)
// are read, and the instantiations the variable may hold, returned by a
// picker function (through a macro, or directly) or written in its
// initializer, are the template parameter's values, with a TODO saying the
// launch picks one at run time.
func TestFunctionPointerLaunch(t *testing.T) {
	const kern = `template <int VEC>
__global__ void scale_rows(const float* x, float* y, int cols) {
    for (int i = threadIdx.x; i < cols; i += blockDim.x) y[blockIdx.x * cols + i] = VEC * x[blockIdx.x * cols + i];
}
typedef void (*scale_fn)(const float*, float*, int);
`
	run := func(pick, bind string) string {
		return kern + pick + "void run(const float* x, float* y, int rows, int cols, int vec) {\n" +
			"    dim3 block, grid;\n    block.x = 128;\n    block.y = 1;\n    grid.x = rows;\n" +
			"    " + bind + "\n    kernel<<<grid, block, 0>>>(x, y, cols);\n}\n"
	}
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"a picker returning instantiations through a macro",
			run("#define pick_case(v) \\\n    if (vec == v) return scale_rows<v>\nscale_fn pick(const int vec)\n{\n    pick_case(1);\n    pick_case(2);\n    pick_case(4);\n    return NULL;\n}\n",
				"scale_fn kernel = pick(vec);"),
			[]string{`entry: "scale_rows<VEC>"`,
				"VEC: {values: [1, 2, 4], default: 1}   # TODO: the launch at line 21 runs kernel = pick(vec), which pick (line 8) picks at run time, returning scale_rows<VEC> for these values (lines 10 to 12)",
				"grid: [rows, 1, 1]   # from the launch at line 21", "block: {values: [32, 64, 128, 256, 512, 1024], default: 128, doc: threads per group}   # from the launch at line 21 (block threads)"},
			[]string{"WG", "grid assumes", "the values of template parameter VEC to sweep"}},
		{"a picker returning them directly",
			run("scale_fn pick(int vec) {\n    switch (vec) {\n    case 4: return &scale_rows<4>;\n    case 2: return &scale_rows<2>;\n    default: return &scale_rows<1>;\n    }\n}\n",
				"scale_fn kernel = pick(vec);"),
			[]string{"VEC: {values: [1, 2, 4], default: 4}   # TODO: the launch at line 19 runs kernel = pick(vec), which pick (line 6) picks at run time, returning scale_rows<VEC> for these values (lines 8 to 10)",
				"threads: [block, 1, 1]"}, nil},
		{"instantiations in the initializer",
			run("", "auto kernel = vec > 2 ? scale_rows<4> : scale_rows<1>;"),
			[]string{"VEC: {values: [1, 4], default: 4}   # TODO: the launch at line 12 runs kernel = vec > 2 ? scale_rows<4> : scale_rows<1>, returning scale_rows<VEC> for these values (line 11)",
				"grid: [rows, 1, 1]"}, nil},
		{"one instantiation",
			run("", "scale_fn kernel = scale_rows<8>;"),
			[]string{"VEC: {values: [8], default: 8}   # TODO: the launch at line 12 runs kernel = scale_rows<8>, returning the instantiation at line 11 with 8;"}, nil},
		{"a variable set to something else is no launch of the entry",
			run("scale_fn other(int vec);\n", "scale_fn kernel = other(vec);"),
			[]string{"VEC: {values: [1], default: 1}   # TODO: the values of template parameter VEC to sweep", "threads: [WG, 1, 1]"},
			[]string{"runs kernel"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "scale_rows", SrcPath: "/w/s.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"s.cu": c.src})
		})
	}
}
