// Package mtl is mltop's typed binding of the Objective-C and C calls it
// makes into Metal, Foundation and IOKit, in the style of Ebitengine's
// Metal binding: one Go type per Objective-C class or protocol (Device,
// Library, Function, ComputePipelineState, Buffer, CommandQueue,
// CommandBuffer, the encoders, pass descriptors, counter sample buffers,
// and the few Foundation classes in between), each method a thin message
// send.
//
// Every message mltop sends is a row of one table (methods, below): the
// declaring class as metal-cpp names it, the selector, the kinds of its
// arguments and result, whether it goes to a class object, and, for the
// few a supported macOS may lack, the release that added them (those are
// sent only after respondsToSelector:). The C functions (Metal's
// MTLCreateSystemDefaultDevice, IOKit's registry calls) are rows of a
// second table, cfuncs. The darwin code registers each selector once, at
// Load, and sends by row, checking every call's Go arguments and result
// type against the row; tests check the rows against
// testdata/selectors.tsv and testdata/cfuncs.tsv, and, given
// MLTOP_METAL_CPP, those files against Apple's metal-cpp headers.
//
// This file and the checks have no build tag so they are tested on any
// machine; the sends live in *_darwin.go.
package mtl

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Size mirrors Metal's MTLSize: three NSUIntegers (unsigned long on arm64),
// 24 bytes, no padding. purego passes it by value following AAPCS64 rule
// B.4: a composite larger than 16 bytes is copied to memory by the caller
// and a pointer to the copy goes in the next integer register.
type Size struct {
	Width, Height, Depth uint64
}

// Range mirrors Foundation's NSRange {NSUInteger location, length}: 16
// bytes, passed in two integer registers on arm64.
type Range struct {
	Location, Length uint64
}

// Kind is how an argument or result travels, in the words of both sides:
// the C++ type metal-cpp declares and the Go type purego passes.
type Kind uint8

const (
	KVoid   Kind = iota // void; only as a result
	KID                 // an object pointer (id, NS::String*, MTL::Buffer*, ...): objc.ID
	KUint               // NS::UInteger, uint64_t and NSUInteger-based enums: uint64
	KInt                // NS::Integer, long long and NSInteger-based enums: int64
	KBool               // bool / BOOL: bool
	KDouble             // double, CFTimeInterval: float64
	KPtr                // void*, const void*, T** out-parameters, scalar T*: unsafe.Pointer or a Go pointer
	KCStr               // const char*: *byte
	KSel                // SEL: objc.SEL
	KU8                 // uint8_t: uint8
	KSize               // MTL::Size by value: Size
	KRange              // NS::Range by value: Range
	KU32                // uint32_t, mach_port_t, io_object_t (C functions): uint32
	KI32                // int32_t, kern_return_t (C functions): int32
	numKinds
)

var kindNames = [numKinds]string{"void", "id", "uint", "int", "bool", "double", "ptr", "cstr", "sel", "u8", "size", "range", "u32", "i32"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// ParseKind reads a kind's name ("id", "uint", ...).
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown kind %q (want one of %s)", s, strings.Join(kindNames[:], ", "))
}

// Method is one message mltop sends: a row of the selector table.
type Method struct {
	Recv  string // the declaring class as metal-cpp spells it: "MTL::Device", "NS::Object"
	Sel   string // the selector: "newLibraryWithSource:options:error:"
	Args  []Kind
	Ret   Kind
	Class bool   // sent to the class object (alloc, computePassDescriptor, ...)
	Since string // the macOS release that added it, for methods sent only after respondsToSelector: ("" for the rest)
}

// Arity is the selector's argument count: one per colon.
func (m Method) Arity() int { return strings.Count(m.Sel, ":") }

func (m Method) String() string {
	return fmt.Sprintf("%s %s", m.Recv, m.Sel)
}

// msg indexes the table.
type msg uint16

