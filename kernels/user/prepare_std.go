package user

import (
	"fmt"
	"regexp"
	"strings"
)

// This file gives device code what nvcc programs get from the host's C++
// library and PyTorch's headers, which NVRTC lacks: the fixed-width
// integer types, the standard headers' templates (std::enable_if_t,
// std::numeric_limits, std::min under nvcc's --expt-relaxed-constexpr)
// through libcu++, and PyTorch's scalar types (prepare_torchhalf.go).

// stdViaLibcu maps the C++ standard headers device code uses to libcu++'s
// counterparts, the first one found (a candidate of several headers,
// separated by spaces, is found by its first).
var stdViaLibcu = map[string][]string{
	"type_traits": {"cuda/std/type_traits"},
	"limits":      {"cuda/std/limits"},
	"utility":     {"cuda/std/utility"},
	"cmath":       {"cuda/std/cmath"},
	// CCCL 3 (CUDA 13) has no <cuda/std/algorithm> either, but min and max
	// headers of their own; libcu++ 1.x's <array> defines them
	"algorithm":  {"cuda/std/algorithm", "cuda/std/__algorithm/min.h cuda/std/__algorithm/max.h", "cuda/std/array"},
	"array":      {"cuda/std/array"},
	"tuple":      {"cuda/std/tuple"},
	"functional": {"cuda/std/functional"},
	"cstdint":    {"cuda/std/cstdint"},
	"cfloat":     {"cuda/std/cfloat"},
	"climits":    {"cuda/std/climits"},
	"cstddef":    {"cuda/std/cstddef"},
	"iterator":   {"cuda/std/iterator"},
	// in libcu++ 2.x (CCCL), not CUDA 11.8's 1.x: there the stub declares nothing, as a
	// host-only header's (std::optional is then undefined)
	"optional": {"cuda/std/optional"},
}

// hostStdForToolkit are host-only standard headers the toolkit's device
// headers include all the same (CUB 1.x: <iostream> for its iterators'
// operator<<), served as stubs with libcu++ like stdViaLibcu's.
var hostStdForToolkit = []string{"iostream", "cstdio", "stdio.h", "stdint.h", "math.h", "cassert"}

// headerMacros are the standard macros C header h defines, each under
// #ifndef (after libcu++'s counterpart, which may define some first).
func headerMacros(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "c"), ".h")
	var b strings.Builder
	for _, m := range standardMacros {
		if macroHeader(m[0]) == h {
			b.WriteString("#ifndef " + m[0] + "\n#define " + m[0] + " " + m[1] + "\n#endif\n")
		}
	}
	return b.String()
}

// macroHeader is the C header ("math", "float", "limits") that defines
// standard macro m; "" for CUDART_VERSION and the GCC keywords.
func macroHeader(m string) string {
	switch {
	case m == "CUDART_VERSION" || m == "__extension__" || m == "__asm__" || m == "__asm":
		return ""
	case strings.HasPrefix(m, "FLT_") || strings.HasPrefix(m, "DBL_"):
		return "float"
	case strings.HasPrefix(m, "M_") || m == "INFINITY" || m == "NAN" || strings.HasPrefix(m, "HUGE_VAL"):
		return "math"
	}
	return "limits"
}

// libcuMathMacros are the macros libcu++'s <cuda/std/cmath> defines
// without #ifndef under NVRTC: the copy ahead of the source is marked
// (MLTOP_PRELUDE_<NAME>_) and undefined before the <cmath> stub includes
// it, so NVRTC does not warn about a redefinition.
var libcuMathMacros = []string{"INFINITY", "NAN"}

