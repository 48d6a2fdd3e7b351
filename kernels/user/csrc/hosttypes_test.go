package csrc

import (
	"strings"
	"testing"
)

// A framework header keeps, beside what kernels use, aliases and classes
// only its host code needs, naming what only host headers declare: those
// are marked host (and blanked); what device code uses, or what names no
// host-only thing, stays.
func TestMarkHostOnly(t *testing.T) {
	const header = `#pragma once
#include <vector>
#include <cublas_v2.h>
namespace flags = gflags_impl;
namespace cg = cooperative_groups;
#define GRID_LOOP(i, n) for (int i = threadIdx.x; i < (n); i += blockDim.x)
#define AS_HANDLE(x) (HandleBox*)(x)
namespace lib {
using std::vector;
using std::min;
using std::iterator;
using boost::scoped_array;
class Registry {
 public:
  static Registry& Get();
  cublasHandle_t handle() const { return handle_; }
 private:
  cublasHandle_t handle_;
  vector<int> ids_;
};
struct Names { vector<float> scales; };
struct Pod { float a, b; };
struct Pinned { scoped_array<float> host; float scale; };
struct HandleBox { cudaStream_t stream; };
typedef std::shared_ptr<Registry> RegistryPtr;
}  // namespace lib
`
	const main = `#include "lib.h"
namespace lib {
__device__ float scaled(const Pinned& p, float x) { return p.scale * x; }
__global__ void k(float* y, int n) {
  cg::thread_block b = cg::this_thread_block();
  GRID_LOOP(i, n) { y[i] = AS_HANDLE(0) ? 0.f : y[i]; }
}
void host_only(Names n) { Registry::Get(); }
}
`
	h := Scan(header)
	m := ScanWith(main, h)
	MarkHostOnly(m, h)
	blanked := Blank(header, h)
	for _, tc := range []struct {
		decl string
		host bool
	}{
		{"namespace flags = gflags_impl;", true},
		{"namespace cg = cooperative_groups;", false},                        // device code uses it
		{"using std::vector;", true},                                         // only host-only classes use it
		{"using std::min;", false},                                           // libcu++ has it
		{"using std::iterator;", true},                                       // gone from CCCL 3 (Caffe's common.hpp)
		{"using boost::scoped_array;", false},                                // Pinned, which device code takes, uses it
		{"cublasHandle_t handle_;", true},                                    // in Registry
		{"struct Names { vector<float> scales; };", true},                    // only a host function takes it
		{"struct Pod { float a, b; };", false},                               // names nothing host-only
		{"struct Pinned { scoped_array<float> host; float scale; };", false}, // a __device__ function takes it
		{"struct HandleBox { cudaStream_t stream; };", false},                // a macro device code uses names it
		{"typedef std::shared_ptr<Registry> RegistryPtr;", true},
	} {
		if kept := strings.Contains(blanked, tc.decl); kept == tc.host {
			t.Errorf("%q kept %v, want %v", tc.decl, kept, !tc.host)
		}
	}
	if strings.Count(blanked, "\n") != strings.Count(header, "\n") || !strings.Contains(blanked, "#define GRID_LOOP") {
		t.Errorf("lines or macros changed:\n%s", blanked)
	}
	if got := Blank(main, m); !strings.Contains(got, "__global__ void k") || strings.Contains(got, "host_only") {
		t.Errorf("the main file:\n%s", got)
	}
}

// A file-scope constant only host code reads is blanked with that code
// (NVRTC would otherwise warn it is never referenced); one device code
// reads, directly or through a macro, one in a device memory space, and
// one no code reads (nvcc warns of it too) stay.
func TestMarkHostOnlyConstants(t *testing.T) {
	const src = `#include <stdio.h>
const int NUM_REPS = 100;
constexpr int BLOCK = 256;
const int UNUSED = 1;
__constant__ const float SCALE = 2.f;
const int BASE = 2;
const int TWICE = BASE * 2;
const int HALF = 3;
#define HALF_BLOCK (BLOCK / HALF)
namespace cfg { const int WARMUP = 5; }
static const float weights[] = {1.f, 2.f};
__global__ void k(float* y) { y[threadIdx.x] = BLOCK + HALF_BLOCK; }
int main() {
  for (int r = 0; r < NUM_REPS + TWICE + cfg::WARMUP; r++) printf("%f %f\n", weights[r % 2], SCALE);
  return 0;
}
`
	f := Scan(src)
	if n := MarkHostOnly(f); n != 5 {
		t.Errorf("marked %d, want 5 (NUM_REPS, BASE, TWICE, WARMUP, weights)", n)
	}
	blanked := Blank(src, f)
	for _, tc := range []struct {
		decl string
		host bool
	}{
		{"const int NUM_REPS = 100;", true},
		{"constexpr int BLOCK = 256;", false},
		{"const int UNUSED = 1;", false},
		{"__constant__ const float SCALE = 2.f;", false},
		{"const int BASE = 2;", true}, // only TWICE reads it, which only main reads
		{"const int TWICE = BASE * 2;", true},
		{"const int HALF = 3;", false}, // a macro the kernel uses reads it
		{"const int WARMUP = 5;", true},
		{"static const float weights[] = {1.f, 2.f};", true},
		{"__global__ void k(float* y)", false},
	} {
		if kept := strings.Contains(blanked, tc.decl); kept == tc.host {
			t.Errorf("%q kept %v, want %v", tc.decl, kept, !tc.host)
		}
	}
}

