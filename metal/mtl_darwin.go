//go:build darwin

package metal

// Typed wrappers for the Metal calls mltop makes. Each is a thin message
// send; ownership notes say who releases what.

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// createDevice calls MTLCreateSystemDefaultDevice (+1 device).
func (r *rt) createSystemDefaultDevice() (objc.ID, error) {
	d, _, _ := purego.SyscallN(r.createDevice)
	if d == 0 {
		return 0, errors.New("MTLCreateSystemDefaultDevice returned nil: no Metal GPU is available (a VM or a headless session without GPU access?)")
	}
	return objc.ID(d), nil
}

// rawDevice reads what DeviceInfo needs from the device.
func (r *rt) rawDevice(dev objc.ID) (RawDevice, objc.ID) {
	raw := RawDevice{
		Name:            r.goString(r.send(dev, "name")),
		MaxTGMPerGroup:  int(r.uint(dev, "maxThreadgroupMemoryLength")),
		WorkingSetBytes: int64(r.uint(dev, "recommendedMaxWorkingSetSize")),
	}
	raw.MaxThreadsWidth = int(objc.Send[MTLSize](dev, r.sel("maxThreadsPerThreadgroup")).Width)
	// MTLArchitecture is macOS 14+.
	if r.responds(dev, "architecture") {
		if a := r.send(dev, "architecture"); a != 0 {
			raw.Arch = r.goString(r.send(a, "name"))
		}
	}
	var tsSet objc.ID
	for _, set := range r.arrayItems(r.send(dev, "counterSets")) {
		// MTLCommonCounterSetTimestamp is the string "timestamp".
		if strings.EqualFold(r.goString(r.send(set, "name")), "timestamp") {
			tsSet = set
			break
		}
	}
	raw.HasTimestampSet = tsSet != 0
	if r.responds(dev, "supportsCounterSampling:") {
		raw.StageBoundary = r.boolean(dev, "supportsCounterSampling:", MTLCounterSamplingPointAtStageBoundary)
		raw.DispatchBoundary = r.boolean(dev, "supportsCounterSampling:", MTLCounterSamplingPointAtDispatchBoundary)
	}
	return raw, tsSet
}

// sampleTimestamps reads the CPU (ns) and GPU (ticks) clocks together.
func (r *rt) sampleTimestamps(dev objc.ID) (cpu, gpu uint64) {
	r.send(dev, "sampleTimestamps:gpuTimestamp:", unsafe.Pointer(&cpu), unsafe.Pointer(&gpu))
	return cpu, gpu
}

// compileOptions makes a +1 MTLCompileOptions.
func (r *rt) compileOptions(opt CompileOptions) objc.ID {
	o := r.send(r.class("MTLCompileOptions"), "new")
	if len(opt.Macros) > 0 {
		r.send(o, "setPreprocessorMacros:", r.dictionary(opt.Macros))
	}
	if r.responds(o, "setMathMode:") { // macOS 15+
		r.send(o, "setMathMode:", opt.MathMode)
	} else {
		r.send(o, "setFastMathEnabled:", opt.MathMode == MTLMathModeFast)
	}
	if opt.LanguageVersion != 0 {
		r.send(o, "setLanguageVersion:", opt.LanguageVersion)
	}
	return o
}

// pipeline is a compiled compute pipeline state (+1, released on Close).
type pipeline struct {
	state objc.ID
	attrs attrsT
}

type attrsT struct {
	staticTGM, maxThreads, execWidth int
}

// newPipeline compiles source and builds the pipeline for entry. The
// library and function are released once the pipeline exists.
func (r *rt) newPipeline(dev objc.ID, source, entry string, opt CompileOptions) (*pipeline, error) {
	o := r.compileOptions(opt)
	defer r.release(o)
	var nsErr objc.ID
	lib := r.send(dev, "newLibraryWithSource:options:error:", r.nsString(source), o, unsafe.Pointer(&nsErr))
	if lib == 0 {
		return nil, r.nsError(nsErr, "Metal compile")
	}
	defer r.release(lib)
	fn := r.send(lib, "newFunctionWithName:", r.nsString(entry))
	if fn == 0 {
		return nil, fmt.Errorf("the compiled library has no kernel function %q: check the entry name and that the source defines it as `kernel void %s(...)`", entry, entry)
	}
	defer r.release(fn)
	nsErr = 0
	ps := r.send(dev, "newComputePipelineStateWithFunction:error:", fn, unsafe.Pointer(&nsErr))
	if ps == 0 {
		return nil, r.nsError(nsErr, "building the compute pipeline for "+entry)
	}
	p := &pipeline{state: ps}
	p.attrs.maxThreads = int(r.uint(ps, "maxTotalThreadsPerThreadgroup"))
	p.attrs.execWidth = int(r.uint(ps, "threadExecutionWidth"))
	if r.responds(ps, "staticThreadgroupMemoryLength") {
		p.attrs.staticTGM = int(r.uint(ps, "staticThreadgroupMemoryLength"))
	}
	return p, nil
}

// newBuffer allocates a shared-storage buffer (+1). Metal refuses length 0,
// so empty buffers get 16 bytes.
func (r *rt) newBuffer(dev objc.ID, n int64) (objc.ID, error) {
	if n <= 0 {
		n = 16
	}
	b := r.send(dev, "newBufferWithLength:options:", uint64(n), MTLResourceStorageModeShared)
	if b == 0 {
		return 0, fmt.Errorf("newBufferWithLength:%d failed: the device is out of memory", n)
	}
	return b, nil
}

