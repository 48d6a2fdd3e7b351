//go:build linux

package cuda

import (
	"sync"
	"syscall"
	"unsafe"
)

// NVRTC (its LLVM inside) saves and restores the handlers of SIGINT,
// SIGTERM and SIGXFSZ around a compile, and puts Go's handler back without
// the flags Go installed it with (SA_ONSTACK, SA_SIGINFO): measured with
// NVRTC 11.8, flags 0x1c000004 became 0x14000000. A ctrl-C or SIGTERM
// after the first compile then reaches Go's handler off the signal stack,
// and the runtime dies ("non-Go code set up signal handler without
// SA_ONSTACK flag") instead of cancelling the sweep and keeping its rows.
// repairGoSignalFlags, run after every NVRTC compile, gives each signal
// whose handler is Go's the flags Go gives it.

// kernelSigaction is the kernel's struct sigaction on linux/amd64 and
// linux/arm64 (what rt_sigaction reads and writes).
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

const (
	saOnStack = 0x08000000
	saSigInfo = 0x4
	// sigURG is always handled by the Go runtime (goroutine preemption):
	// its action is the reference for Go's handler and flags.
	sigURG   = 23
	maxSigno = 64
)

func getSigaction(sig int) (kernelSigaction, bool) {
	var a kernelSigaction
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&a)), 8, 0, 0)
	return a, e == 0
}

func setSigaction(sig int, a kernelSigaction) bool {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&a)), 0, 8, 0, 0)
	return e == 0
}

var signalRepair sync.Mutex

// repairGoSignalFlags restores Go's flags, restorer and mask on every
// signal whose handler is Go's but whose flags are not Go's, and returns
// the signals it repaired.
func repairGoSignalFlags() []int {
	signalRepair.Lock()
	defer signalRepair.Unlock()
	ref, ok := getSigaction(sigURG)
	if !ok || ref.handler == 0 || ref.flags&saOnStack == 0 {
		return nil // not Go's (a test that replaced it, or a platform without it): leave everything alone
	}
	var fixed []int
	for sig := 1; sig <= maxSigno; sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) || sig == sigURG {
			continue
		}
		a, ok := getSigaction(sig)
		if !ok || a.handler != ref.handler || a.flags == ref.flags {
			continue
		}
		a.flags, a.restorer = ref.flags, ref.restorer
		if setSigaction(sig, a) {
			fixed = append(fixed, sig)
		}
	}
	return fixed
}
