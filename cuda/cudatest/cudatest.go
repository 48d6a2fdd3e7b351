// Package cudatest opens the CUDA backend for tests outside the cuda
// package, or skips them where there is no driver.
package cudatest

import (
	"os"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/profiler"
)

// OpenOrSkip opens the CUDA backend, compiling into a fresh compile cache
// unless MLTOP_CUDA_CACHE names one, and closes it when the test ends; it
// skips the test, with the reason, where there is no CUDA driver.
func OpenOrSkip(t testing.TB) profiler.Backend {
	t.Helper()
	if ok, why := cuda.Available(); !ok {
		t.Skip("no CUDA driver: " + why)
	}
	if os.Getenv("MLTOP_CUDA_CACHE") == "" {
		t.Setenv("MLTOP_CUDA_CACHE", t.TempDir())
	}
	be, err := cuda.Open()
	if err != nil {
		t.Skip("no CUDA driver: " + err.Error())
	}
	t.Cleanup(func() { be.Close() })
	return be
}
