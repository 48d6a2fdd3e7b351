//go:build darwin

package mtl

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego/objc"
)

// Device is an MTLDevice.
type Device struct{ Object }

// CreateSystemDefaultDevice calls MTLCreateSystemDefaultDevice (+1).
func CreateSystemDefaultDevice() (Device, error) {
	if err := Load(); err != nil {
		return Device{}, err
	}
	d := objc.ID(fnMTLCreateSystemDefaultDevice())
	if d == 0 {
		return Device{}, errors.New("MTLCreateSystemDefaultDevice returned nil: no Metal GPU is available (a VM or a headless session without GPU access?)")
	}
	return Device{Object{d}}, nil
}

func (d Device) Name() string { return GoString(send(d.id, msgDeviceName)) }
func (d Device) MaxThreadgroupMemoryLength() uint64 {
	return sendT[uint64](d.id, msgMaxThreadgroupMemoryLength)
}
func (d Device) RecommendedMaxWorkingSetSize() uint64 {
	return sendT[uint64](d.id, msgRecommendedMaxWorkingSetSize)
}
func (d Device) MaxThreadsPerThreadgroup() Size {
	return sendT[Size](d.id, msgMaxThreadsPerThreadgroup)
}

// ArchitectureName is the GPU architecture ("applegpu_g13g"), "" before
// macOS 14.
func (d Device) ArchitectureName() string {
	if !responds(d.id, msgArchitecture) {
		return ""
	}
	a := send(d.id, msgArchitecture)
	if a == 0 {
		return ""
	}
	return GoString(send(a, msgArchitectureName))
}

// CounterSet is an MTLCounterSet (owned by the device).
type CounterSet struct{ Object }

func (c CounterSet) Name() string { return GoString(send(c.id, msgCounterSetName)) }

// CounterSets lists the device's counter sets.
func (d Device) CounterSets() []CounterSet {
	var out []CounterSet
	for _, id := range arrayItems(send(d.id, msgCounterSets)) {
		out = append(out, CounterSet{Object{id}})
	}
	return out
}

// TimestampCounterSet is the set named MTLCommonCounterSetTimestamp
// ("timestamp"), or a nil set.
func (d Device) TimestampCounterSet() CounterSet {
	for _, s := range d.CounterSets() {
		if strings.EqualFold(s.Name(), "timestamp") {
			return s
		}
	}
	return CounterSet{}
}

// SupportsCounterSampling says whether counters can be sampled at point
// (an MTLCounterSamplingPoint); false where the method is missing.
func (d Device) SupportsCounterSampling(point uint64) bool {
	if !responds(d.id, msgSupportsCounterSampling) {
		return false
	}
	return sendT[bool](d.id, msgSupportsCounterSampling, point)
}

// SampleTimestamps reads the CPU (ns) and GPU (ticks) clocks together.
func (d Device) SampleTimestamps() (cpu, gpu uint64) {
	send(d.id, msgSampleTimestamps, unsafe.Pointer(&cpu), unsafe.Pointer(&gpu))
	return cpu, gpu
}

// CommandQueue is an MTLCommandQueue.
type CommandQueue struct{ Object }

// NewCommandQueue makes a +1 queue.
func (d Device) NewCommandQueue() (CommandQueue, error) {
	q := send(d.id, msgNewCommandQueue)
	if q == 0 {
		return CommandQueue{}, errors.New("newCommandQueue returned nil")
	}
	return CommandQueue{Object{q}}, nil
}

// CompileOptions is an MTLCompileOptions.
type CompileOptions struct{ Object }

// NewCompileOptions makes +1 options.
func NewCompileOptions() CompileOptions { return CompileOptions{Object{newObject(clsCompileOptions)}} }

// SetPreprocessorMacros sets NAME → value macros.
func (o CompileOptions) SetPreprocessorMacros(pairs [][2]string) {
	send(o.id, msgSetPreprocessorMacros, StringDictionary(pairs))
}

