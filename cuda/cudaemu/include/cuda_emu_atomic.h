// CUDA's atomic functions on the CPU through std::atomic_ref (cuda_emu.h):
// each returns the old value, as on the GPU. The _block and _system
// variants are the same here.
#pragma once

template <typename T, typename F>
inline T emu_atomic_update(T* p, F f) {
  if constexpr (sizeof(T) == 2) {  // __half, __nv_bfloat16: a CAS on the 16 bits
    std::atomic_ref<unsigned short> a(*reinterpret_cast<unsigned short*>(p));
    unsigned short old = a.load();
    for (;;) {
      T o = std::bit_cast<T>(old);
      T n = f(o);
      if (a.compare_exchange_weak(old, std::bit_cast<unsigned short>(n))) return o;
    }
  } else if constexpr (sizeof(T) == 4 && !std::is_arithmetic_v<T>) {  // __half2, __nv_bfloat162
    std::atomic_ref<unsigned> a(*reinterpret_cast<unsigned*>(p));
    unsigned old = a.load();
    for (;;) {
      T o = std::bit_cast<T>(old);
      T n = f(o);
      if (a.compare_exchange_weak(old, std::bit_cast<unsigned>(n))) return o;
    }
  } else {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (!a.compare_exchange_weak(old, f(old))) {
    }
    return old;
  }
}

#define EMU_ATOMIC_INT(T)                                                                          \
  inline T atomicAdd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }                    \
  inline T atomicSub(T* p, T v) { return std::atomic_ref<T>(*p).fetch_sub(v); }                    \
  inline T atomicExch(T* p, T v) { return std::atomic_ref<T>(*p).exchange(v); }                    \
  inline T atomicMin(T* p, T v) { return emu_atomic_update(p, [&](T o) { return v < o ? v : o; }); } \
  inline T atomicMax(T* p, T v) { return emu_atomic_update(p, [&](T o) { return o < v ? v : o; }); } \
  inline T atomicAnd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_and(v); }                    \
  inline T atomicOr(T* p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }                      \
  inline T atomicXor(T* p, T v) { return std::atomic_ref<T>(*p).fetch_xor(v); }                    \
  inline T atomicCAS(T* p, T cmp, T v) {                                                           \
    std::atomic_ref<T>(*p).compare_exchange_strong(cmp, v);                                        \
    return cmp;                                                                                    \
  }
EMU_ATOMIC_INT(int)
EMU_ATOMIC_INT(unsigned int)
EMU_ATOMIC_INT(unsigned long long)
EMU_ATOMIC_INT(long long)
#undef EMU_ATOMIC_INT
inline unsigned short atomicCAS(unsigned short* p, unsigned short cmp, unsigned short v) {
  std::atomic_ref<unsigned short>(*p).compare_exchange_strong(cmp, v);
  return cmp;
}
inline unsigned atomicInc(unsigned* p, unsigned v) {
  return emu_atomic_update(p, [&](unsigned o) { return o >= v ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned v) {
  return emu_atomic_update(p, [&](unsigned o) { return (o == 0 || o > v) ? v : o - 1; });
}
inline float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
inline double atomicAdd(double* p, double v) { return std::atomic_ref<double>(*p).fetch_add(v); }
inline float atomicSub(float* p, float v) { return std::atomic_ref<float>(*p).fetch_sub(v); }
inline float atomicExch(float* p, float v) { return std::atomic_ref<float>(*p).exchange(v); }
inline double atomicExch(double* p, double v) { return std::atomic_ref<double>(*p).exchange(v); }
inline float atomicMax(float* p, float v) { return emu_atomic_update(p, [&](float o) { return std::fmax(o, v); }); }
inline float atomicMin(float* p, float v) { return emu_atomic_update(p, [&](float o) { return std::fmin(o, v); }); }
inline __half atomicAdd(__half* p, __half v) { return emu_atomic_update(p, [&](__half o) { return o + v; }); }
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
  return emu_atomic_update(p, [&](__nv_bfloat16 o) { return o + v; });
}
inline __half2 atomicAdd(__half2* p, __half2 v) { return emu_atomic_update(p, [&](__half2 o) { return o + v; }); }
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
  return emu_atomic_update(p, [&](__nv_bfloat162 o) { return o + v; });
}
inline float2 atomicAdd(float2* p, float2 v) {
  return float2{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)};
}
inline float4 atomicAdd(float4* p, float4 v) {
  return float4{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w)};
}
// the scoped variants
#define EMU_SCOPED(NAME)                                                         \
  template <typename... A> inline auto NAME##_block(A... a) { return NAME(a...); } \
  template <typename... A> inline auto NAME##_system(A... a) { return NAME(a...); }
EMU_SCOPED(atomicAdd)
EMU_SCOPED(atomicSub)
EMU_SCOPED(atomicExch)
EMU_SCOPED(atomicMin)
EMU_SCOPED(atomicMax)
EMU_SCOPED(atomicAnd)
EMU_SCOPED(atomicOr)
EMU_SCOPED(atomicXor)
EMU_SCOPED(atomicCAS)
EMU_SCOPED(atomicInc)
EMU_SCOPED(atomicDec)
#undef EMU_SCOPED
