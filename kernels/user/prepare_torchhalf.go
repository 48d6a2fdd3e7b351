package user

import (
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// torchCTypes are the C types of the dtypes in a CUDA source that
// includes PyTorch's headers: what PyTorch's dispatch macros make
// scalar_t (AT_DISPATCH_FLOATING_TYPES_AND_HALF: at::Half), so that a
// specialization on c10::Half (Megatron's copy_vector, vLLM's
// _typeConvert) is the one instantiated. Other sources keep CTypes.
var torchCTypes = map[profiler.DType]string{profiler.F32: "float", profiler.F16: "c10::Half", profiler.BF16: "c10::BFloat16"}

// cType is the C type the dtype name stands for at dt in lang's source.
func (f *Family) cType(lang string, dt profiler.DType) string {
	return cTypeIn(lang, dt, f.prep[lang])
}

// cTypeIn is the C type the dtype name stands for at dt in lang's source
// p (nil: not read yet): PyTorch's in a CUDA source that includes its
// headers (torchCTypes), else CTypes.
func cTypeIn(lang string, dt profiler.DType, p *prepared) string {
	if lang == "cuda" && p != nil && p.torchSource() {
		if t, ok := torchCTypes[dt]; ok {
			return t
		}
	}
	return CTypes[lang][dt]
}

// torchSource says whether a file of the program includes one of
// PyTorch's headers.
func (p *prepared) torchSource() bool {
	return slices.ContainsFunc(p.system, isTorchHeader)
}

// PyTorch's 16-bit floats as device code of an extension sees them.
// c10::Half and c10::BFloat16 are classes of their own in PyTorch, not the
// toolkit's __half and __nv_bfloat16: two bytes of bits (x), built from a
// float (or the toolkit's type), converting implicitly to float (and to
// the toolkit's type), with arithmetic done in float. PyTorch compiles
// extensions with __CUDA_NO_HALF_CONVERSIONS__, so an expression that
// mixes the type with a float is float arithmetic: max(x, (T)1.) is
// max(float, float). Naming the toolkit's type instead (what mltop did)
// brings __half's conversions to short, int, long long… with it, and
// NVRTC finds such a call ambiguous (mmcv's roi_align). The stub's classes
// give each operator an exact overload for the arithmetic types, so the
// toolkit's __half operators (which mltop's prelude keeps: vLLM builds
// without those flags) never tie with them.

// torch16 is one of the two classes.
type torch16 struct {
	name, nv, raw  string // c10's name, the toolkit's type, its raw struct
	toFloat, toNV  string // the toolkit's conversions
	soft2f, softF2 string // the software conversions (no toolkit header)
}

var torch16Types = []torch16{
	{name: "Half", nv: "__half", raw: "__half_raw", toFloat: "__half2float", toNV: "__float2half",
		soft2f: "mltop_c10::half_to_float", softF2: "mltop_c10::float_to_half"},
	{name: "BFloat16", nv: "__nv_bfloat16", raw: "__nv_bfloat16_raw", toFloat: "__bfloat162float", toNV: "__float2bfloat16",
		soft2f: "mltop_c10::bfloat16_to_float", softF2: "mltop_c10::float_to_bfloat16"},
}

// torchScalarTypes declares c10::Half and c10::BFloat16 (also as at::,
// torch:: and torch::headeronly:: names), c10::complex with libcu++, and
// c10's device macros
// (C10_WARP_SIZE: Apex's softmax; C10_HOST_DEVICE, …). With the toolkit's
// fp16/bf16 headers a class converts through the toolkit's functions (one
// cvt instruction each); without them, through software conversions
// (round to nearest even), and its toolkit type is the storage struct.
func torchScalarTypes(tk toolkitHeaders) string {
	var b strings.Builder
	b.WriteString("#ifndef MLTOP_TORCH_SCALAR_TYPES_\n#define MLTOP_TORCH_SCALAR_TYPES_\n")
	b.WriteString(torch16Traits)
	if !tk.fp16 || !tk.bf16 {
		b.WriteString(torch16Software)
	}
	b.WriteString("namespace c10 {\n")
	for _, t := range torch16Types {
		b.WriteString(t.class(t.name == "Half" && tk.fp16 || t.name == "BFloat16" && tk.bf16))
	}
	b.WriteString("}  // namespace c10\n")
	if tk.libcu {
		// c10::complex<T> (mamba's `using complex_t = c10::complex<float>;`
		// at file scope, and its z.real_)
		b.WriteString(torchComplex)
	}
	b.WriteString("namespace at { using c10::Half; using c10::BFloat16; }\n")
	b.WriteString("namespace torch { using c10::Half; using c10::BFloat16; namespace headeronly { using c10::Half; using c10::BFloat16; } }\n")
	b.WriteString("#endif\n")
	b.WriteString(c10Macros)
	return b.String()
}

// torch16Traits: which type H op U gives for an arithmetic U, as PyTorch's
// overloads do (float and double their own; an integer H), the type both
// are taken as (operand), and bool for a comparison; none of these for any
// other U, so the templates drop out of overload resolution.
const torch16Traits = `namespace mltop_c10 {
template <typename H, typename U> struct mixed {};
template <typename H> struct mixed<H, float> { typedef float type; typedef float operand; typedef bool compare; };
template <typename H> struct mixed<H, double> { typedef double type; typedef double operand; typedef bool compare; };
#define MLTOP_C10_INTEGER_(U) template <typename H> struct mixed<H, U> { typedef H type; typedef H operand; typedef bool compare; };
MLTOP_C10_INTEGER_(bool) MLTOP_C10_INTEGER_(char) MLTOP_C10_INTEGER_(signed char) MLTOP_C10_INTEGER_(unsigned char)
MLTOP_C10_INTEGER_(short) MLTOP_C10_INTEGER_(unsigned short) MLTOP_C10_INTEGER_(int) MLTOP_C10_INTEGER_(unsigned int)
MLTOP_C10_INTEGER_(long) MLTOP_C10_INTEGER_(unsigned long) MLTOP_C10_INTEGER_(long long) MLTOP_C10_INTEGER_(unsigned long long)
#undef MLTOP_C10_INTEGER_
}  // namespace mltop_c10
`

// torch16Software converts without the toolkit's headers: float to half
// and to bfloat16 rounding to nearest even (NaN stays NaN, beyond the
// largest half is infinity), and back exactly.
const torch16Software = `#ifndef MLTOP_C10_SOFTWARE_
#define MLTOP_C10_SOFTWARE_
namespace mltop_c10 {
union bits32 { float f; unsigned int u; };
__host__ __device__ inline float from_bits32(unsigned int u) { bits32 v; v.u = u; return v.f; }
__host__ __device__ inline unsigned int to_bits32(float f) { bits32 v; v.f = f; return v.u; }
__host__ __device__ inline unsigned short float_to_half(float f) {
  const unsigned int u = to_bits32(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, infinity
  if (a >= 0x477ff000u) return sign | 0x7c00u;                                // 65520 and up: infinity
  if (a < 0x33000000u) return sign;                                           // under 2^-25: zero
  unsigned int q, rest, tie;
  if (a < 0x38800000u) {  // a subnormal half: units of 2^-24
    const unsigned int shift = 126u - (a >> 23), m = (a & 0x7fffffu) | 0x800000u;
    q = m >> shift, rest = m & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
  } else {  // rebias the exponent (127 to 15), drop 13 bits of mantissa
    const unsigned int r = a - 0x38000000u;
    q = r >> 13, rest = r & 0x1fffu, tie = 0x1000u;
  }
  if (rest > tie || (rest == tie && (q & 1u))) q++;
  return sign | q;
}
__host__ __device__ inline float half_to_float(unsigned short h) {
  const unsigned int sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return from_bits32(sign | 0x7f800000u | (m << 13));
  if (e == 0) { const float v = (float)m * 5.9604644775390625e-08f; return sign ? -v : v; }
  return from_bits32(sign | ((e + 112u) << 23) | (m << 13));
}
__host__ __device__ inline unsigned short float_to_bfloat16(float f) {
  const unsigned int u = to_bits32(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__host__ __device__ inline float bfloat16_to_float(unsigned short h) { return from_bits32((unsigned int)h << 16); }
}  // namespace mltop_c10
#endif
`

// class is the C++ of one type: the class, its operators (exact for the
// type itself, the toolkit's type and every arithmetic type: arithmetic
// through float giving the type back, or float/double with a float/double
// as PyTorch's; comparisons as float's).
func (t torch16) class(toolkit bool) string {
	r := strings.NewReplacer("H_", t.name, "NV_", t.nv, "RAW_", t.raw)
	// without the toolkit's header the toolkit type is the storage struct
	toBits, fromBits, toNV, fromNV := t.softF2+"(f)", t.soft2f+"(x)", "NV_ v; v.mltop_bits_ = x; return v;", "x(v.mltop_bits_)"
	if toolkit {
		toBits = "static_cast<RAW_>(" + t.toNV + "(f)).x"
		fromBits = t.toFloat + "(static_cast<NV_>(*this))"
		toNV = "RAW_ r; r.x = x; return NV_(r);"
		fromNV = "x(static_cast<RAW_>(v).x)"
	}
	var b strings.Builder
	b.WriteString(r.Replace(`struct alignas(2) H_ {
  unsigned short x;
  struct from_bits_t {};
  __host__ __device__ static constexpr from_bits_t from_bits() { return from_bits_t(); }
  H_() = default;
  __host__ __device__ constexpr H_(unsigned short bits, from_bits_t) : x(bits) {}
  __host__ __device__ H_(float f) : x(` + toBits + `) {}
  __host__ __device__ H_(const NV_& v) : ` + fromNV + ` {}
  __host__ __device__ operator float() const { return ` + fromBits + `; }
  __host__ __device__ operator NV_() const { ` + toNV + ` }
};
__host__ __device__ inline H_ operator-(const H_& a) { return H_(-static_cast<float>(a)); }
__host__ __device__ inline H_ operator+(const H_& a) { return a; }
`))
	for _, op := range []string{"+", "-", "*", "/"} {
		b.WriteString(r.Replace(strings.ReplaceAll(`__host__ __device__ inline H_ operator@(const H_& a, const H_& b) { return H_(static_cast<float>(a) @ static_cast<float>(b)); }
__host__ __device__ inline H_ operator@(const H_& a, const NV_& b) { return a @ H_(b); }
__host__ __device__ inline H_ operator@(const NV_& a, const H_& b) { return H_(a) @ b; }
template <typename U> __host__ __device__ inline typename mltop_c10::mixed<H_, U>::type operator@(const H_& a, U b) {
  typedef typename mltop_c10::mixed<H_, U>::operand O;
  return static_cast<O>(static_cast<float>(a)) @ static_cast<O>(b);
}
template <typename U> __host__ __device__ inline typename mltop_c10::mixed<H_, U>::type operator@(U a, const H_& b) {
  typedef typename mltop_c10::mixed<H_, U>::operand O;
  return static_cast<O>(a) @ static_cast<O>(static_cast<float>(b));
}
__host__ __device__ inline H_& operator@=(H_& a, const H_& b) { return a = a @ b; }
__host__ __device__ inline float& operator@=(float& a, const H_& b) { return a @= static_cast<float>(b); }
`, "@", op)))
	}
	for _, op := range []string{"==", "!=", "<", "<=", ">", ">="} {
		b.WriteString(r.Replace(strings.ReplaceAll(`__host__ __device__ inline bool operator@(const H_& a, const H_& b) { return static_cast<float>(a) @ static_cast<float>(b); }
__host__ __device__ inline bool operator@(const H_& a, const NV_& b) { return a @ H_(b); }
__host__ __device__ inline bool operator@(const NV_& a, const H_& b) { return H_(a) @ b; }
template <typename U> __host__ __device__ inline typename mltop_c10::mixed<H_, U>::compare operator@(const H_& a, U b) { return static_cast<float>(a) @ b; }
template <typename U> __host__ __device__ inline typename mltop_c10::mixed<H_, U>::compare operator@(U a, const H_& b) { return a @ static_cast<float>(b); }
`, "@", op)))
	}
	return b.String()
}

// torch16Limits are numeric_limits of c10::Half and c10::BFloat16 (vLLM's
// and Apex's kernels say std::numeric_limits<scalar_t>::lowest()): IEEE
// half's values and bfloat16's (float's exponent range, 8 digits), as
// floats like the 8-bit types' (fp8Limit), which convert back to the type.
var torch16Limits = []fp8Limit{
	{typ: "c10::Half", digits: 11, digits10: 3, maxDigits10: 5, minExp: -13, minExp10: -4, maxExp: 16, maxExp10: 4,
		min: "6.103515625e-05f", max: "65504.0f", epsilon: "0.0009765625f", denormMin: "5.9604644775390625e-08f", hasInfinity: true},
	{typ: "c10::BFloat16", digits: 8, digits10: 2, maxDigits10: 4, minExp: -125, minExp10: -37, maxExp: 128, maxExp10: 38,
		min: "1.17549435082228750797e-38f", max: "3.38953138925153547590e+38f", epsilon: "0.0078125f", denormMin: "9.18354961579912115600e-41f", hasInfinity: true},
}

// torch16LimitsText specializes cuda::std::numeric_limits for both (after
// <limits>, which a torch stub includes with libcu++).
func torch16LimitsText() string {
	var b strings.Builder
	b.WriteString("#ifndef MLTOP_TORCH16_LIMITS_\n#define MLTOP_TORCH16_LIMITS_\nnamespace cuda { namespace std {\n")
	for _, l := range torch16Limits {
		b.WriteString(l.text())
	}
	b.WriteString("} }  // namespace cuda::std\n#endif\n")
	return b.String()
}

// torchDeviceUtilsHeaders are PyTorch's headers that declare the warp
// helpers (Apex's layer norm includes the first and calls WARP_SHFL;
// older extensions include THC's), and those that include one of them, so
// that a file calls WARP_SHFL_DOWN having included only those
// (DistanceKernel.cu: <THC/THCTensorMathReduce.cuh>).
var torchDeviceUtilsHeaders = map[string]bool{"ATen/cuda/DeviceUtils.cuh": true, "THC/THCDeviceUtils.cuh": true,
	// they include THC/THCDeviceUtils.cuh, directly or through THCReduceApplyUtils.cuh
	"THC/THCReduceApplyUtils.cuh": true, "THC/THCTensorMathReduce.cuh": true, "THC/THCReduce.cuh": true,
	"THC/THCSortUtils.cuh": true, "THC/THCTensorRandom.cuh": true,
	// they include ATen/cuda/DeviceUtils.cuh
	"ATen/native/cuda/block_reduce.cuh": true, "ATen/native/cuda/Reduce.cuh": true, "ATen/cuda/ScanUtils.cuh": true}

// torchDeviceUtils: the warp helpers, each the CUDA intrinsic it names
// over the full warp by default (mask 0xffffffff, width warpSize), the
// mask last as PyTorch's take it. A name the source defines as a macro
// first is left to it.
const torchDeviceUtils = `#ifndef MLTOP_TORCH_DEVICE_UTILS_
#define MLTOP_TORCH_DEVICE_UTILS_
#ifndef ACTIVE_MASK
__device__ __forceinline__ unsigned int ACTIVE_MASK() { return __activemask(); }
#endif
#ifndef WARP_ACTIVEMASK
__device__ __forceinline__ unsigned int WARP_ACTIVEMASK() { return __activemask(); }
#endif
#ifndef WARP_SYNC
__device__ __forceinline__ void WARP_SYNC(unsigned int mask = 0xffffffff) { __syncwarp(mask); }
#endif
#ifndef WARP_BALLOT
__device__ __forceinline__ unsigned int WARP_BALLOT(int predicate, unsigned int mask = 0xffffffff) { return __ballot_sync(mask, predicate); }
#endif
#define MLTOP_WARP_SHFL_(name, intrinsic, lane) \
  template <typename T> \
  __device__ __forceinline__ T name(T value, lane, int width = warpSize, unsigned int mask = 0xffffffff) { \
    return intrinsic(mask, value, l, width); \
  }
#ifndef WARP_SHFL
MLTOP_WARP_SHFL_(WARP_SHFL, __shfl_sync, int l)
#endif
#ifndef WARP_SHFL_XOR
MLTOP_WARP_SHFL_(WARP_SHFL_XOR, __shfl_xor_sync, int l)
#endif
#ifndef WARP_SHFL_UP
MLTOP_WARP_SHFL_(WARP_SHFL_UP, __shfl_up_sync, unsigned int l)
#endif
#ifndef WARP_SHFL_DOWN
MLTOP_WARP_SHFL_(WARP_SHFL_DOWN, __shfl_down_sync, unsigned int l)
#endif
#undef MLTOP_WARP_SHFL_
#endif
`

// torchAtomicHeaders are PyTorch's headers that declare atomicAdd and
// gpuAtomicAdd on at::Half and at::BFloat16 (mmcv's kernels include the
// first and call atomicAdd(T*, T)).
var torchAtomicHeaders = map[string]bool{"THC/THCAtomics.cuh": true, "ATen/cuda/Atomic.cuh": true}

// torchAtomics: atomicAdd on each class, the toolkit's where the GPU has
// it (sm_70 on), else a compare-and-swap on the 32-bit word holding the
// value; gpuAtomicAdd calls atomicAdd, whichever the type's is.
func torchAtomics(tk toolkitHeaders) string {
	var b strings.Builder
	b.WriteString(`#ifndef MLTOP_TORCH_ATOMICS_
#define MLTOP_TORCH_ATOMICS_
namespace mltop_c10 {
template <typename H> __device__ inline H atomic_add_cas(H* a, H v) {
  unsigned int* word = reinterpret_cast<unsigned int*>(reinterpret_cast<unsigned long long>(a) & ~3ull);
  const unsigned int shift = (reinterpret_cast<unsigned long long>(a) & 2ull) ? 16u : 0u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const H sum(static_cast<float>(H((unsigned short)(assumed >> shift), H::from_bits())) + static_cast<float>(v));
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | ((unsigned int)sum.x << shift));
  } while (assumed != old);
  return H((unsigned short)(old >> shift), H::from_bits());
}
}  // namespace mltop_c10
`)
	for _, t := range torch16Types {
		native := t.name == "Half" && tk.fp16 || t.name == "BFloat16" && tk.bf16
		b.WriteString("__device__ inline c10::" + t.name + " atomicAdd(c10::" + t.name + "* a, c10::" + t.name + " v) {\n")
		if native {
			b.WriteString("#if __CUDA_ARCH__ >= 700\n  return atomicAdd(reinterpret_cast<" + t.nv + "*>(a), static_cast<" + t.nv + ">(v));\n#else\n")
		}
		b.WriteString("  return mltop_c10::atomic_add_cas(a, v);\n")
		if native {
			b.WriteString("#endif\n")
		}
		b.WriteString("}\n")
	}
	b.WriteString("template <typename S> __device__ inline S gpuAtomicAdd(S* a, S v) { return atomicAdd(a, v); }\n#endif\n")
	return b.String()
}

// torchAccumulateTypes are at::acc_type<T, is_cuda> (<ATen/AccumulateType.h>:
// torchvision's nms computes its box areas in at::acc_type<T, true>) and
// at::opmath_type<T> (<ATen/OpMathType.h>), as PyTorch defines them: on
// the GPU the 16- and 8-bit floats accumulate in float, float in float,
// double in double, the integers in int64_t; on the CPU (is_cuda false)
// float in double. A type PyTorch gives none has none here either.
// Declared by every torch stub, as the accessors are: PyTorch's headers
// reach these through many others.
const torchAccumulateTypes = `#ifndef MLTOP_TORCH_ACC_TYPES_
#define MLTOP_TORCH_ACC_TYPES_
namespace at {
template <typename T, bool is_cuda> struct AccumulateType {};
#define MLTOP_ACC_(T, cuda, cpu) \
  template <> struct AccumulateType<T, true> { using type = cuda; }; \
  template <> struct AccumulateType<T, false> { using type = cpu; };
MLTOP_ACC_(c10::Half, float, float) MLTOP_ACC_(c10::BFloat16, float, float)
MLTOP_ACC_(float, float, double) MLTOP_ACC_(double, double, double) MLTOP_ACC_(bool, bool, bool)
MLTOP_ACC_(char, long, long) MLTOP_ACC_(signed char, long, long) MLTOP_ACC_(unsigned char, long, long)
MLTOP_ACC_(short, long, long) MLTOP_ACC_(int, long, long) MLTOP_ACC_(long, long, long) MLTOP_ACC_(long long, long long, long long)
#ifdef MLTOP_TORCH_FLOAT8_TYPES_
MLTOP_ACC_(c10::Float8_e4m3fn, float, float) MLTOP_ACC_(c10::Float8_e5m2, float, float)
#endif
#ifdef MLTOP_C10_COMPLEX_
MLTOP_ACC_(c10::complex<float>, c10::complex<float>, c10::complex<double>) MLTOP_ACC_(c10::complex<double>, c10::complex<double>, c10::complex<double>)
#endif
#undef MLTOP_ACC_
template <typename T, bool is_cuda> using acc_type = typename AccumulateType<T, is_cuda>::type;
template <typename T> struct OpMathType { using type = T; };
template <> struct OpMathType<c10::Half> { using type = float; };
template <> struct OpMathType<c10::BFloat16> { using type = float; };
#ifdef MLTOP_TORCH_FLOAT8_TYPES_
template <> struct OpMathType<c10::Float8_e4m3fn> { using type = float; };
template <> struct OpMathType<c10::Float8_e5m2> { using type = float; };
#endif
template <typename T> using opmath_type = typename OpMathType<T>::type;
}  // namespace at
#endif
`

// torchComplex is c10::complex<T> as device code sees PyTorch's: two T
// aligned as their pair, public real_ and imag_ (mamba reads z.real_),
// real(), imag(), arithmetic with complex and with T, comparisons, and
// std::complex's std::abs/exp through libcu++ where a source asks
// (conversions from cuda::std::complex and back).
const torchComplex = `#ifndef MLTOP_C10_COMPLEX_
#define MLTOP_C10_COMPLEX_
#include <cuda/std/type_traits>
namespace c10 {
template <typename T> struct alignas(sizeof(T) * 2) complex {
  using value_type = T;
  T real_ = T(0);
  T imag_ = T(0);
  constexpr complex() = default;
  __host__ __device__ constexpr complex(const T& re, const T& im = T()) : real_(re), imag_(im) {}
  template <typename U> __host__ __device__ explicit constexpr complex(const complex<U>& o) : real_(T(o.real_)), imag_(T(o.imag_)) {}
  __host__ __device__ constexpr T real() const { return real_; }
  __host__ __device__ constexpr T imag() const { return imag_; }
  __host__ __device__ void real(T v) { real_ = v; }
  __host__ __device__ void imag(T v) { imag_ = v; }
  __host__ __device__ complex& operator+=(const complex& o) { real_ += o.real_; imag_ += o.imag_; return *this; }
  __host__ __device__ complex& operator-=(const complex& o) { real_ -= o.real_; imag_ -= o.imag_; return *this; }
  __host__ __device__ complex& operator*=(const complex& o) { T r = real_ * o.real_ - imag_ * o.imag_; imag_ = real_ * o.imag_ + imag_ * o.real_; real_ = r; return *this; }
  __host__ __device__ complex& operator/=(const complex& o) { T d = o.real_ * o.real_ + o.imag_ * o.imag_; T r = (real_ * o.real_ + imag_ * o.imag_) / d; imag_ = (imag_ * o.real_ - real_ * o.imag_) / d; real_ = r; return *this; }
  __host__ __device__ complex& operator+=(const T& v) { real_ += v; return *this; }
  __host__ __device__ complex& operator-=(const T& v) { real_ -= v; return *this; }
  __host__ __device__ complex& operator*=(const T& v) { real_ *= v; imag_ *= v; return *this; }
  __host__ __device__ complex& operator/=(const T& v) { real_ /= v; imag_ /= v; return *this; }
};
template <typename T> __host__ __device__ complex<T> operator+(complex<T> a, const complex<T>& b) { return a += b; }
template <typename T> __host__ __device__ complex<T> operator-(complex<T> a, const complex<T>& b) { return a -= b; }
template <typename T> __host__ __device__ complex<T> operator*(complex<T> a, const complex<T>& b) { return a *= b; }
template <typename T> __host__ __device__ complex<T> operator/(complex<T> a, const complex<T>& b) { return a /= b; }
template <typename T> __host__ __device__ complex<T> operator+(complex<T> a, const T& b) { return a += b; }
template <typename T> __host__ __device__ complex<T> operator-(complex<T> a, const T& b) { return a -= b; }
template <typename T> __host__ __device__ complex<T> operator*(complex<T> a, const T& b) { return a *= b; }
template <typename T> __host__ __device__ complex<T> operator/(complex<T> a, const T& b) { return a /= b; }
template <typename T> __host__ __device__ complex<T> operator+(const T& a, complex<T> b) { return b += a; }
template <typename T> __host__ __device__ complex<T> operator*(const T& a, complex<T> b) { return b *= a; }
template <typename T> __host__ __device__ complex<T> operator-(const T& a, const complex<T>& b) { return complex<T>(a - b.real_, -b.imag_); }
template <typename T> __host__ __device__ complex<T> operator-(const complex<T>& a) { return complex<T>(-a.real_, -a.imag_); }
template <typename T> __host__ __device__ complex<T> operator+(const complex<T>& a) { return a; }
template <typename T> __host__ __device__ bool operator==(const complex<T>& a, const complex<T>& b) { return a.real_ == b.real_ && a.imag_ == b.imag_; }
template <typename T> __host__ __device__ bool operator!=(const complex<T>& a, const complex<T>& b) { return !(a == b); }
}  // namespace c10
namespace at { using c10::complex; }
#endif
`