// SetMathMode sets MTLMathMode (macOS 15+) and reports whether the
// options have that property; SetFastMathEnabled is the older switch.
func (o CompileOptions) SetMathMode(mode int64) bool {
	if !responds(o.id, msgSetMathMode) {
		return false
	}
	send(o.id, msgSetMathMode, mode)
	return true
}

func (o CompileOptions) SetFastMathEnabled(on bool) { send(o.id, msgSetFastMathEnabled, on) }
func (o CompileOptions) SetLanguageVersion(v uint64) {
	send(o.id, msgSetLanguageVersion, v)
}

// Library is an MTLLibrary; Function an MTLFunction.
type (
	Library  struct{ Object }
	Function struct{ Object }
)

// NewLibraryWithSource compiles MSL source (+1 library); the error carries
// the compiler's log.
func (d Device) NewLibraryWithSource(source string, opt CompileOptions) (Library, error) {
	var nsErr objc.ID
	lib := send(d.id, msgNewLibraryWithSource, String(source), opt.id, unsafe.Pointer(&nsErr))
	if lib == 0 {
		return Library{}, ErrorFrom(nsErr, "Metal compile")
	}
	return Library{Object{lib}}, nil
}

// NewFunctionWithName finds a function (+1), nil when there is none.
func (l Library) NewFunctionWithName(name string) Function {
	return Function{Object{send(l.id, msgNewFunctionWithName, String(name))}}
}

// FunctionConstantValues is an MTLFunctionConstantValues: the values of a
// kernel's [[function_constant(n)]] declarations, fixed when the function
// is specialised.
type FunctionConstantValues struct{ Object }

// NewFunctionConstantValues makes +1 empty values.
func NewFunctionConstantValues() FunctionConstantValues {
	return FunctionConstantValues{Object{newObject(clsFunctionConstantValues)}}
}

// SetConstantValueAtIndex copies the value at ptr, an MTLDataType
// dataType, as function constant index. The bytes are copied at once.
func (v FunctionConstantValues) SetConstantValueAtIndex(ptr unsafe.Pointer, dataType, index uint64) {
	send(v.id, msgSetConstantValueAtIndex, ptr, dataType, index)
}

// NewFunctionWithConstants specialises the function name with the
// constant values (+1); the error carries the compiler's log (a constant
// with no value, a wrong type).
func (l Library) NewFunctionWithConstants(name string, vals FunctionConstantValues) (Function, error) {
	var nsErr objc.ID
	fn := send(l.id, msgNewFunctionWithNameConstantValues, String(name), vals.id, unsafe.Pointer(&nsErr))
	if fn == 0 {
		return Function{}, ErrorFrom(nsErr, "specialising "+name+" with its function constants")
	}
	return Function{Object{fn}}, nil
}

// ComputePipelineState is an MTLComputePipelineState.
type ComputePipelineState struct{ Object }

// NewComputePipelineStateWithFunction builds a +1 pipeline.
func (d Device) NewComputePipelineStateWithFunction(fn Function) (ComputePipelineState, error) {
	var nsErr objc.ID
	ps := send(d.id, msgNewComputePipelineState, fn.id, unsafe.Pointer(&nsErr))
	if ps == 0 {
		return ComputePipelineState{}, ErrorFrom(nsErr, "building the compute pipeline")
	}
	return ComputePipelineState{Object{ps}}, nil
}

func (p ComputePipelineState) MaxTotalThreadsPerThreadgroup() uint64 {
	return sendT[uint64](p.id, msgMaxTotalThreadsPerThreadgroup)
}
func (p ComputePipelineState) ThreadExecutionWidth() uint64 {
	return sendT[uint64](p.id, msgThreadExecutionWidth)
}

// StaticThreadgroupMemoryLength is the compiler's static TGM, 0 where the
// property is missing.
func (p ComputePipelineState) StaticThreadgroupMemoryLength() uint64 {
	if !responds(p.id, msgStaticThreadgroupMemoryLength) {
		return 0
	}
	return sendT[uint64](p.id, msgStaticThreadgroupMemoryLength)
}

