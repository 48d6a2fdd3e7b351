package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A file of a large tree names, for its host launcher, a namespace that
// only a header of the tree declares (onnxruntime's rotary embedding:
// `using namespace onnxruntime::cuda;` beside
// `#include "core/providers/cuda/cu_inc/common.cuh"`). Without the tree
// the header is served empty; the namespace is opened in its stub, so the
// directive compiles and the kernel with it. A namespace alias the file
// declares stays an alias, and a namespace the file declares itself is
// not opened again.
func TestUsingNamespaceOfAMissingLocalHeader(t *testing.T) {
	src := `#include "core/providers/cuda/cu_inc/common.cuh"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
using namespace onnxruntime::cuda;
using namespace ::onnxruntime::cuda;
using namespace cg;
namespace mine { namespace detail { constexpr int two = 2; } }
using namespace mine::detail;
namespace onnxruntime { namespace contrib { namespace cuda {
template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  thread_block b = this_thread_block();
  Y[b.thread_rank()] = X[b.thread_rank()] * (T)two;
}
} } }
`
	m := strings.Replace(usertest.Manifest("using_ns"), "{entry: k,", "{entry: \"onnxruntime::contrib::cuda::k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	prog, f := preparedProgram(t, path, profiler.F32)
	stub := f.prep["cuda"].stubs["core/providers/cuda/cu_inc/common.cuh"]
	if want := "namespace onnxruntime { namespace cuda { } }\n"; strings.Count(stub, want) != 1 {
		t.Errorf("the missing header's stub lacks %q, or has it twice:\n%s", want, stub)
	}
	for _, not := range []string{"namespace cg", "namespace mine"} {
		if strings.Contains(stub, not) {
			t.Errorf("the missing header's stub opens %q:\n%s", not, stub)
		}
	}
	if s := f.prep["cuda"].stubs["cooperative_groups.h"]; strings.Contains(s, "namespace onnxruntime") {
		t.Errorf("a toolkit header's stub opens the namespaces:\n%s", s)
	}
	compileOrSkip(t, prog)
}