// libcuStdStub is the stub of standard header h when the toolkit has
// libcu++: its libcu++ counterpart (guarded by __has_include, the first
// one found), and std::X naming cuda::std::X. A name the program declares
// in namespace std itself (CCCL's tuple_size for structured bindings)
// still wins: qualified lookup reaches the using-directive only when std
// has no such name.
func libcuStdStub(h string, tk toolkitHeaders) string {
	var b strings.Builder
	b.WriteString("#pragma once\n// mltop: NVRTC has no <" + h + ">: libcu++'s, with std::X naming cuda::std::X\n")
	if h == "cmath" {
		for _, m := range libcuMathMacros {
			b.WriteString("#ifdef MLTOP_PRELUDE_" + m + "_\n#undef " + m + "\n#undef MLTOP_PRELUDE_" + m + "_\n#endif\n")
		}
	}
	if h == "cmath" && tk.usingStd {
		// CUDA's math functions are global; with `using namespace std;`
		// libcu++'s (CCCL 3 declares its own fabsf) would make an
		// unqualified call ambiguous: std:: keeps the rest of libcu++
		// what <cmath> brings besides the functions (numeric_limits, traits)
		b.WriteString("// the source says `using namespace std;`: libcu++'s math functions are left out\n")
		b.WriteString("#if __has_include(<cuda/std/limits>)\n#include <cuda/std/limits>\n#include <cuda/std/type_traits>\n#endif\n" + stdIsCudaStd + fallbackMathText)
		return b.String()
	}
	for i, c := range stdViaLibcu[h] {
		if i == 0 {
			b.WriteString("#if")
		} else {
			b.WriteString("#elif")
		}
		hs := strings.Fields(c)
		b.WriteString(" __has_include(<" + hs[0] + ">)\n")
		for _, h := range hs {
			b.WriteString("#include <" + h + ">\n")
		}
	}
	b.WriteString("#endif\n" + stdIsCudaStd)
	if h == "cmath" {
		b.WriteString(fallbackMathText)
	}
	return b.String()
}

// fallbackMath are the <cmath> functions some libcu++ leaves out of
// cuda::std under NVRTC although CUDA declares them at file scope, float
// and double: libcu++ 1.x (CUDA 11.x) skips them there, and CCCL 3.0
// (CUDA 13.0) still has no std::fma. nvcc's host <cmath> has them all, and
// code says `using ::std::fma;` (glm).
var fallbackMath = strings.Fields(`floor fmod frexp ldexp log log10 modf pow sin sinh sqrt tan tanh
	acosh asinh atanh cbrt copysign erf erfc exp2 expm1 fdim fma fmax fmin ilogb lgamma llrint llround
	log1p log2 logb lrint lround nearbyint nextafter remainder remquo rint round scalbln scalbn tgamma trunc`)

// fallbackMathText gives std each fallbackMath function (and its f
// variant) as a template forwarding to CUDA's global one, whatever the
// libcu++ version: where cuda::std has the function, its non-template
// overloads are the better match and win; where it has not, the template
// is the std::X there is. A call CUDA's functions cannot take (an int to
// round) drops the template (SFINAE) instead of adding an error.
var fallbackMathText = func() string {
	var b strings.Builder
	b.WriteString("#if defined(__CUDACC_RTC__) && !defined(MLTOP_FALLBACK_MATH_)\n#define MLTOP_FALLBACK_MATH_\n")
	b.WriteString("// mltop: CUDA's global math functions as std::X where libcu++ has no X (libcu++ 1.x, CCCL 3.0's fma)\nnamespace mltop_fallback_math {\n")
	for _, f := range fallbackMath {
		for _, name := range []string{f, f + "f"} {
			fmt.Fprintf(&b, "template <class... A> __host__ __device__ inline auto %[1]s(A... a) -> decltype(::%[1]s(a...)) { return ::%[1]s(a...); }\n", name)
		}
	}
	b.WriteString("}\nnamespace std { using namespace mltop_fallback_math; }\n#endif\n")
	return b.String()
}()

// stdIsCudaStd makes std::X name cuda::std::X (the empty cuda::std keeps
// it valid when no libcu++ header was found).
const stdIsCudaStd = `#ifndef MLTOP_STD_IS_CUDA_STD_
#define MLTOP_STD_IS_CUDA_STD_
namespace cuda { namespace std {} }
namespace std { using namespace cuda::std; }
#endif
`

// usesNamespaceStd says whether a file of the source says
// `using namespace std;` (in code or a comment: either way the <cmath>
// stub only leaves something out).
func (p *prepared) usesNamespaceStd() bool {
	for _, u := range p.units {
		if usingNamespaceStd.MatchString(u.code) {
			return true
		}
	}
	return false
}

