package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A whole program's local header keeps, beside a device helper, typedefs
// of what only the host headers it includes declare (a thread type, a
// FILE*, a clock): those reach NVRTC blanked (lines kept), what device
// code uses stays, and the program compiles.
func TestPrepareBlanksTypedefsOfStubbedHeaders(t *testing.T) {
	header := `#pragma once
#include <pthread.h>
#include <stdio.h>
#include <time.h>
typedef pthread_t Worker;
typedef FILE* Sink;
using Ticks = clock_t;
typedef void *(*WorkerMain)(void *);
typedef float Scale;
Worker spawn(WorkerMain f, void *arg);
__device__ inline float twice(Scale x) { return 2 * x; }
`
	src := "#include \"util.h\"\n__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = twice(X[threadIdx.x]); }\n" +
		"int main() { Worker w = spawn(0, 0); Sink s = stdout; Ticks c = clock(); return 0; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("host_typedefs"), "k.cu": src, "util.h": header})
	prog, _ := preparedProgram(t, path, profiler.F32)
	h := prog.Includes["util.h"]
	for _, gone := range []string{"pthread_t", "FILE*", "clock_t", "Worker spawn"} {
		if strings.Contains(h, gone) {
			t.Errorf("%q reaches NVRTC:\n%s", gone, h)
		}
	}
	if !strings.Contains(h, "typedef float Scale;") || strings.Count(h, "\n") < strings.Count(header, "\n") {
		t.Errorf("the device typedef or the lines are gone:\n%s", h)
	}
	compileOrSkip(t, prog)
}

// A whole program's host-only Stopwatch class (<time.h>'s timespec,
// clock_gettime, CLOCK_MONOTONIC) reaches NVRTC blanked, and the kernel
// beside it compiles.
func TestPrepareBlanksTimeClass(t *testing.T) {
	src := `#include <time.h>
class Stopwatch {
  struct timespec m_start;
 public:
  void Start() { clock_gettime(CLOCK_MONOTONIC, &m_start); }
};
__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = 2 * X[threadIdx.x]; }
`
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("time_class"), "k.cu": src}), profiler.F32)
	for _, gone := range []string{"timespec", "clock_gettime"} {
		if strings.Contains(prog.Code, gone) {
			t.Errorf("%q reaches NVRTC:\n%s", gone, prog.Code)
		}
	}
	compileOrSkip(t, prog)
}

// A local header defining its host-only timer once per platform, each
// branch opening the namespace the code after the #endif closes (Kaldi's
// base/timer.h), and an unused constant initialized by a call (Kaldi's
// kaldi-math.h): both reach NVRTC blanked, and the program compiles.
func TestPrepareBlanksClassPerBranch(t *testing.T) {
	header := `#pragma once
#include <limits>
#if defined(_MSC_VER)
#include <windows.h>
namespace app {
class Timer {
 public:
  void Reset() { QueryPerformanceCounter(&start_); }
 private:
  LARGE_INTEGER start_;
};
#else
#include <sys/time.h>
namespace app {
class Timer {
 public:
  void Reset() { gettimeofday(&start_, &zone_); }
 private:
  struct timeval start_;
  struct timezone zone_;
};
#endif
class Profiler { Timer tim_; };
const float kLogZero = -std::numeric_limits<float>::infinity();
__device__ inline float twice(float x) { return 2 * x; }
}
`
	src := "#include \"timer.h\"\n__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = app::twice(X[threadIdx.x]); }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("timer_per_branch"), "k.cu": src, "timer.h": header})
	prog, _ := preparedProgram(t, path, profiler.F32)
	h := prog.Includes["timer.h"]
	for _, gone := range []string{"timeval", "LARGE_INTEGER", "Profiler", "kLogZero"} {
		if strings.Contains(h, gone) {
			t.Errorf("%q reaches NVRTC:\n%s", gone, h)
		}
	}
	compileOrSkip(t, prog)
}
