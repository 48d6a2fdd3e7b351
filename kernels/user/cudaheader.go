package user

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