var usingNamespaceStd = regexp.MustCompile(`\busing\s+namespace\s+(::)?std\s*;`)

// stdintNames are the <cstdint> types ahead of a source that uses them
// without declaring them or including a header that does (nvcc programs
// have them through the host headers).
var stdintNames = []string{"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t", "uintptr_t"}

// stdintText declares the fixed-width integer types, less those in skip
// (the source's own at file scope: a second typedef of another type is an
// error). With libcu++ and no skip they are its types (so a later
// <cuda/std/cstdint> agrees: a typedef may repeat the same type); under
// NVRTC libcu++ declares them all at file scope, so with a skip they are
// the plain typedefs, 64-bit as libcu++'s long long. Without libcu++,
// int64_t is the compiler's __INT64_TYPE__ where it has one. The guard
// makes the copy ahead of the source and the <cstdint> stub one.
func stdintText(tk toolkitHeaders, skip map[string]bool) string {
	var b strings.Builder
	b.WriteString("#ifndef MLTOP_STDINT_\n#define MLTOP_STDINT_\n")
	viaLibcu := tk.libcu && len(skip) == 0
	switch {
	case viaLibcu:
		b.WriteString("#include <cuda/std/cstdint>\n")
	case tk.libcu:
		b.WriteString("#define MLTOP_INT64_ long long\n#define MLTOP_UINT64_ unsigned long long\n")
	default:
		b.WriteString(stdint64Types)
	}
	for _, n := range stdintNames {
		switch {
		case skip[n]:
		case viaLibcu:
			b.WriteString("typedef cuda::std::" + n + " " + n + ";\n")
		default:
			b.WriteString("typedef " + stdintPlainTypes[n] + " " + n + ";\n")
		}
	}
	b.WriteString("#endif\n")
	return b.String()
}

// stdint64Types are the 64-bit types of stdintPlainTypes without libcu++.
const stdint64Types = `#if defined(__INT64_TYPE__) && defined(__UINT64_TYPE__)
#define MLTOP_INT64_ __INT64_TYPE__
#define MLTOP_UINT64_ __UINT64_TYPE__
#else
#define MLTOP_INT64_ long long
#define MLTOP_UINT64_ unsigned long long
#endif
`

// stdintPlainTypes are the fixed-width types without libcu++.
var stdintPlainTypes = map[string]string{
	"int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
	"int32_t": "int", "uint32_t": "unsigned int", "int64_t": "MLTOP_INT64_", "uint64_t": "MLTOP_UINT64_",
	"intptr_t": "MLTOP_INT64_", "uintptr_t": "MLTOP_UINT64_",
}