// Buffer is an MTLBuffer.
type Buffer struct{ Object }

// NewBufferWithLength allocates a +1 buffer with resource options opts.
func (d Device) NewBufferWithLength(n, opts uint64) (Buffer, error) {
	b := send(d.id, msgNewBufferWithLength, n, opts)
	if b == 0 {
		return Buffer{}, fmt.Errorf("newBufferWithLength:%d failed: the device is out of memory", n)
	}
	return Buffer{Object{b}}, nil
}

// Contents is the CPU address of a shared buffer.
func (b Buffer) Contents() unsafe.Pointer { return sendT[unsafe.Pointer](b.id, msgBufferContents) }

// CounterSampleBufferDescriptor is an MTLCounterSampleBufferDescriptor.
type CounterSampleBufferDescriptor struct{ Object }

// NewCounterSampleBufferDescriptor makes a +1 descriptor.
func NewCounterSampleBufferDescriptor() CounterSampleBufferDescriptor {
	return CounterSampleBufferDescriptor{Object{newObject(clsCounterSampleBufferDescriptor)}}
}

func (c CounterSampleBufferDescriptor) SetCounterSet(s CounterSet) {
	send(c.id, msgCSBDescSetCounterSet, s.id)
}
func (c CounterSampleBufferDescriptor) SetStorageMode(m uint64) {
	send(c.id, msgCSBDescSetStorageMode, m)
}
func (c CounterSampleBufferDescriptor) SetSampleCount(n uint64) {
	send(c.id, msgCSBDescSetSampleCount, n)
}
func (c CounterSampleBufferDescriptor) SetLabel(s string) { send(c.id, msgCSBDescSetLabel, String(s)) }

// CounterSampleBuffer is an MTLCounterSampleBuffer.
type CounterSampleBuffer struct{ Object }

// NewCounterSampleBuffer makes a +1 sample buffer.
func (d Device) NewCounterSampleBuffer(desc CounterSampleBufferDescriptor) (CounterSampleBuffer, error) {
	var nsErr objc.ID
	sb := send(d.id, msgNewCounterSampleBuffer, desc.id, unsafe.Pointer(&nsErr))
	if sb == 0 {
		return CounterSampleBuffer{}, ErrorFrom(nsErr, "creating a counter sample buffer")
	}
	return CounterSampleBuffer{Object{sb}}, nil
}

// ResolveCounterRange copies the raw samples in r; nil when Metal returns
// no data.
func (s CounterSampleBuffer) ResolveCounterRange(r Range) []byte {
	return dataBytes(send(s.id, msgResolveCounterRange, r))
}

// CommandBuffer is an MTLCommandBuffer (autoreleased).
type CommandBuffer struct{ Object }

func (q CommandQueue) CommandBuffer() CommandBuffer {
	return CommandBuffer{Object{send(q.id, msgCommandBuffer)}}
}

func (c CommandBuffer) Commit()             { send(c.id, msgCommit) }
func (c CommandBuffer) WaitUntilCompleted() { send(c.id, msgWaitUntilCompleted) }
func (c CommandBuffer) Status() uint64      { return sendT[uint64](c.id, msgStatus) }

// Error is the command buffer's NSError as a Go error (what names it).
func (c CommandBuffer) Error(what string) error {
	return ErrorFrom(send(c.id, msgCommandBufferError), what)
}
func (c CommandBuffer) GPUStartTime() float64 { return sendT[float64](c.id, msgGPUStartTime) }
func (c CommandBuffer) GPUEndTime() float64   { return sendT[float64](c.id, msgGPUEndTime) }

// ComputeCommandEncoder and BlitCommandEncoder (autoreleased).
type (
	ComputeCommandEncoder struct{ Object }
	BlitCommandEncoder    struct{ Object }
)

// SampleSpan says which samples of a counter sample buffer a pass writes
// at its start and end; a nil buffer means an unsampled pass.
type SampleSpan struct {
	Buffer     CounterSampleBuffer
	Start, End uint64
}

