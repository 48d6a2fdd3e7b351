//go:build !darwin

package metal

import (
	"errors"

	"github.com/mltop/mltop/profiler"
)

// ErrNotDarwin is what Open returns off macOS.
var ErrNotDarwin = errors.New("Metal needs macOS on Apple Silicon")

// Available says whether Metal can run here, and why not.
func Available() (bool, string) { return false, ErrNotDarwin.Error() }

// Open fails off macOS.
func Open() (profiler.Backend, error) { return nil, ErrNotDarwin }

// SelfTestTimestamps fails off macOS.
func SelfTestTimestamps(b profiler.Backend) (SelfTestReport, error) {
	return SelfTestReport{}, ErrNotDarwin
}
