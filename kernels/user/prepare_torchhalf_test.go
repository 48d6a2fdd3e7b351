package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// torch16Statements mix a c10::Half / c10::BFloat16 (x, y, z) with
// literals, float, double, the integer types and the library's math as
// extensions' device code does; each compiles with nvcc and PyTorch's
// classes. The first is mmcv's roi_align (max(roi_width, (T)1.)), which
// NVRTC found ambiguous while c10::Half was __half.
var torch16Statements = []string{
	"acc += (float)max(x, (T)1.);",
	"acc += (float)min(x, (T)0.) + max(x, 1.f) + max(x, y) + min(0.f, y);",
	"acc += fmaxf(x, 0.f) + fminf(x, y) + expf(x) + sqrtf(fabsf(x)) + __expf(y) + (float)exp(x);",
	"acc += (float)(x + y) + (float)(x - y) + (float)(x * y) + (float)(x / y);",
	"acc += x * 2.f + 2.f * x + x / f + f - y;",
	"acc += (float)(x * 2.0 + 0.5 * y - d);",
	"acc += (float)(x + 1) + (float)(2 * y) + (float)(x * n) + (float)(x * u) + (float)(x - ll) + (float)(ll * y);",
	"acc += (x < y) + (x > 0.f) + (x <= 1.0) + (x == 0) + (x != y) + (0.5f < x) + (x >= u) + (ll > y) + (d == x);",
	"acc += (float)(-x) + (float)(+x);",
	"acc += x; acc -= y; acc *= x; acc /= y;",
	"z += y; z -= 1.f; z *= 2; z /= x; z += 0.5;",
	"acc += (float)x + static_cast<float>(y) + (float)static_cast<int>(x) + (float)(double)y;",
	"z = T(f) + T(d) + T(n) + (T)1. + (T)0; z = f; z = d; z = n; z = 0;",
	"if (x) acc += 1.f; acc += y ? 1.f : 0.f;",
	"acc += (float)std::max(x, y) + (float)std::min(x, y);",
	"acc += (float)std::numeric_limits<T>::lowest() + std::numeric_limits<T>::max() + std::numeric_limits<T>::epsilon();",
	"acc += (float)(x < std::numeric_limits<T>::infinity()) + (float)(x > -std::numeric_limits<T>::max());",
	"__shared__ T s[32]; s[threadIdx.x % 32] = x; __syncthreads(); acc += s[0];",
	"T w[4] = {x, y, (T)0, (T)1}; acc += w[2];",
	"acc += (float)(x + 1.f > y ? x : y);",
}

// torch16Source is a torch extension with the statements in a kernel
// templated on the scalar type, specializations on c10::Half and
// c10::BFloat16 (Megatron's copy_vector, vLLM's _typeConvert) the
// kernel needs, and each class beside the toolkit's type.
func torch16Source(statements []string) string {
	return `#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>

template <typename S> struct conv { static constexpr bool exists = false; };
template <> struct conv<float> { static constexpr bool exists = true; using native = float; };
template <> struct conv<c10::Half> {
  static constexpr bool exists = true;
  using native = __half;
  __device__ static float to_float(native v) { return __half2float(v); }
};
template <> struct conv<at::BFloat16> {
  static constexpr bool exists = true;
  using native = __nv_bfloat16;
  __device__ static float to_float(native v) { return __bfloat162float(v); }
};

template <typename S, int N> __device__ __inline__ void copy_vector(S* dst, const S* src);
template <> __device__ __inline__ void copy_vector<float, 1>(float* dst, const float* src) { *dst = *src; }
template <> __device__ __inline__ void copy_vector<c10::Half, 1>(c10::Half* dst, const c10::Half* src) { *dst = *src; }
template <> __device__ __inline__ void copy_vector<c10::BFloat16, 1>(c10::BFloat16* dst, const c10::BFloat16* src) { *dst = *src; }

__device__ float half_interop(c10::Half x, __half h) {
  __half a = x;
  c10::Half b = h;
  c10::Half c = __hadd(x, h);
  c10::Half e = __float2half(1.f);
  __half2 p = __halves2half2(x, b);
  return __half2float(x) + (float)(x + h) + (float)(h * x) + (float)(x < h) + (float)(a == x) + (float)b + (float)c +
         (float)e + __low2float(p) + (float)at::Half(h) + (float)(-h) + conv<c10::Half>::to_float(x) +
         (float)c10::Half(0x3c00, c10::Half::from_bits()) + (float)b.x;
}
__device__ float bfloat16_interop(c10::BFloat16 x, __nv_bfloat16 h) {
  __nv_bfloat16 a = x;
  c10::BFloat16 b = h;
  c10::BFloat16 e = __float2bfloat16(1.f);
  return __bfloat162float(x) + (float)(x + h) + (float)(h * x) + (float)(x < h) + (float)b + (float)e + (float)at::BFloat16(h) +
         (float)(a == x) + conv<c10::BFloat16>::to_float(x);
}

static_assert(sizeof(c10::Half) == 2 && alignof(c10::Half) == 2 && sizeof(at::BFloat16) == 2, "2 bytes, as PyTorch's");

template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  static_assert(conv<T>::exists, "no conversion for this scalar type");
  const int i = blockIdx.x * cols + threadIdx.x;
  T x = X[i], y = X[i + 1], z = x;
  const float f = 0.5f;
  const double d = 0.25;
  const int n = cols;
  const unsigned u = threadIdx.x;
  const long long ll = rows;
  float acc = 0.f;
  ` + strings.Join(statements, "\n  ") + `
  copy_vector<T, 1>(Y + i, &z);
  Y[i] = acc + (float)Y[i];
}
`
}

