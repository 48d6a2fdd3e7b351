//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Error is a failed driver or NVRTC call.
type Error struct {
	Op   string // the C function
	Code int    // CUresult or nvrtcResult
	Name string // CUDA_ERROR_ILLEGAL_ADDRESS, NVRTC_ERROR_COMPILATION…
	Msg  string // the library's description
}

func (e *Error) Error() string {
	if e.Msg != "" && e.Msg != e.Name {
		return fmt.Sprintf("%s: %s (%d): %s", e.Op, e.Name, e.Code, e.Msg)
	}
	return fmt.Sprintf("%s: %s (%d)", e.Op, e.Name, e.Code)
}

// Sticky says whether the error leaves the CUDA context unusable: after
// an illegal address or a failed launch every later call fails too, and
// only a new process gets a working context.
func (e *Error) Sticky() bool {
	switch e.Code {
	case 700, 702, 710, 714, 715, 716, 717, 718, 719, 999:
		return true
	}
	return false
}

// ErrContextLost wraps every error after a sticky one.
var ErrContextLost = errors.New("the CUDA context is lost after a kernel fault; only a new process can use the GPU again")

// Device attributes (CUdevice_attribute, cuda.h).
const (
	attrMaxThreadsPerBlock    = 1
	attrMaxSharedPerBlock     = 8
	attrWarpSize              = 10
	attrClockRate             = 13
	attrMultiprocessorCount   = 16
	attrMemoryClockRate       = 36
	attrGlobalMemoryBusWidth  = 37
	attrL2CacheSize           = 38
	attrMaxThreadsPerSM       = 39
	attrComputeCapMajor       = 75
	attrComputeCapMinor       = 76
	attrMaxSharedPerSM        = 81
	attrMaxRegistersPerSM     = 82
	attrMaxSharedPerBlockOpt  = 97
	attrMaxBlocksPerSM        = 106
	attrReservedSharedPerBlk  = 111
	funcAttrMaxThreads        = 0
	funcAttrSharedSizeBytes   = 1
	funcAttrLocalSizeBytes    = 3
	funcAttrNumRegs           = 4
	funcAttrMaxDynamicShared  = 8
	cuStreamNonBlocking       = 1
	cuEventDefault            = 0
	nvrtcSuccess              = 0
	cuErrorNotReady           = 600
	cuErrorNoDevice           = 100
	cuErrorInsufficientDriver = 35
)

// driver holds libcuda's entry points.
type driver struct {
	handle uintptr
	path   string

	cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
	cuDeviceTotalMem, cuDeviceGetAttribute, cuDevicePrimaryCtxRetain,
	cuDevicePrimaryCtxRelease, cuCtxSetCurrent, cuCtxSynchronize, cuCtxSetLimit, cuCtxGetLimit, cuMemAlloc,
	cuMemFree, cuMemcpyHtoD, cuMemcpyHtoDAsync, cuMemcpyDtoH, cuMemcpyDtoDAsync, cuMemsetD8Async, cuMemsetD32Async, cuModuleLoadData,
	cuModuleUnload, cuModuleGetFunction, cuModuleGetGlobal, cuLaunchKernel, cuLaunchCooperativeKernel, cuFuncGetAttribute,
	cuFuncSetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor,
	cuEventCreate, cuEventRecord, cuEventSynchronize, cuEventElapsedTime,
	cuEventDestroy, cuStreamCreate, cuStreamSynchronize, cuStreamDestroy,
	cuGetErrorName, cuGetErrorString uintptr
}

// nvrtc holds NVRTC's entry points.
type nvrtc struct {
	handle uintptr
	path   string

	nvrtcVersion, nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetCUBINSize,
	nvrtcGetCUBIN, nvrtcGetProgramLogSize, nvrtcGetProgramLog,
	nvrtcDestroyProgram, nvrtcGetErrorString uintptr

	// Optional (0 when missing): without them an entry is looked up by its
	// plain name, so it must be extern "C".
	nvrtcAddNameExpression, nvrtcGetLoweredName uintptr
	// Optional (NVRTC 11.2 on): the architectures it compiles for.
	nvrtcGetNumSupportedArchs, nvrtcGetSupportedArchs uintptr

	majorOnce sync.Once
	major     int // NVRTC's major version; 0 when it did not say
}

