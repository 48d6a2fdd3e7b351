// mltop_user.cuh of the CUDA emulation: to_f32(x) reads float, int, __half
// and __nv_bfloat16 as float; from_f32<T>(f) rounds to T (nearest even).
#pragma once
#include <cuda_emu.h>

inline float to_f32(float x) { return x; }
inline float to_f32(int x) { return (float)x; }
inline float to_f32(__half h) { return float(h); }
inline float to_f32(__nv_bfloat16 h) { return float(h); }

template <typename mltop_Out_> inline mltop_Out_ from_f32(float f) { return mltop_Out_(f); }