// With a host header stubbed, a typedef or alias naming a type no file
// declares and nothing device code gets declares is host (pthread_t, FILE,
// time_t beside their headers): marked when device code does not use it.
// Template parameters, a function type's parameter names, the compiler's
// and toolkit's types and the known names (the stubs') are no such type;
// a class whose body holds a member alias is no alias (the kernel's
// Params stays).
func TestMarkHostOnlyUndeclaredTypes(t *testing.T) {
	const src = `#include <pthread.h>
typedef pthread_t Thread;
typedef FILE* LogFile;
using Clock = clock_t;
typedef struct timespec Stamp;
typedef void *(*Routine)(void *);
typedef unsigned (WINAPI *WinRoutine)(void *);
typedef pthread_mutex_t DeviceUsed;
typedef float4 Vec;
typedef __half Half;
typedef curandState Rng;
typedef int64_t Index;
typedef void (*Callback)(float scale, int n);
template <typename T, int N> using Array = T[N];
typedef long Plain;
struct Params { using index_t = int; int n; index_t stride; };
Thread start(Routine f);
__device__ int used(DeviceUsed* m) { return 0; }
__global__ void fill(Params p) {}
`
	for _, tc := range []struct {
		name    string
		stubbed bool
		host    []string
	}{
		{"a host header stubbed", true, []string{"typedef pthread_t Thread;", "typedef FILE* LogFile;", "using Clock = clock_t;",
			"typedef struct timespec Stamp;", "typedef unsigned (WINAPI *WinRoutine)(void *);"}},
		// the time.h names are host-only however they arrive
		{"no host header stubbed", false, []string{"using Clock = clock_t;", "typedef struct timespec Stamp;"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Scan(src)
			known := func(n string) bool { return n == "int64_t" }
			MarkHostOnlyWith(HostHeaders{Stubbed: tc.stubbed, Known: known}, nil, f)
			var host []string
			for _, d := range f.Decls {
				if d.Kind == Alias && d.Host() {
					host = append(host, src[d.Start:d.End])
				}
			}
			if strings.Join(host, "\n") != strings.Join(tc.host, "\n") {
				t.Errorf("host aliases %v, want %v", host, tc.host)
			}
		})
	}
}

// A kernel's parameter, template parameter or local of the same name
// shadows a file-scope constant: its uses there are not the constant's,
// so a constant only main reads is blanked although a kernel names its
// parameter alike (NVRTC warned #177-D). A use outside the local's block,
// a qualified ::NAME and an expression that merely looks like a
// declaration (a * NAME) still count.
func TestMarkHostOnlyShadowedConstants(t *testing.T) {
	const src = `const int N = 100000000;
const int M = 4;
const int K = 3;
const int S = 2;
const int P = 5;
const int Q = 6;
const int R = 7;
const int W = 8;
__global__ void byParam(float* y, const int N) { if (threadIdx.x < N) y[0] = 1; }
template <int M> __device__ float byTemplate() { return M; }
__global__ void byLocal(float* y) { int K = 3; float* W = y; W[0] = K; }
__global__ void afterBlock(float* y) { { int S = 1; y[0] = S; } y[1] = S; }
__global__ void qualified(float* y, int P) { y[0] = ::P + P; }
__device__ float times(float a) { float b = a * Q; return a * R + b; }
int main() { float* p = new float[N + M + K + S + P + Q + R + W]; delete[] p; return 0; }
`
	checkHostOnly(t, src, []hostCase{
		{"const int N = 100000000;", true},
		{"const int M = 4;", true},
		{"const int K = 3;", true},
		{"const int W = 8;", true}, // float* W = y;
		{"const int S = 2;", false},
		{"const int P = 5;", false},
		{"const int Q = 6;", false},
		{"const int R = 7;", false},
		{"__global__ void byParam", false},
	})
}

