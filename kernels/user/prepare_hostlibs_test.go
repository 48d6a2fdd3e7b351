package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// thrustProgram is a whole program in the style of the OLCF exercises: a
// kernel, and a main() that checks it against thrust's containers and
// algorithms and CUB's device-wide reduction.
const thrustProgram = `#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/remove.h>
#include <thrust/execution_policy.h>
#include <thrust/complex.h>
#include <cub/device/device_reduce.cuh>
using namespace thrust::placeholders;
__global__ void k(const T* X, T* Y, int rows, int cols) {
  // DEVICE_USE
  Y[threadIdx.x] = 2 * X[threadIdx.x];
}
int main() {
  thrust::device_vector<float> v(16);
  thrust::remove(thrust::device, v.begin(), v.end(), -1.0f);
  thrust::host_vector<float> h = v;
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, thrust::raw_pointer_cast(v.data()), thrust::raw_pointer_cast(v.data()), 16);
  printf("%f\n", h[0]);
  return 0;
}
`

// Thrust's containers, algorithms and execution policies and CUB's
// device-wide algorithms are served as stubs when only host code names
// them (with their namespace, for a using-directive); thrust's
// device-usable headers are stubs only when device code names no thrust
// at all; device code that names a host part keeps the real headers.
func TestHostLibraryHeadersStubbed(t *testing.T) {
	hostThrust := []string{"thrust/device_vector.h", "thrust/host_vector.h", "thrust/remove.h", "thrust/execution_policy.h"}
	for _, c := range []struct {
		name, deviceUse           string
		thrustStubbed, cubStubbed bool
		complexStubbed            bool
	}{
		{"only main uses them", "", true, true, true},
		{"device code uses thrust::complex", "thrust::complex<float> z(1.0f, 2.0f); (void)thrust::abs(z);", true, true, false},
		{"a comment names thrust::sort", "// thrust::sort would do; cub::DeviceRadixSort too", true, true, true},
		{"device code sorts with thrust::seq", "float a[2] = {1, 0}; thrust::sort(thrust::seq, a, a + 2);", false, true, false},
		{"device code names cub::DeviceReduce", "using R = cub::DeviceReduce; (void)sizeof(R);", true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			withToolkit(t, append(fullToolkit, "thrust/device_vector.h", "thrust/complex.h", "cub/device/device_reduce.cuh")...)
			src := strings.Replace(thrustProgram, "// DEVICE_USE", c.deviceUse, 1)
			_, f := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("thrust_host"), "k.cu": src}), profiler.F32)
			stubs := f.prep["cuda"].stubs
			for _, h := range hostThrust {
				if s, ok := stubs[h]; ok != c.thrustStubbed || ok && !strings.Contains(s, "namespace thrust { namespace placeholders {} }") {
					t.Errorf("<%s> stubbed %v, want %v:\n%s", h, ok, c.thrustStubbed, s)
				}
			}
			if _, ok := stubs["cub/device/device_reduce.cuh"]; ok != c.cubStubbed {
				t.Errorf("<cub/device/device_reduce.cuh> stubbed %v, want %v", ok, c.cubStubbed)
			}
			if _, ok := stubs["thrust/complex.h"]; ok != c.complexStubbed {
				t.Errorf("<thrust/complex.h> stubbed %v, want %v", ok, c.complexStubbed)
			}
		})
	}
}

// TestThrustHostProgramCompilesWithNVRTC: the program compiles with NVRTC
// and the toolkit's thrust where they are found (NVRTC gave 35 errors in
// thrust's headers before); it skips elsewhere.
func TestThrustHostProgramCompilesWithNVRTC(t *testing.T) {
	// with <thrust/complex.h> and <thrust/functional.h>: only main() uses
	// thrust, so they are stubs too (under NVRTC 11.8 the real ones fail)
	src := strings.Replace(thrustProgram, "#include <thrust/complex.h>\n", "#include <thrust/complex.h>\n#include <thrust/functional.h>\n", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("thrust_nvrtc"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}