// isTorchHeader says whether h is one of PyTorch's headers (served empty:
// the host code that needs them is blanked).
func isTorchHeader(h string) bool {
	for _, p := range []string{"torch/", "ATen/", "c10/", "caffe2/", "THC/"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// c10Macros are c10's device macros (C10_WARP_SIZE: Apex's softmax;
// C10_HOST_DEVICE, …), which every torch stub defines.
const c10Macros = `#ifndef C10_WARP_SIZE
#define C10_WARP_SIZE 32
#endif
#ifndef C10_HOST_DEVICE
#define C10_HOST_DEVICE __host__ __device__
#endif
#ifndef C10_DEVICE
#define C10_DEVICE __device__
#endif
#ifndef C10_HOST
#define C10_HOST __host__
#endif
#ifndef C10_LAUNCH_BOUNDS_0
#define C10_LAUNCH_BOUNDS_0
#endif
#ifndef C10_LAUNCH_BOUNDS_1
#define C10_LAUNCH_BOUNDS_1(max_threads) __launch_bounds__(max_threads)
#endif
#ifndef C10_LIKELY
#define C10_LIKELY(x) (x)
#define C10_UNLIKELY(x) (x)
#endif
`

// mixedMathFunctions are the two-argument math functions nvcc programs
// call with mixed argument types: nvcc gets libstdc++'s promoting
// overloads into the global namespace through the host's <math.h>
// (PyTorch's LLTM kernel writes fmax(0.0, z) with a float z), while
// NVRTC has only the (float, float) and (double, double) ones, between
// which such a call is ambiguous.
var mixedMathFunctions = []string{"fmax", "fmin", "pow", "atan2", "fmod", "hypot", "copysign", "remainder", "fdim"}

// mixedMathText declares, for the functions of mixedMathFunctions that
// the source calls, a __device__ overload for exactly the argument types
// between which NVRTC's two overloads are ambiguous: a float and a double
// (either order), or two integers. It calls the double function, as C++'s
// <cmath> does (an integer counts as double). Calls NVRTC already
// resolves keep their function: (float, float) and (int, float) call the
// float one.
func mixedMathText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`#ifndef MLTOP_MIXED_MATH_
#define MLTOP_MIXED_MATH_
namespace mltop_math {
template <typename T> struct integral { static const bool value = false; };
`)
	for _, t := range []string{"bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int",
		"long", "unsigned long", "long long", "unsigned long long"} {
		b.WriteString("template <> struct integral<" + t + "> { static const bool value = true; };\n")
	}
	b.WriteString(`template <typename A, typename B> struct mixed_fp { static const bool value = false; };
template <> struct mixed_fp<float, double> { static const bool value = true; };
template <> struct mixed_fp<double, float> { static const bool value = true; };
template <bool, typename T> struct enable {};
template <typename T> struct enable<true, T> { typedef T type; };
template <typename A, typename B> struct ambiguous
    : enable<mixed_fp<A, B>::value || (integral<A>::value && integral<B>::value), double> {};
}  // namespace mltop_math
`)
	for _, f := range names {
		b.WriteString("template <typename A, typename B> __device__ inline typename mltop_math::ambiguous<A, B>::type " + f +
			"(A a, B b) { return " + f + "(static_cast<double>(a), static_cast<double>(b)); }\n")
	}
	b.WriteString("#endif\n")
	return b.String()
}

// torchFloat8Types are PyTorch's 8-bit float types (sgl-kernel's utils.h
// says c10::Float8_e4m3fn and std::numeric_limits<c10::Float8_e4m3fn>::max()).
// As in PyTorch they are types of their own, one byte holding the
// toolkit's __nv_fp8_e4m3/__nv_fp8_e5m2 (cuda_fp8.h), converting to and
// from float implicitly as c10's do (`x / FP8_E4M3_MAX`). With libcu++
// they get a cuda::std::numeric_limits whose values are floats, the same
// under every libcu++. Specialising it for the toolkit's types instead
// clashed with CCCL 3, which has its own (NVRTC 13: "explicit
// specialization … must precede its first use").
func torchFloat8Types(libcu bool) string {
	var b strings.Builder
	b.WriteString(`#if __has_include(<cuda_fp8.h>) && !defined(MLTOP_TORCH_FLOAT8_TYPES_)
#define MLTOP_TORCH_FLOAT8_TYPES_
#include <cuda_fp8.h>
namespace c10 {
#define MLTOP_C10_FLOAT8_(name, nv) \
  struct name : nv { \
    name() = default; \
    __host__ __device__ name(float f) : nv(f) {} \
    __host__ __device__ name(nv v) : nv(v) {} \
    __host__ __device__ operator float() const { return static_cast<float>(static_cast<const nv&>(*this)); } \
  };
MLTOP_C10_FLOAT8_(Float8_e4m3fn, __nv_fp8_e4m3)
MLTOP_C10_FLOAT8_(Float8_e5m2, __nv_fp8_e5m2)
#undef MLTOP_C10_FLOAT8_
}
namespace at { using c10::Float8_e4m3fn; using c10::Float8_e5m2; }
namespace torch { using c10::Float8_e4m3fn; using c10::Float8_e5m2; namespace headeronly { using c10::Float8_e4m3fn; using c10::Float8_e5m2; } }
`)
	if libcu {
		b.WriteString("namespace cuda { namespace std {\n")
		for _, l := range fp8Limits[:2] {
			b.WriteString(l.text())
		}
		b.WriteString("} }  // namespace cuda::std\n")
	}
	b.WriteString("#endif\n")
	b.WriteString(torchFnuzTypes)
	if libcu {
		b.WriteString("#ifndef MLTOP_TORCH_FNUZ_LIMITS_\n#define MLTOP_TORCH_FNUZ_LIMITS_\n#include <cuda/std/limits>\nnamespace cuda { namespace std {\n")
		for _, l := range fp8Limits[2:] {
			b.WriteString(l.text())
		}
		b.WriteString("} }  // namespace cuda::std\n#endif\n")
	}
	return b.String()
}