// TestTorchHalfMixedArithmeticCompilesWithNVRTC compiles every statement
// of torch16Statements at f32, f16 and bf16 (the f16 and bf16 kernels are
// k<c10::Half> and k<c10::BFloat16>); each statement alone too where the
// whole fails, so the message names the one NVRTC refuses.
func TestTorchHalfMixedArithmeticCompilesWithNVRTC(t *testing.T) {
	m := strings.Replace(usertest.Manifest("torch_half_mixed"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": torch16Source(torch16Statements)})
	for dt, want := range map[profiler.DType]string{profiler.F32: "k<float>", profiler.F16: "k<c10::Half>", profiler.BF16: "k<c10::BFloat16>"} {
		prog, _ := preparedProgram(t, path, dt)
		if prog.Entry != want {
			t.Errorf("%s: entry %q, want %q", dt, prog.Entry, want)
		}
		compileOrSkip(t, prog)
	}
}

// The source of the repro: without torch headers T at f16 stays __half
// (and its toolkit names are not declared ahead of the source); with
// them, it is c10::Half, declared ahead of the source for `using T`.
func TestTorchSourceDTypeIsC10Half(t *testing.T) {
	body := "template <typename T> __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = max(X[0], (T)1.); }\n"
	m := strings.Replace(usertest.Manifest("torch_half_max"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"k<T>\",", 1)
	torch := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": "#include <ATen/ATen.h>\n" + body})
	for _, dt := range []profiler.DType{profiler.F16, profiler.BF16} {
		prog, _ := preparedProgram(t, torch, dt)
		head, _, _ := strings.Cut(prog.Code, "#line 1 ")
		if !strings.Contains(head, "struct alignas(2) Half {") || !strings.Contains(head, "using T = "+torchCTypes[dt]+";") {
			t.Errorf("%s: no c10 classes or T ahead of the torch source:\n%s", dt, head)
		}
		compileOrSkip(t, prog)
	}
	// the same kernel with a global T
	m = strings.Replace(m, "{entry: \"k<T>\",", "{entry: k,", 1)
	global := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": "#include <ATen/ATen.h>\n" + strings.TrimPrefix(body, "template <typename T> ")})
	prog, _ := preparedProgram(t, global, profiler.F16)
	compileOrSkip(t, prog)

	plain := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(m, "torch_half_max", "plain_half", 1),
		"k.cu": "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0]; }\n"})
	prog, _ = preparedProgram(t, plain, profiler.F16)
	if head, _, _ := strings.Cut(prog.Code, "#line 1 "); strings.Contains(head, "c10") || !strings.Contains(head, "using T = __half;") {
		t.Errorf("a source without torch headers got PyTorch's types or no __half:\n%s", head)
	}
}

// The torch stubs declare the classes with the toolkit's conversions, or
// the software ones without the toolkit's headers.
func TestTorchHalfClassText(t *testing.T) {
	with := torchScalarTypes(toolkitHeaders{fp16: true, bf16: true})
	for _, s := range []string{"__half2float(static_cast<__half>(*this))", "static_cast<__nv_bfloat16_raw>(__float2bfloat16(f)).x",
		"operator __half() const", "operator __nv_bfloat16() const", "H, float> { typedef float type;"} {
		if !strings.Contains(with, s) {
			t.Errorf("with the toolkit's headers, no %q in:\n%s", s, with)
		}
	}
	if strings.Contains(with, "float_to_half") {
		t.Errorf("software conversions beside the toolkit's:\n%s", with)
	}
	without := torchScalarTypes(toolkitHeaders{})
	if !strings.Contains(without, "x(mltop_c10::float_to_half(f))") || !strings.Contains(without, "mltop_c10::bfloat16_to_float(x)") {
		t.Errorf("without the toolkit's headers:\n%s", without)
	}
	// and they compile beside the storage structs (the prelude's without
	// the toolkit's headers)
	code := "struct __half { unsigned short mltop_bits_; };\nstruct __nv_bfloat16 { unsigned short mltop_bits_; };\n" + without +
		"template <typename T> __global__ void k(const T* X, T* Y) {\n" +
		"  T x = X[threadIdx.x]; Y[threadIdx.x] = max(x, (T)1.) * 2.f + (x < 0.5) + -x; Y[0] += x; }\n" +
		"template __global__ void k<c10::Half>(const c10::Half*, c10::Half*);\n" +
		"template __global__ void k<c10::BFloat16>(const c10::BFloat16*, c10::BFloat16*);\n"
	compileOrSkip(t, profiler.Program{Source: "k.cu", File: "k.cu", Code: code, Entry: "k<c10::Half>"})
}

// atomicAdd(T*, T) with T = c10::Half or c10::BFloat16 (mmcv's backward
// kernels, after <THC/THCAtomics.cuh>) compiles: the toolkit's atomicAdd
// from sm_70, the compare-and-swap loop below; gpuAtomicAdd too. Other
// torch headers do not declare them.
func TestTorchAtomicAddCompilesWithNVRTC(t *testing.T) {
	src := `#include <ATen/ATen.h>
#include <THC/THCAtomics.cuh>
template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  T old = atomicAdd(Y + threadIdx.x, X[threadIdx.x]);
  gpuAtomicAdd(Y, old);
}
`
	m := strings.Replace(usertest.Manifest("torch_atomic"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		prog, _ := preparedProgram(t, path, dt)
		compileOrSkip(t, prog)
		if dt == profiler.F32 {
			continue
		}
		if r, err := cuda.CheckCompile(prog, "sm_60"); err != nil && strings.Contains(err.Error(), "does not know the architecture") {
			t.Logf("%s: the compare-and-swap loop not compiled: %v", dt, err) // NVRTC 13 starts at sm_75
		} else if err != nil {
			t.Errorf("%s for sm_60 (the compare-and-swap loop): %v\n%s", dt, err, r.Log)
		}
	}
	if s, _ := cudaStub("ATen/ATen.h", toolkitHeaders{fp16: true, bf16: true}); strings.Contains(s, "atomicAdd") {
		t.Errorf("ATen/ATen.h declares atomicAdd:\n%s", s)
	}
}

// PyTorch's warp helpers (Apex's layer norm: WARP_SHFL after
// <ATen/cuda/DeviceUtils.cuh>) compile at each dtype, with their default
// width and mask or given ones; a name the source #defines before the
// include stays its own. Other torch headers do not declare them.
func TestTorchDeviceUtilsCompilesWithNVRTC(t *testing.T) {
	src := `#define WARP_SYNC(m) __syncwarp(m)
#include <ATen/ATen.h>
#include <ATen/cuda/DeviceUtils.cuh>
template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  float v = (float)X[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += WARP_SHFL_DOWN(v, o) + WARP_SHFL_XOR(v, o, 32) - WARP_SHFL_UP(v, o, 32, 0xffffffff);
  v = WARP_SHFL(v, 0);
  int n = WARP_SHFL_XOR(rows, 1);
  WARP_SYNC(0xffffffff);
  unsigned int b = WARP_BALLOT(v > 0.f) & WARP_BALLOT(n > 0, ACTIVE_MASK()) & WARP_ACTIVEMASK();
  Y[threadIdx.x] = (T)(v + (float)b);
}
`
	m := strings.Replace(usertest.Manifest("torch_device_utils"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		prog, _ := preparedProgram(t, path, dt)
		compileOrSkip(t, prog)
	}
	tk := toolkitHeaders{fp16: true, bf16: true}
	// also the headers that include them (PyTorch's DistanceKernel.cu calls
	// WARP_SHFL_DOWN having included THCTensorMathReduce.cuh alone)
	for _, h := range []string{"ATen/cuda/DeviceUtils.cuh", "THC/THCDeviceUtils.cuh", "THC/THCTensorMathReduce.cuh",
		"THC/THCReduceApplyUtils.cuh", "ATen/native/cuda/block_reduce.cuh"} {
		s, _ := cudaStub(h, tk)
		for _, name := range []string{"WARP_SHFL", "WARP_SHFL_XOR", "WARP_SHFL_UP", "WARP_SHFL_DOWN", "WARP_BALLOT", "WARP_ACTIVEMASK", "ACTIVE_MASK", "WARP_SYNC"} {
			if !strings.Contains(s, "#ifndef "+name+"\n") {
				t.Errorf("%s does not declare %s:\n%s", h, name, s)
			}
		}
	}
	if s, _ := cudaStub("ATen/ATen.h", tk); strings.Contains(s, "WARP_SHFL") {
		t.Errorf("ATen/ATen.h declares WARP_SHFL:\n%s", s)
	}
}

// c10::complex<T> named at file scope by a torch source (mamba's
// selective_scan_common.h: `using complex_t = c10::complex<float>;`)
// compiles with libcu++, with real(), imag() and the public real_ and
// imag_ mamba reads.
func TestTorchComplexCompilesWithNVRTC(t *testing.T) {
	if tk := findToolkit(); !tk.libcu {
		t.Skip("no libcu++ among the toolkit headers")
	}
	src := `#include <c10/util/complex.h>
using complex_t = c10::complex<float>;
template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  complex_t z(1.f, 2.f);
  z = z * complex_t(0.5f, 0.f) + 1.f;
  z /= complex_t(2.f, 1.f);
  Y[threadIdx.x] = X[threadIdx.x] + (T)(z.real() + z.imag() + exp2f(z.real_) * z.imag_);
}
`
	m := strings.Replace(usertest.Manifest("torch_complex"), "{entry: k,", "{entry: \"k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// at::acc_type<T, true> and at::opmath_type<T> (torchvision's nms after
// <ATen/AccumulateType.h>: `using acc_T = at::acc_type<T, true>;`) are
// PyTorch's types: float for c10::Half, c10::BFloat16 and float on the
// GPU, double for float on the CPU, int64 for int.
func TestTorchAccumulateTypesCompileWithNVRTC(t *testing.T) {
	src := `#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>
template <typename A, typename B> struct same { static constexpr bool value = false; };
template <typename A> struct same<A, A> { static constexpr bool value = true; };
static_assert(same<at::acc_type<c10::Half, true>, float>::value, "half accumulates in float");
static_assert(same<at::acc_type<at::BFloat16, true>, float>::value, "bfloat16 accumulates in float");
static_assert(same<at::acc_type<float, true>, float>::value && same<at::acc_type<float, false>, double>::value, "float");
static_assert(same<at::acc_type<int, true>, long>::value && same<at::opmath_type<c10::Half>, float>::value, "int, opmath");
template <typename T>
__global__ void k(const T* X, T* Y, int rows, int cols) {
  using acc_T = at::acc_type<T, /*is_cuda=*/true>;
  acc_T s = (acc_T)X[threadIdx.x] * X[threadIdx.x + 1];
  at::opmath_type<T> m = X[0];
  Y[threadIdx.x] = static_cast<T>(s + m);
}
`
	// one compile: the static_asserts test every type at any dtype
	m := strings.Replace(usertest.Manifest("torch_acc_type"), "dtypes: [f32]", "dtypes: [f16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F16)
	compileOrSkip(t, prog)
}
