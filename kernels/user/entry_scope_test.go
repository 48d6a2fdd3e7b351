package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A template argument the kernel's namespace declares (PyTorch's
// DistanceKernel.cu: `cdist_kernel_cuda_impl<scalar_t, dists<scalar_t>::two>`
// inside `namespace at { namespace native { namespace {`) is looked up as
// C++ looks it up from the kernel's namespace: NVRTC reads the entry as a
// name expression at file scope, where `dists` alone is unknown.
func TestEntryTemplateArgumentsQualifiedByTheKernelsNamespace(t *testing.T) {
	src := `namespace outer { struct Tag { static constexpr int v = 2; }; }
struct Top { static constexpr int v = 5; };
namespace outer { namespace inner { namespace {
template <typename T>
struct norms {
  struct two { static __device__ T finish(T a) { return a * a; } };
};
namespace ops { template <typename T> struct scale { static __device__ T by(T a) { return a * 3; } }; }
template <typename T, typename F, int N>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  Y[threadIdx.x] = F::finish(X[threadIdx.x]) + (T)N;
}
template <typename T, typename F>
__global__ void k2(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = F::by(X[threadIdx.x]); }
} } }
`
	for _, tc := range []struct{ entry, want string }{
		{"outer::inner::k<T, norms<T>::two, Tag::v>", "outer::inner::k<float, outer::inner::norms<float>::two, outer::Tag::v>"},
		{"outer::inner::k<T, norms<T>::two, Top::v>", "outer::inner::k<float, outer::inner::norms<float>::two, Top::v>"},
		{"outer::inner::k<T, outer::inner::norms<T>::two, 1>", "outer::inner::k<float, outer::inner::norms<float>::two, 1>"},
		{"outer::inner::k2<T, ops::scale<T>>", "outer::inner::k2<float, outer::inner::ops::scale<float>>"},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			m := strings.Replace(usertest.Manifest("ns_template_args"), "{entry: k,", "{entry: \""+tc.entry+"\",", 1)
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
			prog, _ := preparedProgram(t, path, profiler.F32)
			if prog.Entry != tc.want {
				t.Fatalf("entry %q, want %q", prog.Entry, tc.want)
			}
			compileOrSkip(t, prog)
		})
	}
}