// torchFnuzTypes are PyTorch's "fnuz" 8-bit floats (ROCm's formats, which
// CUDA kernels shared with ROCm name: vLLM's quantization): one byte each,
// their own format, which the toolkit has no type for. Compared with
// e4m3fn/e5m2 the exponent bias is one more (8, 16), there is no negative
// zero and no infinity, and 0x80 is the only NaN; e4m3fnuz's largest is
// 240, e5m2fnuz's 57344. The stub converts exactly to float, and from
// float rounding to nearest even, a value beyond the largest (or an
// infinity) giving NaN, the format's one special value. mltop's fp8
// buffers are e4m3fn/e5m2, so a buffer cannot go to a pointer to either
// (args.go: fnuzPointee).
const torchFnuzTypes = `#ifndef MLTOP_TORCH_FNUZ_TYPES_
#define MLTOP_TORCH_FNUZ_TYPES_
namespace mltop_fnuz {
// the float a byte of E exponent bits, M mantissa bits and bias B holds
template <int E, int M, int B> __host__ __device__ inline float decode(unsigned char b) {
  if (b == 0x80) return __int_as_float(0x7fc00000);
  int e = (b >> M) & ((1 << E) - 1), m = b & ((1 << M) - 1);
  float v = e == 0 ? ldexpf((float)m, 1 - B - M) : ldexpf((float)((1 << M) | m), e - B - M);
  return (b & 0x80) ? -v : v;
}
// the byte nearest f (ties to even); NaN (0x80) beyond the largest
template <int E, int M, int B> __host__ __device__ inline unsigned char encode(float f) {
  const float largest = ldexpf((float)((2 << M) - 1), (1 << E) - 1 - B - M);
  float a = fabsf(f);
  if (!(a <= largest * (1.0f + ldexpf(1.0f, -M - 1)))) return 0x80;  // NaN, infinity, far beyond
  int ex;
  frexpf(a, &ex);
  int unbiased = ex - 1 < 1 - B ? 1 - B : ex - 1;
  float q = rintf(ldexpf(a, M - unbiased));  // in units of the binade's last place
  float v = ldexpf(q, unbiased - M);
  if (v > largest) return 0x80;
  if (v == 0.0f) return 0;  // no negative zero
  unsigned char s = f < 0 ? 0x80 : 0;
  if (v < ldexpf(1.0f, 1 - B)) return s | (unsigned char)q;  // subnormal
  frexpf(v, &ex);
  return s | (unsigned char)(((ex - 1 + B) << M) | ((int)ldexpf(v, M - (ex - 1)) & ((1 << M) - 1)));
}
}  // namespace mltop_fnuz
namespace c10 {
#define MLTOP_C10_FNUZ_(name, E, M, B) \
  struct name { \
    unsigned char x; \
    name() = default; \
    __host__ __device__ name(float f) : x(mltop_fnuz::encode<E, M, B>(f)) {} \
    __host__ __device__ operator float() const { return mltop_fnuz::decode<E, M, B>(x); } \
  };
MLTOP_C10_FNUZ_(Float8_e4m3fnuz, 4, 3, 8)
MLTOP_C10_FNUZ_(Float8_e5m2fnuz, 5, 2, 16)
#undef MLTOP_C10_FNUZ_
}
namespace at { using c10::Float8_e4m3fnuz; using c10::Float8_e5m2fnuz; }
namespace torch { using c10::Float8_e4m3fnuz; using c10::Float8_e5m2fnuz; namespace headeronly { using c10::Float8_e4m3fnuz; using c10::Float8_e5m2fnuz; } }
#endif
`