// A member after `.` or `->` names no file-scope declaration.
func TestNotUsesMembers(t *testing.T) {
	const src = `struct Pt { int L; };
__device__ int g(Pt p, Pt* q) { return p.L + q->L + L; }
`
	f := Scan(src)
	notUses := f.notUses()
	var members, plain int
	for _, tok := range f.code {
		if tok.text != "L" || tok.start < strings.Index(src, "__device__") {
			continue
		}
		if notUses[tok.start] {
			members++
		} else {
			plain++
		}
	}
	if members != 2 || plain != 1 {
		t.Errorf("%d member uses and %d plain ones of L, want 2 and 1", members, plain)
	}
}

// A host-only class timing with <time.h> (a timespec member, a method
// calling clock_gettime with CLOCK_MONOTONIC) is marked when no device
// code uses it; a struct device code uses stays whatever it names, and
// clock() / a kernel's own `time` do not make a struct host-only.
func TestMarkHostOnlyTimeClasses(t *testing.T) {
	const src = `#include <time.h>
#include <sys/time.h>
class Stopwatch {
  struct timespec m_start;
 public:
  void Start() { clock_gettime(CLOCK_MONOTONIC, &m_start); }
};
struct WallClock { timeval tv; double seconds() const { gettimeofday(&tv, 0); return tv.tv_sec; } };
struct Ticks { time_t at; };
struct Probe { clock_t start; };
struct Sample { float time; long long tm; };
__global__ void k(float* y, Probe p, Sample s) { p.start = clock(); y[0] = s.time; }
`
	blanked := checkHostOnly(t, src, []hostCase{
		{"class Stopwatch", true},
		{"struct WallClock", true},
		{"struct Ticks", true},
		{"struct Probe", false}, // the kernel takes it
		{"struct Sample", false},
		{"__global__ void k", false},
	})
	if strings.Count(blanked, "\n") != strings.Count(src, "\n") {
		t.Errorf("lines changed:\n%s", blanked)
	}
}

// A host-only class defined once per branch of an #if whose branches each
// open the namespace the code after it closes (Kaldi's base/timer.h: a
// Windows Timer over LARGE_INTEGER, the other over struct timeval) is
// marked in both branches, with the class holding one; before, only the
// first branch was read and the #else's timeval class reached NVRTC.
func TestMarkHostOnlyClassPerBranch(t *testing.T) {
	const src = `#include <sys/time.h>
#if defined(_MSC_VER)
namespace app {
class Timer {
 public:
  Timer() { Reset(); }
  void Reset() { QueryPerformanceCounter(&start_); }
 private:
  LARGE_INTEGER start_;
};
#else
namespace app {
class Timer {
 public:
  Timer() { Reset(); }
  void Reset() { gettimeofday(&start_, 0); }
 private:
  struct timeval start_;
};
#endif
class Profiler { Timer tim_; const char* name_; };
struct Dim { int rows, cols; };
}
__global__ void k(float* y, app::Dim d) { y[0] = d.rows; }
`
	f := Scan(src)
	MarkHostOnlyWith(HostHeaders{Stubbed: true}, nil, f)
	blanked := Blank(src, f)
	for _, tc := range []struct {
		decl string
		host bool
	}{
		{"LARGE_INTEGER", true},
		{"struct timeval", true},
		{"class Timer", true},
		{"class Profiler", true},
		{"struct Dim", false},
		{"__global__ void k", false},
	} {
		if kept := strings.Contains(blanked, tc.decl); kept == tc.host {
			t.Errorf("%q kept %v, want %v:\n%s", tc.decl, kept, !tc.host, blanked)
		}
	}
	if strings.Count(blanked, "\n") != strings.Count(src, "\n") || strings.Count(blanked, "namespace app {") != 2 {
		t.Errorf("lines or namespaces changed:\n%s", blanked)
	}
}

// A file-scope const no code uses stays (its warning too), unless its
// initializer calls a function and it is not constexpr: under
// -default-device NVRTC takes it for a __device__ variable with dynamic
// initialization (Kaldi's kLogZeroBaseFloat, libcu++'s infinity() not
// constexpr under NVRTC 11.8), an error nvcc's host variable never gives.
func TestMarkHostOnlyUnusedDynamicConstants(t *testing.T) {
	const src = `#include <limits>
typedef float Real;
const int UNUSED = 1;
const float kLogZero = -std::numeric_limits<float>::infinity();
static const double kMinLog = Log(1e-7);
const Real kZero{Zero()};
const float kCast = float(2) * sizeof(int);
constexpr float kInf = inf();
const float kUsed = lowest();
__global__ void k(float* y) { y[0] = kUsed + kInf; }
`
	checkHostOnly(t, src, []hostCase{
		{"const int UNUSED = 1;", false},
		{"const float kLogZero", true},
		{"static const double kMinLog", true},
		{"const Real kZero", true},
		{"const float kCast", false}, // a functional cast and sizeof: no call
		{"constexpr float kInf", false},
		{"const float kUsed", false}, // the kernel reads it
	})
}