// majorVersion is NVRTC's major version, asked once (0 when unknown).
func (n *nvrtc) majorVersion() int {
	n.majorOnce.Do(func() {
		if ma, _, err := n.version(); err == nil {
			n.major = ma
		}
	})
	return n.major
}

type symbol struct {
	dst   *uintptr
	names []string // first found wins (versioned names first)
}

func bind(handle uintptr, lib string, syms []symbol) error {
	var missing []string
	for _, s := range syms {
		for _, n := range s.names {
			if p, err := purego.Dlsym(handle, n); err == nil && p != 0 {
				*s.dst = p
				break
			}
		}
		if *s.dst == 0 {
			missing = append(missing, s.names[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s: the driver is too old for mltop (CUDA 12 or newer is needed)", lib, strings.Join(missing, ", "))
	}
	return nil
}

func loadDriver() (*driver, error) {
	var h uintptr
	var errs []string
	var path string
	for _, name := range []string{"libcuda.so.1", "libcuda.so"} {
		p, err := dlopen(name)
		if err == nil {
			h, path = p, name
			break
		}
		errs = append(errs, err.Error())
	}
	if h == 0 {
		return nil, fmt.Errorf("no NVIDIA driver: cannot load libcuda.so.1 (%s); install the NVIDIA driver or use --backend cpu", strings.Join(errs, "; "))
	}
	d := &driver{handle: h, path: path}
	err := bind(h, path, []symbol{
		{&d.cuInit, []string{"cuInit"}},
		{&d.cuDriverGetVersion, []string{"cuDriverGetVersion"}},
		{&d.cuDeviceGetCount, []string{"cuDeviceGetCount"}},
		{&d.cuDeviceGet, []string{"cuDeviceGet"}},
		{&d.cuDeviceGetName, []string{"cuDeviceGetName"}},
		{&d.cuDeviceTotalMem, []string{"cuDeviceTotalMem_v2"}},
		{&d.cuDeviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&d.cuDevicePrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&d.cuDevicePrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
		{&d.cuCtxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&d.cuCtxSynchronize, []string{"cuCtxSynchronize"}},
		{&d.cuCtxSetLimit, []string{"cuCtxSetLimit"}},
		{&d.cuCtxGetLimit, []string{"cuCtxGetLimit"}},
		{&d.cuMemAlloc, []string{"cuMemAlloc_v2"}},
		{&d.cuMemFree, []string{"cuMemFree_v2"}},
		{&d.cuMemcpyHtoD, []string{"cuMemcpyHtoD_v2"}},
		{&d.cuMemcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}},
		{&d.cuMemcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&d.cuMemcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2"}},
		{&d.cuMemsetD8Async, []string{"cuMemsetD8Async"}},
		{&d.cuMemsetD32Async, []string{"cuMemsetD32Async"}},
		{&d.cuModuleLoadData, []string{"cuModuleLoadData"}},
		{&d.cuModuleUnload, []string{"cuModuleUnload"}},
		{&d.cuModuleGetFunction, []string{"cuModuleGetFunction"}},
		{&d.cuModuleGetGlobal, []string{"cuModuleGetGlobal_v2"}},
		{&d.cuLaunchKernel, []string{"cuLaunchKernel"}},
		{&d.cuLaunchCooperativeKernel, []string{"cuLaunchCooperativeKernel"}},
		{&d.cuFuncGetAttribute, []string{"cuFuncGetAttribute"}},
		{&d.cuFuncSetAttribute, []string{"cuFuncSetAttribute"}},
		{&d.cuOccupancyMaxActiveBlocksPerMultiprocessor, []string{"cuOccupancyMaxActiveBlocksPerMultiprocessor"}},
		{&d.cuEventCreate, []string{"cuEventCreate"}},
		{&d.cuEventRecord, []string{"cuEventRecord"}},
		{&d.cuEventSynchronize, []string{"cuEventSynchronize"}},
		{&d.cuEventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&d.cuEventDestroy, []string{"cuEventDestroy_v2", "cuEventDestroy"}},
		{&d.cuStreamCreate, []string{"cuStreamCreate"}},
		{&d.cuStreamSynchronize, []string{"cuStreamSynchronize"}},
		{&d.cuStreamDestroy, []string{"cuStreamDestroy_v2", "cuStreamDestroy"}},
		{&d.cuGetErrorName, []string{"cuGetErrorName"}},
		{&d.cuGetErrorString, []string{"cuGetErrorString"}},
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// nvrtcCandidates lists where NVRTC may be: MLTOP_NVRTC, the sonames the
// loader finds on its own, then the CUDA toolkit and pip wheel layouts.
func nvrtcCandidates() []string {
	return libCandidates("MLTOP_NVRTC", "libnvrtc", "", "")
}

func loadNVRTC() (*nvrtc, error) {
	var tried []string
	why := ""
	for _, c := range nvrtcCandidates() {
		if strings.Contains(filepath.Base(c), "builtins") {
			continue
		}
		if strings.Contains(c, "/") {
			// NVRTC dlopens its builtins by soname; load them first from
			// the same folder so that a pip layout works without
			// LD_LIBRARY_PATH.
			b, _ := filepath.Glob(filepath.Join(filepath.Dir(c), "libnvrtc-builtins.so*"))
			for _, bl := range b {
				dlopen(bl)
			}
		}
		h, err := dlopen(c)
		if err != nil {
			tried, why = append(tried, c), err.Error()
			continue
		}
		n := &nvrtc{handle: h, path: c}
		if err := bind(h, c, []symbol{
			{&n.nvrtcVersion, []string{"nvrtcVersion"}},
			{&n.nvrtcCreateProgram, []string{"nvrtcCreateProgram"}},
			{&n.nvrtcCompileProgram, []string{"nvrtcCompileProgram"}},
			{&n.nvrtcGetCUBINSize, []string{"nvrtcGetCUBINSize"}},
			{&n.nvrtcGetCUBIN, []string{"nvrtcGetCUBIN"}},
			{&n.nvrtcGetProgramLogSize, []string{"nvrtcGetProgramLogSize"}},
			{&n.nvrtcGetProgramLog, []string{"nvrtcGetProgramLog"}},
			{&n.nvrtcDestroyProgram, []string{"nvrtcDestroyProgram"}},
			{&n.nvrtcGetErrorString, []string{"nvrtcGetErrorString"}},
		}); err != nil {
			tried, why = append(tried, c+" ("+err.Error()+")"), err.Error()
			continue
		}
		n.nvrtcAddNameExpression, _ = purego.Dlsym(h, "nvrtcAddNameExpression")
		n.nvrtcGetLoweredName, _ = purego.Dlsym(h, "nvrtcGetLoweredName")
		n.nvrtcGetNumSupportedArchs, _ = purego.Dlsym(h, "nvrtcGetNumSupportedArchs")
		n.nvrtcGetSupportedArchs, _ = purego.Dlsym(h, "nvrtcGetSupportedArchs")
		return n, nil
	}
	if err := envLoadError("MLTOP_NVRTC", "NVRTC", why); err != nil {
		return nil, fmt.Errorf("NVRTC not found: %w", err) // the words noNVRTC (lint) and list read as "no compiler"
	}
	return nil, fmt.Errorf("NVRTC not found (looked in %s); install the CUDA toolkit or `pip install nvidia-cuda-nvrtc`, or set MLTOP_NVRTC to the library's path", strings.Join(tried, ", "))
}

// cString returns a NUL-terminated copy of s.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// goString reads a C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// call runs a driver function and turns a non-zero CUresult into an *Error.
// Callers pass pointers as uintptr(unsafe.Pointer(&x)) right in the call:
// with uintptrescapes the pointed-to memory stays alive and in place until
// the C function returns.
//
//go:uintptrescapes
func (d *driver) call(op string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if code := int32(r); code != 0 {
		return d.err(op, int(code))
	}
	return nil
}

func (d *driver) err(op string, code int) *Error {
	e := &Error{Op: op, Code: code, Name: fmt.Sprintf("CUresult %d", code)}
	var name, msg *byte
	if r, _, _ := purego.SyscallN(d.cuGetErrorName, uintptr(code), uintptr(unsafe.Pointer(&name))); int32(r) == 0 {
		e.Name = goString(name)
	}
	if r, _, _ := purego.SyscallN(d.cuGetErrorString, uintptr(code), uintptr(unsafe.Pointer(&msg))); int32(r) == 0 {
		e.Msg = goString(msg)
	}
	return e
}

//go:uintptrescapes
func (n *nvrtc) call(op string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if code := int32(r); code != nvrtcSuccess {
		e := &Error{Op: op, Code: int(code), Name: fmt.Sprintf("nvrtcResult %d", code)}
		// nvrtcGetErrorString returns a const char* (static C memory).
		r2, _, _ := purego.SyscallN(n.nvrtcGetErrorString, uintptr(code))
		e.Name = goString(*(**byte)(unsafe.Pointer(&r2)))
		return e
	}
	return nil
}

func (n *nvrtc) version() (int, int, error) {
	var major, minor int32
	err := n.call("nvrtcVersion", n.nvrtcVersion, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)))
	return int(major), int(minor), err
}

// supportedArchs are the architectures this NVRTC compiles for, as it
// numbers them (90 for sm_90); nil when it cannot list them (before 11.2).
func (n *nvrtc) supportedArchs() []int {
	if n.nvrtcGetNumSupportedArchs == 0 || n.nvrtcGetSupportedArchs == 0 {
		return nil
	}
	var count int32
	if n.call("nvrtcGetNumSupportedArchs", n.nvrtcGetNumSupportedArchs, uintptr(unsafe.Pointer(&count))) != nil || count <= 0 || count > 1024 {
		return nil
	}
	archs := make([]int32, count)
	if n.call("nvrtcGetSupportedArchs", n.nvrtcGetSupportedArchs, uintptr(unsafe.Pointer(&archs[0]))) != nil {
		return nil
	}
	out := make([]int, count)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out
}

// archError is the ArchError of a failed compile with opts whose log is
// log, when the --gpu-architecture it asks is one this NVRTC does not
// know; nil otherwise.
func (n *nvrtc) archError(opts []string, log string) error {
	for _, o := range opts {
		arch, ok := strings.CutPrefix(o, "--gpu-architecture=")
		if !ok {
			continue
		}
		version := "(version unknown)"
		if ma, mi, err := n.version(); err == nil {
			version = fmt.Sprintf("%d.%d", ma, mi)
		}
		if e := unknownArch(arch, version, n.supportedArchs(), log); e != nil {
			return e
		}
	}
	return nil
}

// compiled is what one NVRTC compile made.
type compiled struct {
	cubin   []byte
	log     string
	lowered string // the entry's mangled name; "" when no name expression was asked for
}

// namesEntries says whether this NVRTC can resolve C++ entry names.
func (n *nvrtc) namesEntries() bool {
	return n.nvrtcAddNameExpression != 0 && n.nvrtcGetLoweredName != 0
}

// compile turns CUDA C++ into a cubin; the error carries NVRTC's log. A
// nameExpr ("ns::kernel<float, 4>", or a plain name) is added as a name
// expression, which instantiates it, and its lowered name is returned.
func (n *nvrtc) compile(src, name string, headers map[string]string, opts []string, nameExpr string) (compiled, error) {
	opts = optionsFor(opts, n.majorVersion())
	var prog uintptr
	hnames := make([]string, 0, len(headers))
	for h := range headers {
		hnames = append(hnames, h)
	}
	slices.Sort(hnames)
	hsrc := make([]*byte, len(hnames)+1)
	hinc := make([]*byte, len(hnames)+1)
	for i, h := range hnames {
		hsrc[i] = cString(headers[h])
		hinc[i] = cString(h)
	}
	csrc, cname := cString(src), cString(name)
	if err := n.call("nvrtcCreateProgram", n.nvrtcCreateProgram, uintptr(unsafe.Pointer(&prog)), uintptr(unsafe.Pointer(csrc)), uintptr(unsafe.Pointer(cname)),
		uintptr(len(hnames)), uintptr(unsafe.Pointer(&hsrc[0])), uintptr(unsafe.Pointer(&hinc[0]))); err != nil {
		return compiled{}, err
	}
	defer func() { purego.SyscallN(n.nvrtcDestroyProgram, uintptr(unsafe.Pointer(&prog))) }()
	var cexpr *byte
	if nameExpr != "" {
		cexpr = cString(nameExpr)
		if err := n.call("nvrtcAddNameExpression", n.nvrtcAddNameExpression, prog, uintptr(unsafe.Pointer(cexpr))); err != nil {
			return compiled{}, err
		}
	}
	copts := make([]*byte, len(opts)+1)
	for i, o := range opts {
		copts[i] = cString(o)
	}
	cerr := n.call("nvrtcCompileProgram", n.nvrtcCompileProgram, prog, uintptr(len(opts)), uintptr(unsafe.Pointer(&copts[0])))
	repairGoSignalFlags() // NVRTC puts Go's signal handlers back without their flags (signals_linux.go)
	// The C strings live in Go memory that only uintptrs point at during
	// the calls: keep them until NVRTC has returned (several compiles run
	// at once, and a collection in between would free them).
	runtime.KeepAlive(copts)
	runtime.KeepAlive(hsrc)
	runtime.KeepAlive(hinc)
	runtime.KeepAlive(csrc)
	runtime.KeepAlive(cname)
	out := compiled{log: n.programLog(prog)}
	if cerr != nil {
		return out, fmt.Errorf("%w\n%s", cerr, out.log)
	}
	if nameExpr != "" {
		var lowered *byte
		err := n.call("nvrtcGetLoweredName", n.nvrtcGetLoweredName, prog, uintptr(unsafe.Pointer(cexpr)), uintptr(unsafe.Pointer(&lowered)))
		runtime.KeepAlive(cexpr)
		if err != nil {
			return out, fmt.Errorf("the lowered name of %q: %w", nameExpr, err)
		}
		out.lowered = goString(lowered) // a copy: NVRTC frees it with the program
	}
	var size uintptr
	if err := n.call("nvrtcGetCUBINSize", n.nvrtcGetCUBINSize, prog, uintptr(unsafe.Pointer(&size))); err != nil {
		return out, err
	}
	if size == 0 {
		return out, fmt.Errorf("NVRTC produced no cubin for %s (is the architecture a real sm_XY?)", name)
	}
	out.cubin = make([]byte, size)
	if err := n.call("nvrtcGetCUBIN", n.nvrtcGetCUBIN, prog, uintptr(unsafe.Pointer(&out.cubin[0]))); err != nil {
		return out, err
	}
	return out, nil
}

// programLog is NVRTC's log of prog, with locations rewritten as file:line.
func (n *nvrtc) programLog(prog uintptr) string {
	var logSize uintptr
	if n.call("nvrtcGetProgramLogSize", n.nvrtcGetProgramLogSize, prog, uintptr(unsafe.Pointer(&logSize))) != nil || logSize <= 1 {
		return ""
	}
	buf := make([]byte, logSize)
	if n.call("nvrtcGetProgramLog", n.nvrtcGetProgramLog, prog, uintptr(unsafe.Pointer(&buf[0]))) != nil {
		return ""
	}
	return RewriteLog(strings.TrimRight(string(buf[:logSize-1]), "\x00\n "))
}

// dlopen loads a library with its error message intact: dlerror is per
// OS thread, and purego calls dlopen and dlerror separately, so a goroutine
// that moved between the two read an empty message (seen about one load
// in twenty). The thread is held for both.
func dlopen(name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil && strings.TrimSpace(err.Error()) == "" {
		err = fmt.Errorf("%s: not found or not loadable", name)
	}
	return h, err
}

// cuInitMayPassAgain says whether cuInit's error may not recur in a fresh
// process: CUDA_ERROR_NOT_INITIALIZED (3), which the driver answered a
// worker starting while the process before it on that GPU was still being
// released. The driver keeps a failed cuInit's answer for the process's
// life, so only a new process can try again.
func cuInitMayPassAgain(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == 3
}
