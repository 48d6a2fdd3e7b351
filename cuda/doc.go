// Package cuda is mltop's CUDA backend: a small binding over purego (no cgo)
// that dlopens libcuda.so.1 and NVRTC, compiles shaders/<family>/*.cu at run
// time for the device's architecture, and times launches with CUDA events.
//
// Every CUDA call runs on one goroutine locked to its OS thread, because a
// CUDA context is current per thread. A machine without the driver or NVRTC
// gets an error from Open that says what is missing, never a crash.
package cuda

// ExitOnFaultEnv, when set in a worker's environment, makes the backend
// exit the process at the first sticky CUDA error (illegal address, launch
// failure): the parent then records the spec as crashed with the worker's
// last words and starts a fresh worker, with a fresh context, for the next
// spec. In-process runs (tests) leave it unset and get an error instead.
const ExitOnFaultEnv = "MLTOP_CUDA_EXIT_ON_FAULT"
