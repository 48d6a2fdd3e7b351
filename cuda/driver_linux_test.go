//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"testing"
)

// Only cuInit's CUDA_ERROR_NOT_INITIALIZED (3) is worth a fresh worker:
// no device, a wrong driver or no permission stays so in every process.
func TestCuInitMayPassAgain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("the NVIDIA driver does not start: %w", &Error{Op: "cuInit", Code: 3, Name: "CUDA_ERROR_NOT_INITIALIZED"}), true},
		{&Error{Op: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE"}, false},
		{&Error{Op: "cuInit", Code: 35, Name: "CUDA_ERROR_INSUFFICIENT_DRIVER"}, false},
		{&Error{Op: "cuInit", Code: 999, Name: "CUDA_ERROR_UNKNOWN"}, false},
		{errors.New("libcuda.so.1: cannot open shared object file"), false},
	} {
		if got := cuInitMayPassAgain(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}
