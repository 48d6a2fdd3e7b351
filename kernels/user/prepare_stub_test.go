package user

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// <cub/cub.cuh> reaches NVRTC as CUB's device-side headers (guarded by
// __has_include) when the toolkit has CUB, and is left alone without it
// (so a missing CUB is NVRTC's own "cannot open source file").
func TestCubHeaderIsDeviceSideOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cub", "cub.cuh"), []byte("// the real one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stub, ok := cudaStub("cub/cub.cuh", toolkitHeaders{dirs: []string{dir}})
	if !ok || !strings.Contains(stub, "#include <cub/block/block_reduce.cuh>") || !strings.Contains(stub, "__has_include(<cub/warp/warp_reduce.cuh>)") || strings.Contains(stub, "device/") {
		t.Errorf("with CUB: stub %v\n%s", ok, stub)
	}
	if _, ok := cudaStub("cub/cub.cuh", toolkitHeaders{}); ok {
		t.Error("without CUB, <cub/cub.cuh> is stubbed")
	}
	if _, ok := cudaStub("cub/block/block_reduce.cuh", toolkitHeaders{dirs: []string{dir}}); ok {
		t.Error("a CUB device header is stubbed")
	}
}

// hostHeadersProgram is a whole program that includes the toolkit's
// host-only headers (driver_functions.h, channel_descriptor.h,
// cuda_occupancy.h) for its main() beside the ones device code can use.
const hostHeadersProgram = `#include <cuda_runtime.h>
#include <driver_functions.h>
#include <channel_descriptor.h>
#include <cuda_occupancy.h>
#include <driver_types.h>
#include <vector_functions.h>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  float2 p = make_float2(1.0f, 2.0f);
  Y[threadIdx.x] = X[threadIdx.x] * p.y;
}
int main() {
  cudaPitchedPtr pitched = make_cudaPitchedPtr(0, 0, 0, 0);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  (void)pitched; (void)desc;
  return 0;
}
`

// The toolkit's headers that fail alone under NVRTC (host functions in
// JIT mode) are stubs; the ones device code can use (they compile alone
// under NVRTC 11.8) are the toolkit's.
func TestHostOnlyToolkitHeadersStubbed(t *testing.T) {
	real := []string{"driver_types.h", "vector_functions.h", "cuda_texture_types.h", "cuda_surface_types.h"}
	stubbed := []string{"cuda_runtime.h", "driver_functions.h", "channel_descriptor.h", "cuda_occupancy.h"}
	withToolkit(t, append(append(append([]string{}, fullToolkit...), real...), stubbed...)...)
	withTextures := strings.Replace(hostHeadersProgram, "#include <vector_functions.h>\n", "#include <vector_functions.h>\n#include <cuda_texture_types.h>\n#include <cuda_surface_types.h>\n", 1)
	_, f := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("host_headers"), "k.cu": withTextures}), profiler.F32)
	stubs := f.prep["cuda"].stubs
	for _, h := range stubbed {
		if s, ok := stubs[h]; !ok || !strings.Contains(s, "is host-only") {
			t.Errorf("<%s> is not a stub: %v %q", h, ok, s)
		}
	}
	for _, h := range real {
		if s, ok := stubs[h]; ok {
			t.Errorf("<%s> is a stub, want the toolkit's:\n%s", h, s)
		}
	}
	for _, h := range []string{"cudaGL.h", "cuda_gl_interop.h", "cudaEGL.h", "cuda_vdpau_interop.h", "curand_mtgp32_host.h"} {
		if !isHostOnly(h) {
			t.Errorf("<%s> is not host-only", h)
		}
	}
	for _, h := range []string{"curand_kernel.h", "curand_mtgp32_kernel.h", "vector_types.h", "surface_functions.h"} {
		if isHostOnly(h) {
			t.Errorf("<%s> is host-only", h)
		}
	}
}

// TestHostOnlyToolkitHeadersCompileWithNVRTC: the program compiles with
// NVRTC and the toolkit's headers where they are found (before, NVRTC
// refused driver_functions.h's host functions); it skips elsewhere.
//
// The program leaves out cuda_texture_types.h and cuda_surface_types.h:
// they stay the toolkit's (TestHostOnlyToolkitHeadersStubbed), and CUDA
// 13's toolkit lacks at least one of them, which NVRTC then names
// ("cannot open source file"), as nvcc would.
func TestHostOnlyToolkitHeadersCompileWithNVRTC(t *testing.T) {
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("host_headers_nvrtc"), "k.cu": hostHeadersProgram}), profiler.F32)
	compileOrSkip(t, prog)
}

// curand.h is the toolkit's, not a stub: curand_kernel.h includes it for
// curandDistribution_t, so a program that also includes it (host code
// creating a generator) must get the real one for its device RNG to
// compile. Without a toolkit it is still a stub.
func TestCurandHeaderServedForCurandKernel(t *testing.T) {
	if isHostOnly("curand.h") {
		t.Error("curand.h is host-only: curand_kernel.h then lacks curandDistribution_t")
	}
	if s, ok := cudaStub("curand.h", toolkitHeaders{}); !ok || !strings.Contains(s, "is host-only") {
		t.Errorf("without a toolkit, curand.h is not a stub: %v %q", ok, s)
	}
	src := `#include <cuda_runtime.h>
#include <curand_kernel.h>
#include "curand.h"
__global__ void k(const T* X, T* Y, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t st;
  curand_init(7ULL, i, 0, &st);
  Y[i] = X[i] + 0.f * curand_uniform(&st);
}
int main() { curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT); return 0; }
`
	prog, f := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("curand_both"), "k.cu": src}), profiler.F32)
	if s, ok := f.prep["cuda"].stubs["curand.h"]; ok && tkHasCurand() {
		t.Errorf("curand.h is a stub beside the toolkit's:\n%s", s)
	}
	compileOrSkip(t, prog)
}

// tkHasCurand: the toolkit found here has curand.h.
func tkHasCurand() bool {
	dir := os.Getenv("MLTOP_CUDA_INCLUDE")
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "curand.h"))
	return err == nil
}