const (
	// Foundation (NSObject, NSAutoreleasePool, NSString, NSError,
	// NSDictionary, NSArray, NSData, NSNumber)
	msgAlloc msg = iota
	msgInit
	msgRetain
	msgRelease
	msgRespondsToSelector
	msgDrain
	msgStringWithCString
	msgUTF8String
	msgLocalizedDescription
	msgLocalizedFailureReason
	msgErrorCode
	msgDictionaryWithObjects
	msgArrayCount
	msgArrayObjectAtIndex
	msgDataLength
	msgDataBytes
	msgLongLongValue

	// Metal: the device
	msgDeviceName
	msgMaxThreadgroupMemoryLength
	msgRecommendedMaxWorkingSetSize
	msgMaxThreadsPerThreadgroup
	msgArchitecture
	msgArchitectureName
	msgCounterSets
	msgCounterSetName
	msgSupportsCounterSampling
	msgSampleTimestamps
	msgNewCommandQueue
	msgNewLibraryWithSource
	msgNewComputePipelineState
	msgNewBufferWithLength
	msgNewCounterSampleBuffer

	// compile options, library, function, pipeline, buffer
	msgSetPreprocessorMacros
	msgSetMathMode
	msgSetFastMathEnabled
	msgSetLanguageVersion
	msgNewFunctionWithName
	msgNewFunctionWithNameConstantValues
	msgSetConstantValueAtIndex
	msgMaxTotalThreadsPerThreadgroup
	msgThreadExecutionWidth
	msgStaticThreadgroupMemoryLength
	msgBufferContents

	// counter sample buffers
	msgCSBDescSetCounterSet
	msgCSBDescSetStorageMode
	msgCSBDescSetSampleCount
	msgCSBDescSetLabel
	msgResolveCounterRange

	// queue, command buffer
	msgCommandBuffer
	msgComputeCommandEncoder
	msgComputeCommandEncoderWithDescriptor
	msgBlitCommandEncoder
	msgBlitCommandEncoderWithDescriptor
	msgCommit
	msgWaitUntilCompleted
	msgStatus
	msgCommandBufferError
	msgGPUStartTime
	msgGPUEndTime

	// pass descriptors and their sample-buffer attachments
	msgComputePassDescriptor
	msgComputePassAttachments
	msgComputePassAttachmentAt
	msgComputeAttSetSampleBuffer
	msgComputeAttSetStart
	msgComputeAttSetEnd
	msgBlitPassDescriptor
	msgBlitPassAttachments
	msgBlitPassAttachmentAt
	msgBlitAttSetSampleBuffer
	msgBlitAttSetStart
	msgBlitAttSetEnd

	// encoders
	msgSetComputePipelineState
	msgSetBuffer
	msgSetBytes
	msgSetThreadgroupMemoryLength
	msgDispatchThreadgroups
	msgFillBuffer
	msgEndEncoding

	numMsgs
)

func args(k ...Kind) []Kind { return k }