// contents is the CPU address of a shared buffer.
func (r *rt) contents(b objc.ID) unsafe.Pointer {
	return objc.Send[unsafe.Pointer](b, r.sel("contents"))
}

// newCounterSampleBuffer makes a +1 MTLCounterSampleBuffer of n timestamp
// samples in shared storage.
func (r *rt) newCounterSampleBuffer(dev, tsSet objc.ID, n int) (objc.ID, error) {
	desc := r.send(r.class("MTLCounterSampleBufferDescriptor"), "new")
	defer r.release(desc)
	r.send(desc, "setCounterSet:", tsSet)
	r.send(desc, "setStorageMode:", MTLStorageModeShared)
	r.send(desc, "setSampleCount:", uint64(n))
	r.send(desc, "setLabel:", r.nsString("mltop timestamps"))
	var nsErr objc.ID
	sb := r.send(dev, "newCounterSampleBufferWithDescriptor:error:", desc, unsafe.Pointer(&nsErr))
	if sb == 0 {
		return 0, r.nsError(nsErr, "creating a timestamp counter sample buffer")
	}
	return sb, nil
}

// resolveTimestamps reads samples [0, n) of a counter sample buffer.
func (r *rt) resolveTimestamps(sb objc.ID, n int) ([]uint64, error) {
	data := r.send(sb, "resolveCounterRange:", NSRange{Location: 0, Length: uint64(n)})
	if data == 0 {
		return nil, fmt.Errorf("resolveCounterRange: returned nil for %d samples", n)
	}
	return ParseTimestamps(r.dataBytes(data))
}

// computePass begins a compute encoder (autoreleased). With a sample buffer
// it attaches start/end samples at the pass's stage boundaries.
func (r *rt) computePass(cb, sb objc.ID, start, end uint64) objc.ID {
	return r.sampledPass(cb, sb, start, end, "computeCommandEncoder", "MTLComputePassDescriptor", "computePassDescriptor", "computeCommandEncoderWithDescriptor:")
}

// blitPass begins a blit encoder, sampled like computePass when sb != 0.
func (r *rt) blitPass(cb, sb objc.ID, start, end uint64) objc.ID {
	return r.sampledPass(cb, sb, start, end, "blitCommandEncoder", "MTLBlitPassDescriptor", "blitPassDescriptor", "blitCommandEncoderWithDescriptor:")
}

// sampledPass begins an encoder with plain, or, when sb != 0, through a
// pass descriptor (class descClass, made by descNew) whose first sample
// buffer attachment samples sb at indices start and end, with withDesc.
func (r *rt) sampledPass(cb, sb objc.ID, start, end uint64, plain, descClass, descNew, withDesc string) objc.ID {
	if sb == 0 {
		return r.send(cb, plain)
	}
	pd := r.send(r.class(descClass), descNew)
	att := r.send(r.send(pd, "sampleBufferAttachments"), "objectAtIndexedSubscript:", uint64(0))
	r.send(att, "setSampleBuffer:", sb)
	r.send(att, "setStartOfEncoderSampleIndex:", start)
	r.send(att, "setEndOfEncoderSampleIndex:", end)
	return r.send(cb, withDesc, pd)
}

// fill clears (or sets) a whole buffer with a blit.
func (r *rt) fill(enc, buf objc.ID, n int64, value uint8) {
	r.send(enc, "fillBuffer:range:value:", buf, NSRange{Location: 0, Length: uint64(n)}, value)
}

// encodeDispatch binds a pipeline, buffers, the packed scalars and dynamic
// threadgroup memory, and dispatches.
func (r *rt) encodeDispatch(enc objc.ID, p *pipeline, bufs []objc.ID, scalars []byte, dynTGM int, grid, group MTLSize) {
	r.send(enc, "setComputePipelineState:", p.state)
	for i, b := range bufs {
		r.send(enc, "setBuffer:offset:atIndex:", b, uint64(0), uint64(i))
	}
	if len(scalars) > 0 {
		// setBytes copies the bytes at encode time; the slice may go after.
		r.send(enc, "setBytes:length:atIndex:", unsafe.Pointer(&scalars[0]), uint64(len(scalars)), uint64(len(bufs)))
	}
	if dynTGM > 0 {
		// Metal wants a multiple of 16 bytes.
		r.send(enc, "setThreadgroupMemoryLength:atIndex:", uint64((dynTGM+15)&^15), uint64(0))
	}
	r.send(enc, "dispatchThreadgroups:threadsPerThreadgroup:", grid, group)
}

// commitWait commits a command buffer, waits, and reports a GPU error.
func (r *rt) commitWait(cb objc.ID) error {
	r.send(cb, "commit")
	r.send(cb, "waitUntilCompleted")
	if st := r.uint(cb, "status"); st == MTLCommandBufferStatusError {
		return r.nsError(r.send(cb, "error"), "GPU command buffer")
	} else if st != MTLCommandBufferStatusCompleted {
		return fmt.Errorf("command buffer ended in status %d, not completed (4)", st)
	}
	return nil
}

// gpuTimes are a completed command buffer's GPU start and end (seconds).
func (r *rt) gpuTimes(cb objc.ID) (float64, float64) {
	return r.float(cb, "GPUStartTime"), r.float(cb, "GPUEndTime")
}
