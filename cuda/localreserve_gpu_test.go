//go:build linux

package cuda

import (
	"strings"
	"testing"
	"unsafe"
)

// The backend reserves local memory as it opens: the driver holds at least
// LocalReserve per thread, and the device notes and Info say how much.
func TestLocalReserveOnOpen(t *testing.T) {
	t.Setenv(LocalReserveEnv, "")
	b := openOrSkip(t)
	info := b.Info()
	want, _ := LocalReserve("", info.MemoryBytes, info.MaxThreadsPerUnit*info.Units)
	var got uintptr
	if err := b.do(func() error {
		return b.drv.call("cuCtxGetLimit", b.drv.cuCtxGetLimit, uintptr(unsafe.Pointer(&got)), cuLimitStackSize)
	}); err != nil {
		t.Fatal(err)
	}
	if want == 0 || int(got) < want || info.LocalReserve != int(got) {
		t.Errorf("local memory per thread: driver %d, Info %d, want at least %d", got, info.LocalReserve, want)
	}
	if !strings.Contains(strings.Join(info.Notes, "\n"), "B per thread reserved at start-up") {
		t.Errorf("no note of the reserve in %q", info.Notes)
	}
}