// fp8Limit is what numeric_limits says of one 8-bit float type.
type fp8Limit struct {
	typ                                string
	digits, digits10, maxDigits10      int
	minExp, minExp10, maxExp, maxExp10 int
	min, max, epsilon, denormMin       string // float literals
	hasInfinity                        bool
}

// fp8Limits: e4m3 (no infinity, largest 448) and e5m2 (IEEE-like, largest
// 57344); exponents as C++ counts them (min_exponent is one more than the
// smallest normal's, max_exponent one more than the largest's).
var fp8Limits = []fp8Limit{
	{typ: "c10::Float8_e4m3fn", digits: 4, maxDigits10: 3, minExp: -5, minExp10: -1, maxExp: 9, maxExp10: 2,
		min: "0.015625f", max: "448.0f", epsilon: "0.125f", denormMin: "0.001953125f"},
	{typ: "c10::Float8_e5m2", digits: 3, maxDigits10: 2, minExp: -13, minExp10: -4, maxExp: 16, maxExp10: 4,
		min: "6.103515625e-05f", max: "57344.0f", epsilon: "0.25f", denormMin: "1.52587890625e-05f", hasInfinity: true},
	// fnuz: bias one more, so each power of two is one lower; no infinity
	{typ: "c10::Float8_e4m3fnuz", digits: 4, maxDigits10: 3, minExp: -6, minExp10: -2, maxExp: 8, maxExp10: 2,
		min: "0.0078125f", max: "240.0f", epsilon: "0.125f", denormMin: "0.0009765625f"},
	{typ: "c10::Float8_e5m2fnuz", digits: 3, maxDigits10: 2, minExp: -14, minExp10: -4, maxExp: 16, maxExp10: 4,
		min: "3.0517578125e-05f", max: "57344.0f", epsilon: "0.25f", denormMin: "7.62939453125e-06f"},
}

// text is the explicit specialization of cuda::std::numeric_limits.
func (l fp8Limit) text() string {
	fn := func(name, body string) string {
		return "  __host__ __device__ static constexpr float " + name + "() noexcept { return " + body + "; }\n"
	}
	// libcu++ 1.x's float infinity and NaNs are not constexpr under NVRTC
	special := func(name, body string) string {
		return "  __host__ __device__ static float " + name + "() noexcept { return " + body + "; }\n"
	}
	b := "template <> class numeric_limits<" + l.typ + "> {  // mltop: PyTorch's values, as floats\n public:\n" +
		"  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;\n" +
		fmt.Sprintf("  static constexpr bool has_infinity = %v, has_quiet_NaN = true, has_signaling_NaN = false;\n", l.hasInfinity) +
		"  static constexpr bool is_iec559 = false, is_bounded = true, is_modulo = false, traps = false, tinyness_before = false;\n" +
		"  static constexpr float_denorm_style has_denorm = denorm_present;\n  static constexpr bool has_denorm_loss = false;\n" +
		"  static constexpr float_round_style round_style = round_to_nearest;\n" +
		fmt.Sprintf("  static constexpr int digits = %d, digits10 = %d, max_digits10 = %d, radix = 2;\n", l.digits, l.digits10, l.maxDigits10) +
		fmt.Sprintf("  static constexpr int min_exponent = %d, min_exponent10 = %d, max_exponent = %d, max_exponent10 = %d;\n", l.minExp, l.minExp10, l.maxExp, l.maxExp10) +
		fn("min", l.min) + fn("max", l.max) + fn("lowest", "-"+l.max) + fn("epsilon", l.epsilon) + fn("round_error", "0.5f") +
		fn("denorm_min", l.denormMin) + special("quiet_NaN", "numeric_limits<float>::quiet_NaN()") +
		special("signaling_NaN", "numeric_limits<float>::signaling_NaN()")
	if l.hasInfinity {
		b += special("infinity", "numeric_limits<float>::infinity()")
	} else {
		b += special("infinity", "0.0f")
	}
	return b + "};\n"
}
