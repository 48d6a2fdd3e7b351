package user

import "strings"

// This file decides which system headers a CUDA source gets as stubs: NVRTC
// compiles device code only and has no C library, so host-only headers
// (stdio.h, cuda_runtime.h, cublas_v2.h, <vector>, …) are served as small
// headers with the device-usable parts (stdint.h's types, assert.h's
// assert) or nothing; the host code that needed them is blanked.

// hostOnlyToolkit are toolkit headers device code cannot use under NVRTC.
var hostOnlyToolkit = []string{"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cudaProfiler.h", "cuda_profiler_api.h",
	"nvrtc.h", "nvml.h", "nvToolsExt.h", "device_launch_parameters.h", "curand.h", "nccl.h", "omp.h", "mpi.h"}

var hostOnlyPrefixes = []string{"cublas", "cudnn", "cufft", "cusparse", "cusolver", "nvtx3/", "nvjpeg", "npp", "cutensor"}

// deviceHeaderPrefixes are headers for device code from the toolkit (or
// libraries beside it): never stubbed, so that a missing one is NVRTC's
// clear "cannot open source file".
var deviceHeaderPrefixes = []string{"cooperative_groups", "cub/", "cuda/", "thrust/", "nv/", "cute/", "cutlass/", "crt/",
	"mma.h", "cuda_pipeline", "cuda_awbarrier", "curand_", "cuda_fp8", "cuda_fp6", "cuda_fp4", "math_constants.h",
	"sm_", "vector_types.h", "vector_functions.h", "cuda_texture_types.h", "texture_fetch_functions.h", "cuda_fp16", "cuda_bf16"}

// cudaStubs picks the stub of each system header a CUDA source includes.
func cudaStubs(system []string, tk toolkitHeaders) map[string]string {
	out := map[string]string{}
	for _, h := range system {
		if s, ok := cudaStub(h, tk); ok {
			out[h] = s
		}
	}
	return out
}

func cudaStub(h string, tk toolkitHeaders) (string, bool) {
	if isHostOnly(h) {
		return stubText(h), true
	}
	if tk.has(h) {
		return "", false
	}
	switch h {
	case "cuda_fp16.h", "cuda_bf16.h":
		return "#pragma once\n// mltop: no CUDA toolkit headers found: the type is the storage-only struct ahead of the source\n", true
	}
	for _, p := range deviceHeaderPrefixes {
		if strings.HasPrefix(h, p) {
			return "", false
		}
	}
	return stubText(h), true
}

func isHostOnly(h string) bool {
	for _, n := range hostOnlyToolkit {
		if h == n {
			return true
		}
	}
	for _, p := range hostOnlyPrefixes {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// stubText is a stub's text: the device-usable part of a C header, and an
// empty namespace std (so `using namespace std;` still compiles).
func stubText(h string) string {
	text := "#pragma once\n// mltop: " + h + " is host-only; NVRTC compiles the device code, host code is blanked\n"
	switch h {
	case "stdint.h", "cstdint", "inttypes.h", "cinttypes":
		text += stdintStub
	case "assert.h", "cassert":
		text += "#ifndef assert\n#define assert(e) ((void)0)\n#endif\n"
	case "math.h", "cmath", "float.h", "cfloat", "limits.h", "climits":
		text += "// its constants (INFINITY, M_PI, FLT_MAX, INT_MAX, …) are defined ahead of the source; NVRTC has the math functions\n"
	}
	return text + "namespace std {}\n"
}

const stdintStub = `#ifndef MLTOP_STDINT_
#define MLTOP_STDINT_
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
#if defined(__INT64_TYPE__) && defined(__UINT64_TYPE__)
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;
#else
typedef long long int64_t;
typedef unsigned long long uint64_t;
#endif
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
#endif
`
