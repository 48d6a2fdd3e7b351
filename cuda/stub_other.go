//go:build !linux

package cuda

import (
	"errors"

	"github.com/mltop/mltop/profiler"
)

var errNoLinux = errors.New("CUDA backend needs Linux with the NVIDIA driver")

// Open fails off Linux: the CUDA backend needs libcuda.so.1.
func Open() (profiler.Backend, error) { return nil, errNoLinux }

// Available says whether the backend can run here, and if not, why.
func Available() (bool, string) { return false, errNoLinux.Error() }

// DeviceCount fails off Linux.
func DeviceCount() (int, error) { return 0, errNoLinux }

// nvrtcLocation: NVRTC is loaded only on Linux.
func nvrtcLocation() (path, desc string) { return "", "not loaded: " + errNoLinux.Error() }

// CheckCompile fails off Linux: mltop loads NVRTC only there.
func CheckCompile(p profiler.Program, arch string) (CompileReport, error) {
	return CompileReport{Arch: checkArch(arch), Entry: p.Entry, Registers: -1, StaticShared: -1, ReservedShared: -1}, errNoLinux
}
