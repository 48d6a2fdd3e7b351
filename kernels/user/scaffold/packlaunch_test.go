package scaffold

import (
	"regexp"
	"strings"
	"testing"
)

// applyStructs are a multi_tensor_apply-shaped kernel of our own: a class
// template of pointer lists, an empty functor and a parameter pack.
const applyStructs = `#include <cstdint>
template <int N> struct Lists { float* ptrs[N]; };
template <typename T> struct Functor {
  __device__ void operator()(int64_t chunk, Lists<4>& tl, float a, float b, int mode) {}
};
typedef int mode_t;
template <typename T, typename U, typename... ArgTypes>
__global__ void apply(int64_t chunk, T tl, U callable, ArgTypes... args) {
  callable(chunk, tl, args...);
}
`

// zeroGrid matches a grid: line with a group count of 0.
var zeroGrid = regexp.MustCompile(`grid: \[[^\]]*\b0\b`)

// A parameter-pack kernel launched with its template arguments: the entry
// names them, the pack becomes one arg per type (named after the launch's
// arguments when they are names), the empty functor is {}, and a grid the
// program counts at run time is a TODO quoting the launch, never a 0.
func TestScaffoldPackLaunch(t *testing.T) {
	const entry = `  - entry: "apply<Lists<4>, Functor<float>, float, float, mode_t>"`
	for _, tc := range []struct {
		name, host string
		want       []string
	}{
		{"dim3 of a runtime count", `void host(Lists<4> tl, int64_t chunk, float a, float b, mode_t mode, int nblocks) {
  dim3 grid(nblocks);
  apply<Lists<4>, Functor<float>, float, float, mode_t><<<grid, 512>>>(chunk, tl, Functor<float>(), a, b, mode);
}`, []string{entry, "    args: [chunk, {ptrs: [ptrs_0, ptrs_1, ptrs_2, ptrs_3]}, {}, a, b, mode]",
			"the launch at line 13 has grid dim3 grid(nblocks), which names no dims mltop knows"}},
		{"a count from 0 the loop increments", `void host(Lists<4> tl, int64_t chunk, float a, float b, mode_t mode, int ntensors) {
  int loc_block_info = 0;
  for (int t = 0; t < ntensors; t++) {
    loc_block_info++;
    if (loc_block_info == 4) {
      apply<Lists<4>, Functor<float>, float, float, mode_t><<<loc_block_info, 512, 0>>>(chunk, tl, Functor<float>(), a, b, mode);
    }
  }
}`, []string{entry, "{}, a, b, mode]", "the launch at line 16 has grid `loc_block_info`"}},
		{"literal pack arguments", `void host(Lists<4> tl, int64_t chunk, mode_t mode) {
  apply<Lists<4>, Functor<float>, float, float, mode_t><<<dim3(0), 512>>>(chunk, tl, Functor<float>(), 0.9f, 0.999f, mode);
}`, []string{entry, "{}, args_0, args_1, mode]", "args_0: 1.0   # TODO: the value the kernel gets for args_0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := applyStructs + tc.host + "\n"
			res, err := Manifest(Request{Name: "my_apply", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			if zeroGrid.MatchString(res.Text) {
				t.Errorf("a grid of 0 groups:\n%s", res.Text)
			}
			if !strings.Contains(res.Text, "TODO: guessed one thread per element") {
				t.Errorf("the runtime grid has no TODO:\n%s", res.Text)
			}
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"k.cu": src})
		})
	}
}

// Every way a launch's grid reaches grid: refuses one of 0 groups.
func TestGridNeverZero(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"int blocks = 0;\n  blocks += n / 256;\n  k<<<blocks, 256>>>(y, n);", "has grid `blocks`, which names no dims"},
		{"int g = 0;\n  ++g;\n  k<<<g, 256>>>(y, n);", "grid: [g, 1, 1]   # from the launch at line 5: one group per g"},
		{"int g = 0;\n  k<<<g, 256>>>(y, n);", "grid: [g, 1, 1]   # from the launch at line 4: one group per g"},
		{"dim3 grid(0);\n  k<<<grid, 256>>>(y, n);", "has grid dim3 grid(0), which names no dims"},
		{"k<<<0, 256>>>(y, n);", "has grid `0`, which names no dims"},
		{"k<<<(0), 256>>>(y, n);", "has grid `(0)`, which names no dims"},
	} {
		src := "__global__ void k(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 0; }\n" +
			"void host(float* y, int n) {\n  " + tc.host + "\n}\n"
		res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if zeroGrid.MatchString(res.Text) || !strings.Contains(res.Text, tc.want) {
			t.Errorf("%s: a grid of 0 groups, or no %q:\n%s", tc.host, tc.want, res.Text)
		}
	}
}

// A launch that leaves the template arguments to deduction: the entry
// names them from the launching code (a local's declared type, a
// temporary's type or its typedef's, a parameter's type, a cast's, a
// literal's), the pack too, and the args follow the parameters.
func TestScaffoldDeducedLaunch(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		want       []string
	}{
		{"declared, temporary, cast", `void host(int64_t chunk, float a, double b, int m, int nblocks) {
  Lists<4> tl;
  apply<<<nblocks, 512>>>(chunk, tl, Functor<float>(), a, b, (mode_t)m);
}`, []string{`  - entry: "apply<Lists<4>, Functor<float>, float, double, mode_t>"`,
			"    args: [chunk, {ptrs: [ptrs_0, ptrs_1, ptrs_2, ptrs_3]}, {}, a, b, m]"}},
		{"typedef'd functor, literals", `typedef Functor<float> F32;
void host(int64_t chunk, const Lists<4>& tl, int nblocks) {
  apply<<<nblocks, 512>>>(chunk, tl, F32(), 0.5f, 2.0, 3);
}`, []string{`  - entry: "apply<Lists<4>, Functor<float>, float, double, int>"`, "{}, args_0, args_1, args_2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := applyStructs + tc.host + "\n"
			res, err := Manifest(Request{Name: "my_apply", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, tc.want, []string{"parameter pack", "no bound check"})
			checkNotesHaveTODOs(t, res)
			checkScaffold(t, res.Text, map[string]string{"k.cu": src})
		})
	}
}

// A launch's arguments split at the commas outside (), {}, [] and
// template argument lists; a comparison's < is no list.
func TestSplitArgsTemplateLists(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"n, tl, AdamFunctor<float, float>(), beta1", []string{"n", "tl", "AdamFunctor<float, float>()", "beta1"}},
		{"x, ns::F<Lists<4>, 2>{}, y", []string{"x", "ns::F<Lists<4>, 2>{}", "y"}},
		{"a < b, c > d", []string{"a < b", "c > d"}},
		{"a<b, c>d", []string{"a<b", "c>d"}},
		{"std::min<int>(a, b), {1, 2}", []string{"std::min<int>(a, b)", "{1, 2}"}},
	} {
		if got := splitArgs(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("splitArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