// PyTorch's headers are stubs declaring its scalar types (HostHeaders.Torch):
// a name under c10::, at:: or torch:: the stubs do not declare is host
// (mmcv's `using at::Tensor;`), one they declare is not; where the
// program declares such a namespace itself, its names are the program's.
// Without a PyTorch header (Torch nil) they declare nothing.
func TestMarkHostOnlyTorchNames(t *testing.T) {
	const src = `using at::Tensor;
typedef c10::cuda::CUDAStream Stream;
namespace F = at::native;
using at::Half;
namespace ext { using c10::BFloat16; using torch::headeronly::Half; }
namespace torch { struct Local; }
using torch::Local;
using std::min;
`
	torch := func(n string) bool { return n == "Half" || n == "BFloat16" || n == "headeronly" }
	for _, tc := range []struct {
		name  string
		torch func(string) bool
		host  []string
	}{
		{"torch stubbed", torch, []string{"using at::Tensor;", "typedef c10::cuda::CUDAStream Stream;", "namespace F = at::native;"}},
		{"no torch header", nil, []string{"using at::Tensor;", "typedef c10::cuda::CUDAStream Stream;", "namespace F = at::native;",
			"using at::Half;", "using c10::BFloat16;", "using torch::headeronly::Half;"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Scan(src)
			MarkHostOnlyWith(HostHeaders{Torch: tc.torch}, nil, f)
			var host []string
			for _, d := range f.Decls {
				if d.Host() {
					host = append(host, src[d.Start:d.End])
				}
			}
			if strings.Join(host, "\n") != strings.Join(tc.host, "\n") {
				t.Errorf("host %q, want %q", host, tc.host)
			}
		})
	}
}

// A traits struct the kernel names only through its template parameter
// and the host launcher names outright is a use of the device side when
// a manifest's entry names it (k<Traits<4, float>>): it stays, and so does
// what it needs (Block). Its member alias used as a qualifier (L::Storage)
// reads as a namespace none of the files declares, which made it a
// candidate. A struct really host-only (std::vector, named in no device
// code nor entry) is still marked.
func TestMarkHostOnlyEntryNames(t *testing.T) {
	const src = `#include <vector>
template <typename T, int N> struct Loader { struct Storage { T v[N]; }; };
template <typename T, int N> struct Block {
  using L = Loader<T, N>;
  typename L::Storage s;
};
template <int N_, typename T_> struct Traits {
  using B = Block<T_, N_>;
  static constexpr int kN = N_;
  static constexpr int kBytes = sizeof(B);
};
struct HostCache { std::vector<float> v; };
template <typename Kt> __global__ void k(float* y) { y[threadIdx.x] = Kt::kBytes; }
template <int N> void launch(float* y, HostCache& c) {
  using Kt = Traits<N, float>;
  k<Kt><<<1, Kt::kN>>>(y);
}
`
	for _, tc := range []struct {
		name    string
		entries []string
		host    []string
	}{
		{"no entries", nil, []string{"struct Block", "struct Traits", "struct HostCache", "void launch"}},
		{"entry k<Traits<4, float>>", []string{"k", "Traits", "float"}, []string{"struct HostCache", "void launch"}},
		{"entry naming HostCache's neighbour only", []string{"k", "Loader"}, []string{"struct Block", "struct Traits", "struct HostCache", "void launch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Scan(src)
			MarkHostOnlyWith(HostHeaders{}, tc.entries, f)
			var host []string
			for _, d := range f.Decls {
				if d.Host() {
					for _, want := range []string{"struct Block", "struct Traits", "struct HostCache", "void launch", "struct Loader", "void k"} {
						if strings.Contains(src[d.Start:d.End], want) {
							host = append(host, want)
						}
					}
				}
			}
			if strings.Join(host, ", ") != strings.Join(tc.host, ", ") {
				t.Errorf("host %q, want %q", host, tc.host)
			}
		})
	}
}

// hostCase is a declaration checkHostOnly looks for, and whether it is
// host-only (blanked).
type hostCase struct {
	decl string
	host bool
}

// checkHostOnly scans src, marks what only host code uses and blanks it,
// and fails each case whose declaration was kept where it should go or
// went where it should stay; it returns the blanked text.
func checkHostOnly(t *testing.T, src string, cases []hostCase) string {
	t.Helper()
	f := Scan(src)
	MarkHostOnly(f)
	blanked := Blank(src, f)
	for _, tc := range cases {
		if kept := strings.Contains(blanked, tc.decl); kept == tc.host {
			t.Errorf("%q kept %v, want %v:\n%s", tc.decl, kept, !tc.host, blanked)
		}
	}
	return blanked
}
