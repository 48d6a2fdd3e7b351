// Package kit holds the checks and helpers that several kernel families
// share, each in one place: dtype macros, the 32-bit index bound, the
// threadgroup limits, vector widths, tolerances and the row-parallel loop
// the float64 references use.
package kit

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// MaxIndexElems bounds every buffer: the kernels index with 32-bit ints.
const MaxIndexElems = math.MaxInt32

// WGValues are the threadgroup widths the reduction families accept.
var WGValues = []int{32, 64, 128, 256, 512, 1024}

// DTypeMacro is the value of the DTYPE macro every kernel source reads:
// 0 f32, 1 f16, 2 bf16.
func DTypeMacro(d profiler.DType) string {
	switch d {
	case profiler.F16:
		return "1"
	case profiler.BF16:
		return "2"
	}
	return "0"
}

// B2I renders a flag as a 0/1 macro value.
func B2I(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// CeilDiv is ⌈a/b⌉ for positive ints.
func CeilDiv(a, b int) int { return (a + b - 1) / b }

// CheckIndexRange refuses buffers the kernels' 32-bit indices cannot
// address. Every entry of bufs (a buffer or a group of same-sized buffers,
// by name) is checked, in name order, so the error is deterministic.
func CheckIndexRange(bufs map[string]int64) error {
	names := make([]string, 0, len(bufs))
	for n := range bufs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if n := bufs[name]; n > MaxIndexElems {
			return fmt.Errorf("%s would hold %d elements, more than the kernels' 32-bit indices address (%d): reduce the dims", name, n, int64(MaxIndexElems))
		}
	}
	return nil
}

// CheckGroup holds a dispatch's threads and TGM against the device limits.
func CheckGroup(d *profiler.Dispatch, dev profiler.DeviceInfo, threadsFix, tgmFix string) error {
	if dev.MaxThreadsPerGroup > 0 && d.Threads() > dev.MaxThreadsPerGroup {
		return fmt.Errorf("%d threads per group exceed the %s limit of %d: %s", d.Threads(), dev.Name, dev.MaxThreadsPerGroup, threadsFix)
	}
	if lim := profiler.TGMLimit(dev, d); lim > 0 && d.TGMBytes() > lim {
		return fmt.Errorf("TGM %d B exceeds the %s limit of %d B per group by %d B: %s", d.TGMBytes(), dev.Name, lim, d.TGMBytes()-lim, tgmFix)
	}
	return nil
}

// CheckGrid holds the grid's extents against the device's MaxGrid (an axis
// whose limit is 0 is unlimited).
func CheckGrid(d *profiler.Dispatch, dev profiler.DeviceInfo, fix string) error {
	for i, axis := range []string{"x", "y", "z"} {
		if lim := dev.MaxGrid[i]; lim > 0 && d.Grid[i] > lim {
			return fmt.Errorf("dispatch %s needs %d groups along %s, more than the %s limit of %d: %s", d.Name, d.Grid[i], axis, dev.Name, lim, fix)
		}
	}
	return nil
}

// TensorCoreMMA reports whether the kernels take their tensor-core path
// for dt: f16 or bf16 on a device with warp-level MMA for it (the CUDA
// kernels keep P and dS in mma registers there).
func TensorCoreMMA(dev profiler.DeviceInfo, dt profiler.DType) bool {
	switch dt {
	case profiler.F16:
		return dev.Has(profiler.FeatureMMAF16)
	case profiler.BF16:
		return dev.Has(profiler.FeatureMMABF16)
	}
	return false
}

// CheckPositive guards the rules' arithmetic against a spec whose knobs or
// dims were never filled (Validate called without the schema defaults).
func CheckPositive(s profiler.Spec, knobs, dims []string) error {
	for _, n := range knobs {
		if v := s.Knobs[n]; v <= 0 {
			return fmt.Errorf("knob %s=%d must be positive: set it or apply the schema defaults", n, v)
		}
	}
	for _, n := range dims {
		if v := s.Dims[n]; v <= 0 {
			return fmt.Errorf("dim %s=%d must be positive: set it or apply the schema defaults", n, v)
		}
	}
	return nil
}

// CheckVec holds a vector width against the 16-byte access and the row width.
func CheckVec(vec int, dt profiler.DType, width int, widthName string) error {
	if vec*dt.Size() > 16 {
		return fmt.Errorf("VEC=%d %s elements are %d bytes, more than one 16-byte vector access: use VEC ≤ %d for %s", vec, dt, vec*dt.Size(), 16/dt.Size(), dt)
	}
	if width%vec != 0 {
		return fmt.Errorf("%s=%d must be a multiple of VEC=%d so that every row starts on a vector boundary: lower VEC", widthName, width, vec)
	}
	return nil
}

// PickTol returns tols[d], or the f32 entry.
func PickTol(tols map[profiler.DType]profiler.Tolerance, d profiler.DType) profiler.Tolerance {
	if t, ok := tols[d]; ok {
		return t
	}
	return tols[profiler.F32]
}

// ParallelRows runs fn(k) for k in [0, n) over the CPU cores.
func ParallelRows(n int, fn func(k int)) {
	workers := min(runtime.NumCPU(), n)
	if workers <= 1 {
		for k := range n {
			fn(k)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for k := range n {
		next <- k
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for k := range next {
				fn(k)
			}
		})
	}
	wg.Wait()
}

// NeedInputs checks that the named input buffers exist with their lengths.
func NeedInputs(in profiler.Inputs, want map[string]int) error {
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		n := want[name]
		got, ok := in[name]
		if !ok {
			return fmt.Errorf("reference needs input %s but it was not generated", name)
		}
		if len(got) != n {
			return fmt.Errorf("reference input %s has %d elements, the shape needs %d", name, len(got), n)
		}
	}
	return nil
}

// Exampler is what every built-in family implements besides
// profiler.Family: small specs that together run each of its programs and
// paths. The registry-walking tests use them: the Metal emulator runs them
// against the float64 reference, the source checks hold the .metal and .cu
// signatures against their plans, and the completeness test requires them.
type Exampler interface {
	Examples() []profiler.Spec
}

// NoSourcer is how a family states in code why it has no kernel source for
// a backend ("cuda" or "metal") yet: a non-empty reason excuses the missing
// file in the completeness test, and is the message a user should see.
type NoSourcer interface {
	NoSource(backend string) string
}