// methods is the one selector table. Recv is the class whose metal-cpp
// header declares the method (NS::Referencing for retain/release, which
// every object inherits; MTL::CommandEncoder for endEncoding).
var methods = [numMsgs]Method{
	msgAlloc:                  {Recv: "NS::Object", Sel: "alloc", Ret: KID, Class: true},
	msgInit:                   {Recv: "NS::Object", Sel: "init", Ret: KID},
	msgRetain:                 {Recv: "NS::Referencing", Sel: "retain", Ret: KID},
	msgRelease:                {Recv: "NS::Referencing", Sel: "release", Ret: KVoid},
	msgRespondsToSelector:     {Recv: "NS::Object", Sel: "respondsToSelector:", Args: args(KSel), Ret: KBool},
	msgDrain:                  {Recv: "NS::AutoreleasePool", Sel: "drain", Ret: KVoid},
	msgStringWithCString:      {Recv: "NS::String", Sel: "stringWithCString:encoding:", Args: args(KCStr, KUint), Ret: KID, Class: true},
	msgUTF8String:             {Recv: "NS::String", Sel: "UTF8String", Ret: KCStr},
	msgLocalizedDescription:   {Recv: "NS::Error", Sel: "localizedDescription", Ret: KID},
	msgLocalizedFailureReason: {Recv: "NS::Error", Sel: "localizedFailureReason", Ret: KID},
	msgErrorCode:              {Recv: "NS::Error", Sel: "code", Ret: KInt},
	msgDictionaryWithObjects:  {Recv: "NS::Dictionary", Sel: "dictionaryWithObjects:forKeys:count:", Args: args(KPtr, KPtr, KUint), Ret: KID, Class: true},
	msgArrayCount:             {Recv: "NS::Array", Sel: "count", Ret: KUint},
	msgArrayObjectAtIndex:     {Recv: "NS::Array", Sel: "objectAtIndex:", Args: args(KUint), Ret: KID},
	msgDataLength:             {Recv: "NS::Data", Sel: "length", Ret: KUint},
	msgDataBytes:              {Recv: "NS::Data", Sel: "bytes", Ret: KPtr},
	msgLongLongValue:          {Recv: "NS::Number", Sel: "longLongValue", Ret: KInt},

	msgDeviceName:                   {Recv: "MTL::Device", Sel: "name", Ret: KID},
	msgMaxThreadgroupMemoryLength:   {Recv: "MTL::Device", Sel: "maxThreadgroupMemoryLength", Ret: KUint},
	msgRecommendedMaxWorkingSetSize: {Recv: "MTL::Device", Sel: "recommendedMaxWorkingSetSize", Ret: KUint},
	msgMaxThreadsPerThreadgroup:     {Recv: "MTL::Device", Sel: "maxThreadsPerThreadgroup", Ret: KSize},
	msgArchitecture:                 {Recv: "MTL::Device", Sel: "architecture", Ret: KID, Since: "macOS 14"},
	msgArchitectureName:             {Recv: "MTL::Architecture", Sel: "name", Ret: KID},
	msgCounterSets:                  {Recv: "MTL::Device", Sel: "counterSets", Ret: KID},
	msgCounterSetName:               {Recv: "MTL::CounterSet", Sel: "name", Ret: KID},
	msgSupportsCounterSampling:      {Recv: "MTL::Device", Sel: "supportsCounterSampling:", Args: args(KUint), Ret: KBool, Since: "macOS 11"},
	msgSampleTimestamps:             {Recv: "MTL::Device", Sel: "sampleTimestamps:gpuTimestamp:", Args: args(KPtr, KPtr), Ret: KVoid},
	msgNewCommandQueue:              {Recv: "MTL::Device", Sel: "newCommandQueue", Ret: KID},
	msgNewLibraryWithSource:         {Recv: "MTL::Device", Sel: "newLibraryWithSource:options:error:", Args: args(KID, KID, KPtr), Ret: KID},
	msgNewComputePipelineState:      {Recv: "MTL::Device", Sel: "newComputePipelineStateWithFunction:error:", Args: args(KID, KPtr), Ret: KID},
	msgNewBufferWithLength:          {Recv: "MTL::Device", Sel: "newBufferWithLength:options:", Args: args(KUint, KUint), Ret: KID},
	msgNewCounterSampleBuffer:       {Recv: "MTL::Device", Sel: "newCounterSampleBufferWithDescriptor:error:", Args: args(KID, KPtr), Ret: KID},

	msgSetPreprocessorMacros:             {Recv: "MTL::CompileOptions", Sel: "setPreprocessorMacros:", Args: args(KID), Ret: KVoid},
	msgSetMathMode:                       {Recv: "MTL::CompileOptions", Sel: "setMathMode:", Args: args(KInt), Ret: KVoid, Since: "macOS 15"},
	msgSetFastMathEnabled:                {Recv: "MTL::CompileOptions", Sel: "setFastMathEnabled:", Args: args(KBool), Ret: KVoid},
	msgSetLanguageVersion:                {Recv: "MTL::CompileOptions", Sel: "setLanguageVersion:", Args: args(KUint), Ret: KVoid},
	msgNewFunctionWithName:               {Recv: "MTL::Library", Sel: "newFunctionWithName:", Args: args(KID), Ret: KID},
	msgNewFunctionWithNameConstantValues: {Recv: "MTL::Library", Sel: "newFunctionWithName:constantValues:error:", Args: args(KID, KID, KPtr), Ret: KID},
	msgSetConstantValueAtIndex:           {Recv: "MTL::FunctionConstantValues", Sel: "setConstantValue:type:atIndex:", Args: args(KPtr, KUint, KUint), Ret: KVoid},
	msgMaxTotalThreadsPerThreadgroup:     {Recv: "MTL::ComputePipelineState", Sel: "maxTotalThreadsPerThreadgroup", Ret: KUint},
	msgThreadExecutionWidth:              {Recv: "MTL::ComputePipelineState", Sel: "threadExecutionWidth", Ret: KUint},
	msgStaticThreadgroupMemoryLength:     {Recv: "MTL::ComputePipelineState", Sel: "staticThreadgroupMemoryLength", Ret: KUint, Since: "macOS 11"},
	msgBufferContents:                    {Recv: "MTL::Buffer", Sel: "contents", Ret: KPtr},

	msgCSBDescSetCounterSet:  {Recv: "MTL::CounterSampleBufferDescriptor", Sel: "setCounterSet:", Args: args(KID), Ret: KVoid},
	msgCSBDescSetStorageMode: {Recv: "MTL::CounterSampleBufferDescriptor", Sel: "setStorageMode:", Args: args(KUint), Ret: KVoid},
	msgCSBDescSetSampleCount: {Recv: "MTL::CounterSampleBufferDescriptor", Sel: "setSampleCount:", Args: args(KUint), Ret: KVoid},
	msgCSBDescSetLabel:       {Recv: "MTL::CounterSampleBufferDescriptor", Sel: "setLabel:", Args: args(KID), Ret: KVoid},
	msgResolveCounterRange:   {Recv: "MTL::CounterSampleBuffer", Sel: "resolveCounterRange:", Args: args(KRange), Ret: KID},

	msgCommandBuffer:                       {Recv: "MTL::CommandQueue", Sel: "commandBuffer", Ret: KID},
	msgComputeCommandEncoder:               {Recv: "MTL::CommandBuffer", Sel: "computeCommandEncoder", Ret: KID},
	msgComputeCommandEncoderWithDescriptor: {Recv: "MTL::CommandBuffer", Sel: "computeCommandEncoderWithDescriptor:", Args: args(KID), Ret: KID},
	msgBlitCommandEncoder:                  {Recv: "MTL::CommandBuffer", Sel: "blitCommandEncoder", Ret: KID},
	msgBlitCommandEncoderWithDescriptor:    {Recv: "MTL::CommandBuffer", Sel: "blitCommandEncoderWithDescriptor:", Args: args(KID), Ret: KID},
	msgCommit:                              {Recv: "MTL::CommandBuffer", Sel: "commit", Ret: KVoid},
	msgWaitUntilCompleted:                  {Recv: "MTL::CommandBuffer", Sel: "waitUntilCompleted", Ret: KVoid},
	msgStatus:                              {Recv: "MTL::CommandBuffer", Sel: "status", Ret: KUint},
	msgCommandBufferError:                  {Recv: "MTL::CommandBuffer", Sel: "error", Ret: KID},
	msgGPUStartTime:                        {Recv: "MTL::CommandBuffer", Sel: "GPUStartTime", Ret: KDouble},
	msgGPUEndTime:                          {Recv: "MTL::CommandBuffer", Sel: "GPUEndTime", Ret: KDouble},

	msgComputePassDescriptor:     {Recv: "MTL::ComputePassDescriptor", Sel: "computePassDescriptor", Ret: KID, Class: true},
	msgComputePassAttachments:    {Recv: "MTL::ComputePassDescriptor", Sel: "sampleBufferAttachments", Ret: KID},
	msgComputePassAttachmentAt:   {Recv: "MTL::ComputePassSampleBufferAttachmentDescriptorArray", Sel: "objectAtIndexedSubscript:", Args: args(KUint), Ret: KID},
	msgComputeAttSetSampleBuffer: {Recv: "MTL::ComputePassSampleBufferAttachmentDescriptor", Sel: "setSampleBuffer:", Args: args(KID), Ret: KVoid},
	msgComputeAttSetStart:        {Recv: "MTL::ComputePassSampleBufferAttachmentDescriptor", Sel: "setStartOfEncoderSampleIndex:", Args: args(KUint), Ret: KVoid},
	msgComputeAttSetEnd:          {Recv: "MTL::ComputePassSampleBufferAttachmentDescriptor", Sel: "setEndOfEncoderSampleIndex:", Args: args(KUint), Ret: KVoid},
	msgBlitPassDescriptor:        {Recv: "MTL::BlitPassDescriptor", Sel: "blitPassDescriptor", Ret: KID, Class: true},
	msgBlitPassAttachments:       {Recv: "MTL::BlitPassDescriptor", Sel: "sampleBufferAttachments", Ret: KID},
	msgBlitPassAttachmentAt:      {Recv: "MTL::BlitPassSampleBufferAttachmentDescriptorArray", Sel: "objectAtIndexedSubscript:", Args: args(KUint), Ret: KID},
	msgBlitAttSetSampleBuffer:    {Recv: "MTL::BlitPassSampleBufferAttachmentDescriptor", Sel: "setSampleBuffer:", Args: args(KID), Ret: KVoid},
	msgBlitAttSetStart:           {Recv: "MTL::BlitPassSampleBufferAttachmentDescriptor", Sel: "setStartOfEncoderSampleIndex:", Args: args(KUint), Ret: KVoid},
	msgBlitAttSetEnd:             {Recv: "MTL::BlitPassSampleBufferAttachmentDescriptor", Sel: "setEndOfEncoderSampleIndex:", Args: args(KUint), Ret: KVoid},

	msgSetComputePipelineState:    {Recv: "MTL::ComputeCommandEncoder", Sel: "setComputePipelineState:", Args: args(KID), Ret: KVoid},
	msgSetBuffer:                  {Recv: "MTL::ComputeCommandEncoder", Sel: "setBuffer:offset:atIndex:", Args: args(KID, KUint, KUint), Ret: KVoid},
	msgSetBytes:                   {Recv: "MTL::ComputeCommandEncoder", Sel: "setBytes:length:atIndex:", Args: args(KPtr, KUint, KUint), Ret: KVoid},
	msgSetThreadgroupMemoryLength: {Recv: "MTL::ComputeCommandEncoder", Sel: "setThreadgroupMemoryLength:atIndex:", Args: args(KUint, KUint), Ret: KVoid},
	msgDispatchThreadgroups:       {Recv: "MTL::ComputeCommandEncoder", Sel: "dispatchThreadgroups:threadsPerThreadgroup:", Args: args(KSize, KSize), Ret: KVoid},
	msgFillBuffer:                 {Recv: "MTL::BlitCommandEncoder", Sel: "fillBuffer:range:value:", Args: args(KID, KRange, KU8), Ret: KVoid},
	msgEndEncoding:                {Recv: "MTL::CommandEncoder", Sel: "endEncoding", Ret: KVoid},
}

