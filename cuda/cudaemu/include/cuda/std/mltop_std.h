// mltop's CUDA emulation: libcu++'s cuda::std is the host C++ library's std
// here (g++ has the whole library). mltop's NVRTC preparation includes
// <cuda/std/…> headers where the toolkit has them; where g++ would find the
// toolkit's own (installed in /usr/include), which need NVCC or NVRTC,
// these headers of the emulation come first.
#pragma once
namespace cuda {
namespace std {
using namespace ::std;
}  // namespace std
}  // namespace cuda
