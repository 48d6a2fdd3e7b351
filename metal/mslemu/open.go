package mslemu

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// EmulatedDevice is the device the emulation reports to the Runner: an
// Apple GPU's limits (32 KB of threadgroup memory, 1024 threads a group,
// SIMD width 32), so plans are judged as on a Mac.
func EmulatedDevice() profiler.DeviceInfo {
	return metal.DeviceInfo(metal.RawDevice{Name: "MSL emulation (g++)", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
}

// Open returns a Backend for a command (`mltop check --run`) rather than a
// test: the emulation's headers are written from the embedded copy into a
// temporary folder that Close removes, and ctx ends a g++ or an emulated
// kernel that is running (ctrl-C). It returns ErrNoCompiler when g++ is
// not on PATH.
func Open(ctx context.Context, dev profiler.DeviceInfo) (*Backend, error) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return nil, ErrNoCompiler
	}
	dir, err := os.MkdirTemp("", "mltop-mslemu-")
	if err != nil {
		return nil, fmt.Errorf("the MSL emulation's folder: %w", err)
	}
	shim, err := writeShim(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the MSL emulation's headers: %w", err)
	}
	return &Backend{dev: dev, gxx: gxx, shim: shim, src: embeddedShim(), dir: dir, bins: map[string]string{}, slots: map[string][]metal.Slot{}, ctx: ctx, ownsDir: true}, nil
}

// command is exec.Command, ended with the Backend's context when it has
// one (Open).
func (e *Backend) command(name string, args ...string) *exec.Cmd {
	if e.ctx == nil {
		return exec.Command(name, args...)
	}
	return exec.CommandContext(e.ctx, name, args...)
}

// stopped is the context's error once it has ended (nil for a test's
// Backend, which has none).
func (e *Backend) stopped() error {
	if e.ctx == nil {
		return nil
	}
	return e.ctx.Err()
}
