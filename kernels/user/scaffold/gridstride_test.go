package scaffold

import "testing"

// A parameter that bounds a grid-stride loop (written out, or a macro of
// one, defined in the source or named like mmcv's and Caffe's
// CUDA_1D_KERNEL_LOOP) is the kernel's work count: a dim, whatever its
// name (nthreads reads as a thread count), and the elements of one thread
// each; a launch's grid helper of that count is read, with its cap.
func TestGridStrideBound(t *testing.T) {
	const kern = `template <typename T>
__global__ void pool_fwd(const int nthreads, const T* in, T* out, const int width) {
  LOOP {
    out[index] = in[index] * (T)(index % width);
  }
}
`
	const defined = "#define EACH_INDEX(i, n) \\\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)\n"
	const helper = "#define TPB 512\ninline int blocks_for(const int N, const int num_threads = TPB) {\n  int optimal = (N + num_threads - 1) / num_threads;\n  int max_block_num = 4096;\n  return min(optimal, max_block_num);\n}\n"
	const host = "void launch(const float* in, float* out, int output_size, int width) {\n  pool_fwd<float><<<blocks_for(output_size), TPB, 0, 0>>>(output_size, in, out, width);\n}\n"
	with := func(pre, loop, post string) string {
		return pre + replaceLoop(kern, loop) + post
	}
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"a macro of the source", with(defined, "EACH_INDEX(index, nthreads)", ""),
			[]string{"nthreads: {default: 1048576, min: 1}   # TODO: default and range; the work count: it bounds the grid-stride loop EACH_INDEX(index, nthreads) at line 5",
				"shape: [nthreads]", `grid: ["cdiv(nthreads, WG)", 1, 1]`, "the grid-stride loop covers nthreads with any grid", "args: [nthreads, in, out, width]"},
			[]string{"nthreads: {values", "rules:\n  -", "no bound check"}},
		{"a macro from a header mltop does not read", with("", "CUDA_1D_KERNEL_LOOP(index, nthreads)", ""),
			[]string{"nthreads: {default: 1048576, min: 1}   # TODO: default and range; the work count: it bounds the grid-stride loop CUDA_1D_KERNEL_LOOP(index, nthreads) at line 3"},
			[]string{"nthreads: {values"}},
		{"a loop written out", with("", "for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < nthreads; index += blockDim.x * gridDim.x)", ""),
			[]string{"nthreads: {default: 1048576, min: 1}   # TODO: default and range; the work count: it bounds the grid-stride loop for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < nthreads; index += blockDim.x * gridDim.x) at line 3"},
			[]string{"nthreads: {values"}},
		{"the launch's grid helper and its cap", with(defined+helper, "EACH_INDEX(index, nthreads)", host),
			[]string{`grid: ["min(cdiv(nthreads, WG), 4096)", 1, 1]   # from the launch at line 16: blocks_for(output_size) read as one thread per element of nthreads, at most 4096 groups as blocks_for at line 6 caps it`,
				"WG: {values: [512], default: 512, doc: threads per group}"},
			[]string{"nthreads: {values", "output_size]"}},
		{"a grid helper with no cap", with(defined+"#define TPB 512\ninline int blocks_for(int n) { return (n + TPB - 1) / TPB; }\n", "EACH_INDEX(index, nthreads)", host),
			[]string{`grid: ["cdiv(nthreads, WG)", 1, 1]   # from the launch at line 12: blocks_for(output_size) read as one thread per element of nthreads; TODO: if blocks_for caps the groups, write the cap: min(cdiv(nthreads, WG), CAP)`},
			nil},
		// broken variants: no grid-stride loop, no bound of one parameter
		{"a block-stride loop is no grid-stride one", with("", "for (int index = threadIdx.x; index < nthreads; index += blockDim.x)", ""),
			[]string{"nthreads: {values: [32, 64, 128, 256, 512, 1024]"}, []string{"the work count"}},
		{"a bound that is an expression", with(defined, "EACH_INDEX(index, nthreads * width)", ""),
			[]string{"nthreads: {values: [32, 64, 128, 256, 512, 1024]"}, []string{"the work count"}},
		{"a macro of another shape", with("#define EACH_INDEX(i, n) for (int i = 0; i < (n); i++)\n", "EACH_INDEX(index, nthreads)", ""),
			[]string{"nthreads: {values: [32, 64, 128, 256, 512, 1024]"}, []string{"the work count"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "pool_fwd", SrcPath: "/w/p.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"p.cu": c.src})
		})
	}
}

func replaceLoop(kern, loop string) string {
	out := ""
	for i := 0; i < len(kern); i++ {
		if i+4 <= len(kern) && kern[i:i+4] == "LOOP" {
			return out + loop + kern[i+4:]
		}
		out += string(kern[i])
	}
	return out
}

// Nested grid-stride loops (Pointnet2's gather_points: blocks stride over
// b on x and c on y) multiply their bounds: neither takes the one-loop
// work count (2^20 each made [b, c, n] 2^50 elements); a single loop
// still does.
func TestNestedGridStrideBounds(t *testing.T) {
	src := `__global__ void gather(int b, int c, int n, int m, const float *points, const int *idx, float *out) {
  for (int i = blockIdx.x; i < b; i += gridDim.x) {
    for (int l = blockIdx.y; l < c; l += gridDim.y) {
      for (int j = threadIdx.x; j < m; j += blockDim.x) {
        out[(i * c + l) * m + j] = points[(i * c + l) * n + idx[i * m + j]];
      }
    }
  }
}
__global__ void scale(int total, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += blockDim.x * gridDim.x) y[i] = 2 * x[i];
}
`
	res, err := Manifest(Request{Name: "gather", SrcPath: "/w/g.cu", Src: src, Dir: "/w", Entries: []string{"gather"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"  b: {default: 1024, min: 1}", "  c: {default: 1024, min: 1}"}, []string{"1048576"})
	res, err = Manifest(Request{Name: "scale", SrcPath: "/w/g.cu", Src: src, Dir: "/w", Entries: []string{"scale"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"  total: {default: 1048576, min: 1}"}, nil)
}
