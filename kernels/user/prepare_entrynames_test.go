package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// traitsKernel is a kernel templated on a traits struct that it names
// only through its template parameter; the host launcher names the
// struct itself. Block's member alias used as a qualifier (L::Storage)
// reads as a namespace no file declares, which makes Block, and Traits
// that names it, candidates for host-only. HostCache is really host-only.
const traitsKernel = `#include <vector>
template <typename E, int N> struct Loader { struct Storage { E v[N]; }; };
template <typename E, int N> struct Block {
  using L = Loader<E, N>;
  typename L::Storage s;
};
template <int N_, typename E_> struct Traits {
  using B = Block<E_, N_>;
  static constexpr int kN = N_;
  static constexpr int kBytes = sizeof(B);
};
struct HostCache { std::vector<float> scales; };
template <typename Kt>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  int i = blockIdx.x * cols + threadIdx.x;
  if (threadIdx.x < cols) Y[i] = X[i] * (T)Kt::kBytes;
}
template <int N>
void launch(const T* X, T* Y, int rows, int cols, HostCache& cache) {
  using Kt = Traits<N, float>;
  k<Kt><<<rows, Kt::kN * 16>>>(X, Y, rows, cols);
}
`

// The manifest's entry k<Traits<4, float>> names Traits, which in the
// files only the host launcher names: it and Block, which it needs, stay
// for NVRTC to instantiate the entry; HostCache, which neither device
// code nor an entry names, is still blanked. With NVRTC and the toolkit's
// headers found, the entry compiles and resolves.
func TestPrepareEntryNamesKeepTraits(t *testing.T) {
	withToolkit(t)
	m := strings.Replace(usertest.Manifest("entry_traits"), "{entry: k,", `{entry: "k<Traits<4, float>>",`, 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": traitsKernel})
	prog, _ := preparedProgram(t, path, profiler.F32)
	for _, want := range []string{"struct Traits {", "struct Block {", "typename L::Storage s;", "struct Loader"} {
		if !strings.Contains(prog.Code, want) {
			t.Errorf("%q blanked, want it kept:\n%s", want, prog.Code)
		}
	}
	for _, lack := range []string{"struct HostCache", "std::vector<float> scales", "void launch"} {
		if strings.Contains(prog.Code, lack) {
			t.Errorf("%q kept, want it blanked:\n%s", lack, prog.Code)
		}
	}
	r := compileReportOrSkip(t, prog)
	if !strings.Contains(r.Lowered, "Traits") {
		t.Errorf("lowered name %q, want k<Traits<4, float>>'s", r.Lowered)
	}
}
