//go:build linux

package cuda

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/mltop/mltop/profiler"
)

// cudaErrorNotFound is CUDA_ERROR_NOT_FOUND: cuModuleGetGlobal's answer
// for a name the module lacks.
const cudaErrorNotFound = 500

var _ profiler.SymbolWriter = (*backend)(nil)

// WriteSymbol copies src into the module global symbol of k's module
// (profiler.SymbolWriter): found with cuModuleGetGlobal under its plain or
// mangled name, its size held against src's, then a device-to-device copy
// on the kernels' stream, so the next launch reads the new values.
func (b *backend) WriteSymbol(k profiler.Kernel, symbol string, src profiler.Buffer) error {
	kk, ok := k.(*kernel)
	if !ok || kk == nil || kk.mod == 0 {
		return fmt.Errorf("writing %s: not a loaded CUDA kernel: %T", symbol, k)
	}
	sb, err := asBuffer(src)
	if err != nil {
		return fmt.Errorf("writing %s: %w", symbol, err)
	}
	return b.onStream(func() error {
		d := b.drv
		var ptr uint64
		var size uintptr
		names := globalSymbolNames(symbol)
		found := false
		for _, name := range names {
			err := d.call("cuModuleGetGlobal_v2", d.cuModuleGetGlobal, uintptr(unsafe.Pointer(&ptr)), uintptr(unsafe.Pointer(&size)), kk.mod, uintptr(unsafe.Pointer(cString(name))))
			if err == nil {
				found = true
				break
			}
			if ce, ok := err.(*Error); !ok || ce.Code != cudaErrorNotFound {
				return b.check(err)
			}
		}
		if !found {
			return &profiler.SymbolError{Symbol: symbol, Msg: fmt.Sprintf("the module of %s has no global %s (looked up as %s): declare it __constant__ or __device__ at file or namespace scope; NVRTC leaves out a global that no kernel of the program reads", kk.name, symbol, strings.Join(names, ", "))}
		}
		if int64(size) != sb.size {
			return &profiler.SymbolError{Symbol: symbol, Msg: fmt.Sprintf("the module's global is %d B, the buffer %d B: make the buffer's shape and dtype match the declaration", size, sb.size)}
		}
		return b.check(d.call("cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync, uintptr(ptr), uintptr(sb.ptr), size, b.stream))
	})
}
