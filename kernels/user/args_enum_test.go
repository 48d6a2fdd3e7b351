package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// enumTemplateKernel takes its reduction as a template parameter of an
// enum type, as pytorch_scatter's scatter_kernel<scalar_t, REDUCE> does;
// the second kernel's enum is scoped and in a namespace.
const enumTemplateKernel = `enum Reduction { SUM, MEAN, MAX };
template <typename T, Reduction R>
__global__ void k(const T* x, T* y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = R == MAX ? x[i] : x[i] * (R == MEAN ? 0.5f : 1.0f);
}
namespace ops {
enum class Mode : int { Copy = 0, Twice = 1 };
template <Mode M, typename T>
__global__ void j(const T* x, T* y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = M == Mode::Twice ? x[i] * 2.0f : x[i];
}
}  // namespace ops
`

const enumTemplateManifest = `name: enum_k
sources: {cuda: k.cu}
dtypes: [f32]
knobs: {R: {values: [0, 1, 2], default: 2}, M: {values: [0, 1], default: 1}}
dims: {N: {default: 32}}
buffers:
  - {name: x, shape: [N]}
  - {name: y, shape: [N], out: true}
dispatches:
  - {entry: "ENTRY", grid: [1], threads: [32], args: [x, y, N]}
check: none
`

// A knob at a template parameter of an enum type is cast to that type
// (C++ converts no integer to an enum: NVRTC found no instance of
// `k<float, 2>`), qualified as the kernel's namespace names it; the
// dtype and a literal enumerator are left as they are.
func TestEnumTemplateParameterCast(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{"k<T, R>", "k<float, (Reduction)(2)>"},
		{"k<T, {R - 1}>", "k<float, (Reduction)(1)>"},
		{"k<T, MAX>", "k<float, MAX>"},
		{"ops::j<M, T>", "ops::j<(ops::Mode)(1), float>"},
		{"ops::j<ops::Mode::Copy, T>", "ops::j<ops::Mode::Copy, float>"},
	} {
		m := strings.Replace(enumTemplateManifest, "ENTRY", c.entry, 1)
		path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": enumTemplateKernel})
		prog, _ := preparedProgram(t, path, profiler.F32)
		if prog.Entry != c.want {
			t.Errorf("%s: entry %q, want %q", c.entry, prog.Entry, c.want)
			continue
		}
		compileOrSkip(t, prog)
	}
}