// Methods lists the selector table, in registration order.
func Methods() []Method {
	out := make([]Method, len(methods))
	copy(out, methods[:])
	return out
}

// CFunc is a C function mltop calls through dlopen/dlsym: its row, and
// the Go function variable purego binds it to (a pointer to a func).
type CFunc struct {
	Lib  string // framework: "Metal", "IOKit"
	Name string
	Args []Kind
	Ret  Kind
	fn   any
}

// The Go side of the C functions, bound at Load (Metal) and on first use
// (IOKit). Objects travel as uintptr here.
var (
	fnMTLCreateSystemDefaultDevice    func() uintptr
	fnIOServiceMatching               func(name string) uintptr
	fnIOServiceGetMatchingService     func(mainPort uint32, matching uintptr) uint32
	fnIORegistryEntryCreateCFProperty func(entry uint32, key, allocator uintptr, options uint32) uintptr
	fnIOObjectRelease                 func(object uint32) int32
)

// cfuncs are the C entry points, each bound once.
var cfuncs = []CFunc{
	{Lib: "Metal", Name: "MTLCreateSystemDefaultDevice", Ret: KID, fn: &fnMTLCreateSystemDefaultDevice},
	{Lib: "IOKit", Name: "IOServiceMatching", Args: args(KCStr), Ret: KID, fn: &fnIOServiceMatching},
	{Lib: "IOKit", Name: "IOServiceGetMatchingService", Args: args(KU32, KID), Ret: KU32, fn: &fnIOServiceGetMatchingService},
	{Lib: "IOKit", Name: "IORegistryEntryCreateCFProperty", Args: args(KU32, KID, KID, KU32), Ret: KID, fn: &fnIORegistryEntryCreateCFProperty},
	{Lib: "IOKit", Name: "IOObjectRelease", Args: args(KU32), Ret: KI32, fn: &fnIOObjectRelease},
}