// ComputePassDescriptor is an MTLComputePassDescriptor (autoreleased).
type ComputePassDescriptor struct{ Object }

// NewComputePassDescriptor makes an autoreleased descriptor whose first
// sample-buffer attachment samples span.
func NewComputePassDescriptor(span SampleSpan) ComputePassDescriptor {
	pd := sendClass(clsComputePassDescriptor, msgComputePassDescriptor)
	att := send(send(pd, msgComputePassAttachments), msgComputePassAttachmentAt, uint64(0))
	send(att, msgComputeAttSetSampleBuffer, span.Buffer.id)
	send(att, msgComputeAttSetStart, span.Start)
	send(att, msgComputeAttSetEnd, span.End)
	return ComputePassDescriptor{Object{pd}}
}

// BlitPassDescriptor is an MTLBlitPassDescriptor (autoreleased).
type BlitPassDescriptor struct{ Object }

// NewBlitPassDescriptor is NewComputePassDescriptor for blits.
func NewBlitPassDescriptor(span SampleSpan) BlitPassDescriptor {
	pd := sendClass(clsBlitPassDescriptor, msgBlitPassDescriptor)
	att := send(send(pd, msgBlitPassAttachments), msgBlitPassAttachmentAt, uint64(0))
	send(att, msgBlitAttSetSampleBuffer, span.Buffer.id)
	send(att, msgBlitAttSetStart, span.Start)
	send(att, msgBlitAttSetEnd, span.End)
	return BlitPassDescriptor{Object{pd}}
}

// ComputeCommandEncoder begins a compute pass, sampled when span has a
// buffer.
func (c CommandBuffer) ComputeCommandEncoder(span SampleSpan) ComputeCommandEncoder {
	if span.Buffer.Nil() {
		return ComputeCommandEncoder{Object{send(c.id, msgComputeCommandEncoder)}}
	}
	return ComputeCommandEncoder{Object{send(c.id, msgComputeCommandEncoderWithDescriptor, NewComputePassDescriptor(span).id)}}
}

// BlitCommandEncoder begins a blit pass, sampled when span has a buffer.
func (c CommandBuffer) BlitCommandEncoder(span SampleSpan) BlitCommandEncoder {
	if span.Buffer.Nil() {
		return BlitCommandEncoder{Object{send(c.id, msgBlitCommandEncoder)}}
	}
	return BlitCommandEncoder{Object{send(c.id, msgBlitCommandEncoderWithDescriptor, NewBlitPassDescriptor(span).id)}}
}

func (e ComputeCommandEncoder) SetComputePipelineState(p ComputePipelineState) {
	send(e.id, msgSetComputePipelineState, p.id)
}
func (e ComputeCommandEncoder) SetBuffer(b Buffer, offset, index uint64) {
	send(e.id, msgSetBuffer, b.id, offset, index)
}

// SetBytes copies b at encode time; the slice may go after. Empty b is a
// no-op.
func (e ComputeCommandEncoder) SetBytes(b []byte, index uint64) {
	if len(b) == 0 {
		return
	}
	send(e.id, msgSetBytes, unsafe.Pointer(&b[0]), uint64(len(b)), index)
}
func (e ComputeCommandEncoder) SetThreadgroupMemoryLength(n, index uint64) {
	send(e.id, msgSetThreadgroupMemoryLength, n, index)
}
func (e ComputeCommandEncoder) DispatchThreadgroups(grid, group Size) {
	send(e.id, msgDispatchThreadgroups, grid, group)
}
func (e ComputeCommandEncoder) EndEncoding() { send(e.id, msgEndEncoding) }

func (e BlitCommandEncoder) FillBuffer(b Buffer, r Range, value uint8) {
	send(e.id, msgFillBuffer, b.id, r, value)
}
func (e BlitCommandEncoder) EndEncoding() { send(e.id, msgEndEncoding) }
