//go:build darwin

package metal

// What the backend does with the typed binding in metal/mtl: device
// facts, pipelines, passes, dispatches. No message is sent here except
// through mtl's wrappers, whose selectors are checked against Apple's
// headers (metal/mtl/testdata/selectors.tsv).

import (
	"fmt"
	"unsafe"

	"github.com/mltop/mltop/metal/mtl"
)

// rawDevice reads what DeviceInfo needs from the device and finds the
// timestamp counter set.
func rawDevice(dev mtl.Device) (RawDevice, mtl.CounterSet) {
	raw := RawDevice{
		Name:            dev.Name(),
		MaxTGMPerGroup:  int(dev.MaxThreadgroupMemoryLength()),
		WorkingSetBytes: int64(dev.RecommendedMaxWorkingSetSize()),
		MaxThreadsWidth: int(dev.MaxThreadsPerThreadgroup().Width),
		Arch:            dev.ArchitectureName(),
		Cores:           mtl.GPUCoreCount(),
	}
	ts := dev.TimestampCounterSet()
	raw.HasTimestampSet = !ts.Nil()
	raw.StageBoundary = dev.SupportsCounterSampling(MTLCounterSamplingPointAtStageBoundary)
	raw.DispatchBoundary = dev.SupportsCounterSampling(MTLCounterSamplingPointAtDispatchBoundary)
	return raw, ts
}

// compileOptions makes +1 MTLCompileOptions.
func compileOptions(opt CompileOptions) mtl.CompileOptions {
	o := mtl.NewCompileOptions()
	if len(opt.Macros) > 0 {
		o.SetPreprocessorMacros(opt.Macros)
	}
	if !o.SetMathMode(int64(opt.MathMode)) { // macOS 15+
		o.SetFastMathEnabled(opt.MathMode == MTLMathModeFast)
	}
	if opt.LanguageVersion != 0 {
		o.SetLanguageVersion(opt.LanguageVersion)
	}
	return o
}

// pipeline is a compiled compute pipeline state (+1, released on Close).
type pipeline struct {
	state mtl.ComputePipelineState
	attrs attrsT
}

type attrsT struct {
	staticTGM, maxThreads, execWidth int
}

// newPipeline compiles source and builds the pipeline for entry. The
// library and function are released once the pipeline exists.
func newPipeline(dev mtl.Device, source, entry string, opt CompileOptions) (*pipeline, error) {
	o := compileOptions(opt)
	defer o.Release()
	lib, err := dev.NewLibraryWithSource(source, o)
	if err != nil {
		return nil, err
	}
	defer lib.Release()
	fn, err := newFunction(lib, entry, opt.Constants)
	if err != nil {
		return nil, err
	}
	defer fn.Release()
	ps, err := dev.NewComputePipelineStateWithFunction(fn)
	if err != nil {
		return nil, fmt.Errorf("%w (entry %s)", err, entry)
	}
	return &pipeline{state: ps, attrs: attrsT{
		maxThreads: int(ps.MaxTotalThreadsPerThreadgroup()),
		execWidth:  int(ps.ThreadExecutionWidth()),
		staticTGM:  int(ps.StaticThreadgroupMemoryLength()),
	}}, nil
}

// newFunction finds entry in lib (+1): a plain kernel or a template's
// [[host_name("entry")]] instantiation alike, specialised with the
// function constants when there are any.
func newFunction(lib mtl.Library, entry string, consts []ConstantValue) (mtl.Function, error) {
	missing := fmt.Errorf("the compiled library has no kernel function %q: check the entry name and that the source defines it as `kernel void %s(...)` or instantiates a template with [[host_name(%q)]]", entry, entry, entry)
	if len(consts) == 0 {
		fn := lib.NewFunctionWithName(entry)
		if fn.Nil() {
			return fn, missing
		}
		return fn, nil
	}
	vals := mtl.NewFunctionConstantValues()
	defer vals.Release()
	for _, c := range consts {
		vals.SetConstantValueAtIndex(unsafe.Pointer(&c.Bytes[0]), c.DataType, uint64(c.Index))
	}
	fn, err := lib.NewFunctionWithConstants(entry, vals)
	if err != nil {
		return fn, fmt.Errorf("%w (entry %s)", err, entry)
	}
	if fn.Nil() {
		return fn, missing
	}
	return fn, nil
}

// newBuffer allocates a shared-storage buffer (+1). Metal refuses length 0,
// so empty buffers get 16 bytes.
func newBuffer(dev mtl.Device, n int64) (mtl.Buffer, error) {
	if n <= 0 {
		n = 16
	}
	return dev.NewBufferWithLength(uint64(n), MTLResourceStorageModeShared)
}

// newCounterSampleBuffer makes a +1 sample buffer of n timestamp samples
// in shared storage.
func newCounterSampleBuffer(dev mtl.Device, ts mtl.CounterSet, n int) (mtl.CounterSampleBuffer, error) {
	desc := mtl.NewCounterSampleBufferDescriptor()
	defer desc.Release()
	desc.SetCounterSet(ts)
	desc.SetStorageMode(MTLStorageModeShared)
	desc.SetSampleCount(uint64(n))
	desc.SetLabel("mltop timestamps")
	sb, err := dev.NewCounterSampleBuffer(desc)
	if err != nil {
		return sb, fmt.Errorf("timestamps: %w", err)
	}
	return sb, nil
}

// resolveTimestamps reads samples [0, n) of a counter sample buffer.
func resolveTimestamps(sb mtl.CounterSampleBuffer, n int) ([]uint64, error) {
	data := sb.ResolveCounterRange(NSRange{Location: 0, Length: uint64(n)})
	if data == nil {
		return nil, fmt.Errorf("resolveCounterRange: returned no data for %d samples", n)
	}
	return ParseTimestamps(data)
}

// encodeDispatch binds a pipeline, the buffers and scalar bytes where bind
// puts them, and dynamic threadgroup memory, and dispatches.
func encodeDispatch(enc mtl.ComputeCommandEncoder, p *pipeline, bufs []mtl.Buffer, bind Binding, dynTGM int, grid, group MTLSize) {
	enc.SetComputePipelineState(p.state)
	for i, b := range bufs {
		enc.SetBuffer(b, 0, uint64(bind.Buffers[i]))
	}
	for _, bb := range bind.Bytes {
		enc.SetBytes(bb.Bytes, uint64(bb.Index))
	}
	if dynTGM > 0 {
		// Metal wants a multiple of 16 bytes.
		enc.SetThreadgroupMemoryLength(uint64((dynTGM+15)&^15), 0)
	}
	enc.DispatchThreadgroups(grid, group)
}

// commitWait commits a command buffer, waits, and reports a GPU error.
func commitWait(cb mtl.CommandBuffer) error {
	cb.Commit()
	cb.WaitUntilCompleted()
	if st := cb.Status(); st == MTLCommandBufferStatusError {
		return cb.Error("GPU command buffer")
	} else if st != MTLCommandBufferStatusCompleted {
		return fmt.Errorf("command buffer ended in status %d, not completed (4)", st)
	}
	return nil
}