// CFuncs lists the C functions mltop binds.
func CFuncs() []CFunc {
	out := make([]CFunc, len(cfuncs))
	copy(out, cfuncs)
	return out
}

// checkFunc says whether f's Go function variable has the row's shape:
// as many parameters, each of a Go type purego passes as that kind (a Go
// string for a C string, uintptr for an object), and the result.
func checkFunc(f CFunc) error {
	p := reflect.TypeOf(f.fn)
	if p == nil || p.Kind() != reflect.Pointer || p.Elem().Kind() != reflect.Func {
		return fmt.Errorf("%s: bound to %T, not a pointer to a func", f.Name, f.fn)
	}
	t := p.Elem()
	if t.NumIn() != len(f.Args) {
		return fmt.Errorf("%s takes %d arguments, its Go variable %d", f.Name, len(f.Args), t.NumIn())
	}
	is := func(t reflect.Type, k Kind) bool {
		switch {
		case k == KCStr && t.Kind() == reflect.String:
			return true
		case k == KID && t.Kind() == reflect.Uintptr:
			return true
		}
		return goTypeIs(t, k)
	}
	for i, k := range f.Args {
		if !is(t.In(i), k) {
			return fmt.Errorf("%s argument %d is %s, its Go variable takes %v", f.Name, i+1, k, t.In(i))
		}
	}
	switch {
	case f.Ret == KVoid && t.NumOut() == 0:
	case t.NumOut() == 1 && is(t.Out(0), f.Ret):
	default:
		return fmt.Errorf("%s returns %s, its Go variable %v", f.Name, f.Ret, t)
	}
	return nil
}

