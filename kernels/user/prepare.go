package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// This file prepares a user source for a backend's compiler: the spec's
// macros in front of the code and the header mltop provides to CUDA sources.

// withMacros makes the text a backend compiles for a user source: the
// spec's macros as #define lines in front (not compiler -D options, which
// would also reach the compiler's implicit headers, where T or N may well
// be template parameters), then `#line 1 "file"` so that the compiler's
// messages name the user's file and line. Each `#include <…>` of a system
// header is wrapped so the macros are hidden from it (push_macro, #undef,
// include, pop_macro) and followed by a #line that keeps the numbering.
func withMacros(code, file string, macros []profiler.Macro) string {
	var b strings.Builder
	for _, m := range macros {
		fmt.Fprintf(&b, "#define %s %s\n", m.Name, m.Value)
	}
	fmt.Fprintf(&b, "#line 1 %q\n", file)
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	for i, l := range lines {
		if !systemInclude(l) || len(macros) == 0 {
			b.WriteString(l)
			b.WriteString("\n")
			continue
		}
		for _, m := range macros {
			fmt.Fprintf(&b, "#pragma push_macro(%q)\n#undef %s\n", m.Name, m.Name)
		}
		b.WriteString(l)
		b.WriteString("\n")
		for _, m := range macros {
			fmt.Fprintf(&b, "#pragma pop_macro(%q)\n", m.Name)
		}
		fmt.Fprintf(&b, "#line %d %q\n", i+2, file)
	}
	return b.String()
}

func systemInclude(l string) bool {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "#") {
		return false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "include") {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(t[len("include"):]), "<")
}

// cudaHeaderName is the header every user CUDA source may include for the
// 16-bit storage types without the CUDA toolkit's headers (NVRTC may not
// find cuda_fp16.h / cuda_bf16.h on a machine with only the driver and
// NVRTC). With the toolkit's headers included first, their types are used.
const cudaHeaderName = "mltop_user.cuh"

// cudaHeader: T is a macro (float, __half or __nv_bfloat16); to_f32(x) reads
// any of them as float, from_f32<T>(f) rounds to nearest even.
const cudaHeader = `// mltop_user.cuh — provided by mltop to user CUDA kernels.
#pragma once
#if !defined(__CUDA_FP16_H__) && !defined(__CUDA_FP16_TYPES_EXIST__)
struct __half { unsigned short mltop_bits_; };
#endif
#if !defined(__CUDA_BF16_H__) && !defined(__CUDA_BF16_TYPES_EXIST__)
struct __nv_bfloat16 { unsigned short mltop_bits_; };
#endif

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(int x) { return (float)x; }
__device__ __forceinline__ float to_f32(__half h) {
    unsigned short b = *reinterpret_cast<unsigned short*>(&h);
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
    return f;
}
__device__ __forceinline__ float to_f32(__nv_bfloat16 h) {
    unsigned short b = *reinterpret_cast<unsigned short*>(&h);
    return __uint_as_float(((unsigned)b) << 16);
}

template <typename mltop_Out_> __device__ __forceinline__ mltop_Out_ from_f32(float f);
template <> __device__ __forceinline__ float from_f32<float>(float f) { return f; }
template <> __device__ __forceinline__ __half from_f32<__half>(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    __half r;
    *reinterpret_cast<unsigned short*>(&r) = h;
    return r;
}
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float f) {
    unsigned u = __float_as_uint(f);
    unsigned short h;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h = (unsigned short)((u >> 16) | 0x40);
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
        h = (unsigned short)(u >> 16);
    }
    __nv_bfloat16 r;
    *reinterpret_cast<unsigned short*>(&r) = h;
    return r;
}
`
