package user

import (
	"maps"
	"slices"
	"strings"
)

// This file decides which system headers a CUDA source gets as stubs: NVRTC
// compiles device code only and has no C library, so host-only headers
// (stdio.h, cuda_runtime.h, cublas_v2.h, <vector>, …) are served as small
// headers with the device-usable parts (stdint.h's types, assert.h's
// assert) or nothing; the host code that needed them is blanked.

// hostOnlyToolkit are toolkit headers device code cannot use under NVRTC:
// each, included alone ahead of a kernel, fails to compile with NVRTC 11.8
// (host functions "not allowed in JIT mode", or C headers NVRTC lacks).
// The toolkit's headers that compile (driver_types.h, vector_functions.h,
// cuda_texture_types.h, cuda_surface_types.h, surface_functions.h,
// texture_fetch_functions.h, library_types.h) are served as they are; so
// is curand.h, host API though it is: curand_kernel.h includes it for the
// types its device functions take (curandDistribution_t), and it compiles
// under NVRTC beside a stubbed cuda_runtime.h.
var hostOnlyToolkit = []string{"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cudaProfiler.h", "cuda_profiler_api.h",
	"nvrtc.h", "nvml.h", "nvToolsExt.h", "device_launch_parameters.h", "nccl.h", "omp.h", "mpi.h",
	// pulled in by nvcc's cuda_runtime.h, and included by whole programs
	// for make_cudaPitchedPtr / cudaCreateChannelDesc in host code
	"driver_functions.h", "channel_descriptor.h", "cuda_occupancy.h",
	"cudaTypedefs.h", "cudaProfilerTypedefs.h", "nvPTXCompiler.h", "nv_decode.h", "nvblas.h",
	// MTGP32's host-side set-up and its parameter tables (host data)
	"curand_mtgp32_host.h", "curand_mtgp32dc_p_11213.h"}

// hostOnlyPrefixes: the libraries' headers, and the graphics interop
// headers (cudaGL.h, cuda_gl_interop.h, cudaEGL.h, cudaVDPAU.h, …).
var hostOnlyPrefixes = []string{"cublas", "cudnn", "cufft", "cusparse", "cusolver", "nvtx3/", "nvjpeg", "npp", "cutensor",
	"cudaGL", "cudaEGL", "cudaVDPAU", "cuda_gl_", "cuda_egl_", "cuda_vdpau_", "cudaD3D", "cuda_d3d"}

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
	// the toolkit's own headers include C++ standard headers NVRTC does
	// not have (CUB 1.x's util_macro.cuh: <utility>): with libcu++ they
	// are served whoever includes them
	if tk.libcu {
		for _, h := range append(slices.Sorted(maps.Keys(stdViaLibcu)), hostStdForToolkit...) {
			if _, done := out[h]; !done {
				if s, ok := cudaStub(h, tk); ok {
					out[h] = s
				}
			}
		}
	}
	return out
}

func cudaStub(h string, tk toolkitHeaders) (string, bool) {
	if isHostOnly(h) {
		return stubText(h, tk), true
	}
	if lib := hostLibrary(h); lib != "" && !tk.onDevice.uses(lib) {
		return stubText(h, tk) + hostLibraryNamespaces[lib], true
	}
	if h == "cub/cub.cuh" && tk.has(h) {
		return cubDeviceHeader, true
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
	return stubText(h, tk), true
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
func stubText(h string, tk toolkitHeaders) string {
	text := "#pragma once\n// mltop: " + h + " is host-only; NVRTC compiles the device code, host code is blanked\n"
	if tk.libcu && stdViaLibcu[h] != nil {
		text = libcuStdStub(h, tk)
	}
	switch h {
	case "stdint.h", "cstdint", "inttypes.h", "cinttypes":
		text += stdintText(tk, nil)
	case "assert.h", "cassert":
		text += "#ifndef assert\n#define assert(e) ((void)0)\n#endif\n"
	case "math.h", "cmath", "float.h", "cfloat", "limits.h", "climits":
		// its constants, for the toolkit's headers too (CUB's FLT_MAX);
		// the source's are also defined ahead of it; NVRTC has the math functions
		text += headerMacros(h)
	case "iostream", "ostream", "istream", "iosfwd":
		// declared, so that a friend operator<<(std::ostream&, …) of a
		// toolkit type compiles; no stream exists on the device
		text += "namespace std { class ostream; class istream; }\n"
	case "cuda.h":
		// programs test `#if CUDA_VERSION >= 12000`: the compiler's
		// version, as cuda.h writes it (12040 for 12.4)
		text += "#ifndef CUDA_VERSION\n#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)\n#endif\n"
	}
	if isTorchHeader(h) {
		text += torchScalarTypes(tk)
		if tk.libcu {
			// PyTorch's headers bring the C++ library with them: device
			// code of an extension says std::enable_if_t, std::min with
			// no include of its own
			text += torchStdIncludes + torch16LimitsText()
		}
		text += torchFloat8Types(tk.libcu)
		text += torchAccessors + torchTensorInfo + torchAccumulateTypes
		if torchAtomicHeaders[h] {
			text += torchAtomics(tk)
		}
		if torchDeviceUtilsHeaders[h] {
			text += torchDeviceUtils
		}
	}
	return text + "namespace std {}\n"
}

// torchStdIncludes are the standard headers a torch stub includes (with
// libcu++, served as libcu++'s: stdViaLibcu).
const torchStdIncludes = "#include <type_traits>\n#include <limits>\n#include <utility>\n#include <algorithm>\n"

// cubDeviceHeader stands in for <cub/cub.cuh>, which also pulls in CUB's
// device-wide algorithms and their host-side dispatch (kernel launches,
// cudaMalloc), which NVRTC rejects. Kernels use CUB's block, warp and
// thread primitives; these are included where the toolkit has them.
var cubDeviceHeader = `#pragma once
// mltop: <cub/cub.cuh> with CUB's device-side headers only (NVRTC compiles
// device code; the device-wide algorithms' host dispatch is left out).
#include <cub/config.cuh>
` + cubDeviceIncludes(
	"block/block_adjacent_difference", "block/block_discontinuity", "block/block_exchange", "block/block_histogram",
	"block/block_merge_sort", "block/block_radix_rank", "block/block_radix_sort",
	"block/block_reduce", "block/block_run_length_decode", "block/block_scan", "block/block_shuffle", "block/block_store",
	"warp/warp_exchange", "warp/warp_merge_sort", "warp/warp_reduce", "warp/warp_scan", "warp/warp_store",
	"thread/thread_load", "thread/thread_operators", "thread/thread_reduce", "thread/thread_scan", "thread/thread_store",
	"util_ptx", "util_type",
) +
	// CUB 1.x's loads reach its iterators, whose util_device.cuh has host
	// functions NVRTC refuses: only CUB 2 (CCCL) gets them
	"#if defined(CUB_VERSION) && CUB_VERSION >= 200000\n" + cubDeviceIncludes("block/block_load", "warp/warp_load") + "#endif\n"

// cubDeviceIncludes includes each of CUB's headers h where the toolkit has it.
func cubDeviceIncludes(headers ...string) string {
	var b strings.Builder
	for _, h := range headers {
		b.WriteString("#if __has_include(<cub/" + h + ".cuh>)\n#include <cub/" + h + ".cuh>\n#endif\n")
	}
	return b.String()
}