// checkArgs says whether Go values are what m's row says the selector
// takes: the right count and, per argument, a Go type purego passes as
// that kind. The darwin sends call it on every message, so a wrapper
// that disagrees with the table fails at once, with the row named.
func checkArgs(m Method, vals []any) error {
	if len(m.Args) != m.Arity() {
		return fmt.Errorf("%s: the table gives %d argument kinds for a selector of %d colons", m, len(m.Args), m.Arity())
	}
	if len(vals) != len(m.Args) {
		return fmt.Errorf("%s takes %d arguments, sent with %d", m, len(m.Args), len(vals))
	}
	for i, v := range vals {
		if !goTypeIs(reflect.TypeOf(v), m.Args[i]) {
			return fmt.Errorf("%s argument %d is a %s, sent a %T", m, i+1, m.Args[i], v)
		}
	}
	return nil
}

// checkRet says whether a send's Go result type T fits m's result kind.
func checkRet(m Method, t reflect.Type) error {
	if !goTypeIs(t, m.Ret) {
		return fmt.Errorf("%s returns %s, read as %v", m, m.Ret, t)
	}
	return nil
}

var (
	typePointer = reflect.TypeOf(unsafe.Pointer(nil))
	typeBytePtr = reflect.TypeOf((*byte)(nil))
)

// goTypeIs is the Go side of each kind. objc.ID and objc.Class are
// uintptr types named ID and Class; objc.SEL is named SEL. t == nil is
// an untyped nil interface, which no kind accepts.
func goTypeIs(t reflect.Type, k Kind) bool {
	if t == nil {
		return false
	}
	switch k {
	case KVoid:
		return t.Kind() == reflect.Uintptr && t.Name() == "ID" // ID.Send's result, ignored
	case KID:
		return t.Kind() == reflect.Uintptr && (t.Name() == "ID" || t.Name() == "Class")
	case KSel:
		return t.Kind() == reflect.Uintptr && t.Name() == "SEL"
	case KUint:
		return t == reflect.TypeOf(uint64(0))
	case KInt:
		return t == reflect.TypeOf(int64(0))
	case KBool:
		return t == reflect.TypeOf(false)
	case KDouble:
		return t == reflect.TypeOf(float64(0))
	case KU8:
		return t == reflect.TypeOf(uint8(0))
	case KPtr:
		return t == typePointer || t.Kind() == reflect.Pointer
	case KCStr:
		return t == typeBytePtr
	case KSize:
		return t == reflect.TypeOf(Size{})
	case KRange:
		return t == reflect.TypeOf(Range{})
	case KU32:
		return t == reflect.TypeOf(uint32(0))
	case KI32:
		return t == reflect.TypeOf(int32(0))
	}
	return false
}
