package scaffold

import (
	"regexp"
	"testing"
)

// The launch reader never panics, and a grid it turns into an expression
// names only the plan's dims and knobs and the functions it allows.
func FuzzFindLaunch(f *testing.F) {
	f.Add("void l(int N, int block_size) { const int g = ceil_div(N * 32, (long) block_size); k<<<g, block_size>>>(N); }\nint bs[] = {1};")
	f.Add("k<<<(N + 255) / 256, 256, 0, stream>>>(x);")
	f.Add("// k<<<1, 64>>>(x);\nk<T, 4><<<dim3(N), dim3(B)>>>(x);")
	f.Add("k<<<")
	p := &plan{taken: map[string]string{"N": "dim", "block_size": "knob", "x": "buffer"}}
	names := regexp.MustCompile(`[A-Za-z_]\w*`)
	f.Fuzz(func(t *testing.T, src string) {
		lb, ok := findLaunch(src, "k")
		if !ok {
			return
		}
		if lb.name != "" && !identifier.MatchString(lb.name) {
			t.Errorf("block name %q", lb.name)
		}
		if e := gridExpr(lb.grid, p); e != "" {
			for _, n := range names.FindAllString(e, -1) {
				if k := p.taken[n]; n != "cdiv" && n != "min" && n != "max" && k != "dim" && k != "knob" {
					t.Errorf("grid %q names %s", e, n)
				}
			}
		}
	})
}

// A 2-D dim3 block of literals is the threads; the grid is the launch's
// dim3 grid when its sizes are expressions of dims (a cdiv helper
// renamed), else a TODO; a block of names stays a TODO. Each manifest
// loads, plans and passes `mltop check`.
func TestTwoDimLaunch(t *testing.T) {
	kernel := "__global__ void blur(const float* in, float* out, int W, int H) {\n" +
		"    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n" +
		"    if (x < W && y < H) out[y * W + x] = in[y * W + x];\n}\n"
	for _, c := range []struct {
		name, host string
		want, not  []string
	}{
		{"dim3 grid of dims", "    dim3 block(16, 16);\n    dim3 grid(div_up(W, 16), div_up(H, 16));\n    blur<<<grid, block>>>(in, out, W, H);\n",
			[]string{"threads: [16, 16, 1]", `grid: ["cdiv(W, 16)", "cdiv(H, 16)", 1]   # from the launch at line 8`},
			[]string{"WG", "TODO: guessed one thread", "TODO: the launch at"}},
		{"dim3 grid = dim3(…), 3-D block", "    dim3 block(8, 8, 4);\n    dim3 grid = dim3((W + 7) / 8, (H + 7) / 8);\n    blur<<<grid, block>>>(in, out, W, H);\n",
			[]string{"threads: [8, 8, 4]", `grid: ["(W + 7) / 8", "(H + 7) / 8", 1]`}, []string{"WG"}},
		{"grid of host variables: a TODO", "    dim3 block(16, 16);\n    dim3 grid(gx, gy);\n    blur<<<grid, block>>>(in, out, W, H);\n",
			[]string{"threads: [16, 16, 1]", `grid: ["cdiv(W * H, 16 * 16 * 1)", 1, 1]   # TODO: guessed one thread per element of W×H`,
				"(the launch at line 8 has grid dim3 grid(gx, gy), which names no dims mltop knows)"},
			[]string{`grid: ["gx`, `grid: [gx`}},
		// a grid expression written over lines (torchvision's roi_pool) is
		// quoted on one comment line: the next would be read as YAML
		{"grid over lines: one comment line", "    dim3 block(16, 16);\n    dim3 grid(std::min(\n        gx,\n        gy));\n    blur<<<grid, block>>>(in, out, W, H);\n",
			[]string{"(the launch at line 10 has grid dim3 grid(std::min(gx, gy)), which names no dims mltop knows)"}, nil},
		{"block of names: a TODO", "    dim3 block(BX, BY);\n    dim3 grid(W / BX, H / BY);\n    blur<<<grid, block>>>(in, out, W, H);\n",
			[]string{"threads: [WG, 1, 1]   # TODO: the launch at line 8 uses dim3 block(BX, BY): set the x, y, z threads"}, nil},
		// dim3s made in place (RWKV's wkv: k<<<dim3(B * H), dim3(_N_)>>>)
		{"dim3s made in place", "    blur<<<dim3(div_up(W, 16), div_up(H, 16)), dim3(16, 16)>>>(in, out, W, H);\n",
			[]string{"threads: [16, 16, 1]", `grid: ["cdiv(W, 16)", "cdiv(H, 16)", 1]   # from the launch at line 6`},
			[]string{"WG", "TODO: guessed one thread", "TODO: the launch at"}},
		{"1-D dim3s made in place", "    blur<<<dim3(W * H / 128), dim3(128)>>>(in, out, W, H);\n",
			[]string{`grid: ["W * H / 128", 1, 1]   # from the launch at line 6`, "WG: {values: [128], default: 128"}, []string{"TODO: guessed one thread"}},
		{"block of names made in place: a TODO", "    blur<<<dim3(W / BX, H / BY), dim3(BX, BY)>>>(in, out, W, H);\n",
			[]string{"threads: [WG, 1, 1]   # TODO: the launch at line 6 uses dim3(BX, BY): set the x, y, z threads"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := kernel + "void run(const float* in, float* out, int W, int H) {\n" + c.host + "}\n"
			res, err := Manifest(Request{Name: "my_blur", SrcPath: "/w/blur.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"blur.cu": src})
		})
	}
}

// A 1-D block written as an expression of the kernel's sizes (RWKV-4's
// `dim3 threadsPerBlock(min(C, 32))`, or `<<<g, min(C, 64)>>>`) is the
// threads, with no knob of the variable's name swept over 32…1024; the
// grid that divides by it divides by the expression. A block of a host
// function (`opt_n_threads(m)`) stays a WG knob with a TODO.
func TestBlockOfDimsExpression(t *testing.T) {
	kernel := "__global__ void wkv(int B, int T, int C, const float* k, float* y) {\n" +
		"    const int idx = blockIdx.x * blockDim.x + threadIdx.x;\n" +
		"    for (int i = 0; i < T; i++) y[idx + i * B * C] = k[idx + i * B * C];\n}\n"
	for _, c := range []struct {
		name, host string
		want, not  []string
	}{
		{"dim3 of an expression", "    dim3 threadsPerBlock( min(C, 32) );\n    dim3 numBlocks(B * C / threadsPerBlock.x);\n    wkv<<<numBlocks, threadsPerBlock>>>(B, T, C, k, y);\n",
			[]string{`threads: ["min(C, 32)", 1, 1]`, `grid: ["B * C / (min(C, 32))", 1, 1]   # from the launch at line 8`, "knobs: {}"}, []string{"threadsPerBlock:", "WG"}},
		{"an expression in the launch", "    wkv<<<B * C / 64, min(C, 64)>>>(B, T, C, k, y);\n",
			[]string{`threads: ["min(C, 64)", 1, 1]`}, []string{"WG:"}},
		{"a host function: a TODO", "    wkv<<<B, opt_n_threads(C)>>>(B, T, C, k, y);\n",
			[]string{"WG: {values: [32, 64, 128, 256, 512, 1024]", "opt_n_threads(C)"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := kernel + "void run(int B, int T, int C, const float* k, float* y) {\n" + c.host + "}\n"
			res, err := Manifest(Request{Name: "wkv", SrcPath: "/w/wkv.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkScaffold(t, res.Text, map[string]string{"wkv.cu": src})
		})
	}
}
