package user

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// optionalSource takes a std::optional and passes std::nullopt, after
// <optional>, in __host__ __device__ code.
const optionalSource = `#include <optional>
inline __host__ __device__ int row_of(std::optional<int> batch, int i, int rows) {
  return batch.has_value() ? batch.value() * rows + i : i;
}
__global__ void k(const T* X, T* Y, int rows, int cols) {
  int i = threadIdx.x;
  Y[row_of(std::nullopt, i, rows)] = X[row_of(std::optional<int>(0), i, rows)];
}
`

// fakeOptional is a toolkit's <cuda/std/optional>, for a toolkit whose
// libcu++ has none (CUDA 11.8): just what optionalSource uses.
const fakeOptional = `#pragma once
namespace cuda { namespace std {
struct nullopt_t { explicit constexpr nullopt_t(int) {} };
constexpr nullopt_t nullopt{0};
template <class T> class optional {
  bool has_;
  T v_;
 public:
  __host__ __device__ constexpr optional(nullopt_t) : has_(false), v_() {}
  __host__ __device__ constexpr optional(T v) : has_(true), v_(v) {}
  __host__ __device__ constexpr bool has_value() const { return has_; }
  __host__ __device__ constexpr T value() const { return v_; }
};
} }
`

// TestStdOptionalViaLibcu: with libcu++, <optional> is served as
// <cuda/std/optional> (where the toolkit has it) with std:: naming
// cuda::std::, so std::optional and std::nullopt compile; without
// libcu++ it stays a stub that declares nothing. The compile uses the
// toolkit's <cuda/std/optional> where it has one, else fakeOptional.
func TestStdOptionalViaLibcu(t *testing.T) {
	real := findToolkit()
	stub, _ := cudaStub("optional", toolkitHeaders{libcu: true})
	if !strings.Contains(stub, "#if __has_include(<cuda/std/optional>)\n#include <cuda/std/optional>\n#endif\n") ||
		!strings.Contains(stub, "namespace std { using namespace cuda::std; }") {
		t.Errorf("<optional> with libcu++ is not libcu++'s:\n%s", stub)
	}
	if stub, _ := cudaStub("optional", toolkitHeaders{}); strings.Contains(stub, "cuda/std") {
		t.Errorf("<optional> without libcu++ names libcu++:\n%s", stub)
	}
	withToolkit(t, libcuToolkit...)
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("optional"), "k.cu": optionalSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	if inc := prog.Includes["optional"]; !strings.Contains(inc, "#include <cuda/std/optional>") {
		t.Errorf("the program's <optional> is not libcu++'s:\n%s", inc)
	}

	// compiled with the real toolkit (libcu++'s own headers), and a fake
	// <cuda/std/optional> where its libcu++ has none
	if !real.libcu {
		t.Skip("the toolkit has no libcu++")
	}
	toolkitIncludeDirs = func() []string { return real.dirs }
	prog, _ = preparedProgram(t, path, profiler.F32)
	if !real.has("cuda/std/optional") {
		fake := t.TempDir()
		if err := os.MkdirAll(filepath.Join(fake, "cuda/std"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, "cuda/std/optional"), []byte(fakeOptional), 0o644); err != nil {
			t.Fatal(err)
		}
		prog.IncludeDirs = append([]string{fake}, prog.IncludeDirs...)
	}
	compileOrSkip(t, prog)
}
