package profiler

import (
	"fmt"
	"strings"
)

// Plan is what a family makes of a Spec for one device: the programs to
// compile, the buffers, the dispatches (timed together and one by one), the
// work model and the threadgroup-memory layout.
type Plan struct {
	Buffers    []BufferSpec
	Setup      []Dispatch // run once before verification and timing, untimed (e.g. a forward pass feeding a backward)
	Dispatches []Dispatch // the algorithm that is timed
	FLOPs      float64    // floating-point operations of one run of Dispatches
	Bytes      float64    // the fewest bytes one run must move through device memory
	Notes      []string   // anything the user should know (e.g. "FLOPs count unmasked pairs only")
}

// Role says what a buffer is for.
type Role string

const (
	In  Role = "in"
	Out Role = "out"
	// Scratch is device working memory initialised once and kept across
	// launches (the kernel resets what it needs itself, as rmsnorm_bwd's
	// running ticket counter does); never checked.
	Scratch Role = "scratch"
	// InOut is read and written in place (an optimizer step): initialised
	// like an input, checked like an output, and restored to its initial
	// values before every timed rep.
	InOut Role = "inout"
	// ScratchReset is device working memory the host resets, as real
	// launchers do (a block counter that must be 0 at every launch,
	// per-block partial sums, split-K semaphores): initialised like an
	// input and restored to those values before every rep, as InOut is,
	// but never checked and never given to the reference.
	ScratchReset Role = "scratch_reset"
)

// Reads says whether the kernel reads the buffer's initial values (and
// the reference gets them).
func (r Role) Reads() bool { return r == In || r == InOut }

// Checked says whether the buffer holds results the reference checks.
func (r Role) Checked() bool { return r == Out || r == InOut }

// Restored says whether the runner puts the buffer back to its initial
// values before every rep (warm-up and timed), outside the timed region.
func (r Role) Restored() bool { return r == InOut || r == ScratchReset }

// InitKind says how the runner fills a buffer before the run.
type InitKind string

const (
	InitNormal  InitKind = "normal"  // N(Mean, Scale²), rounded to the dtype
	InitUniform InitKind = "uniform" // U(Lo, Hi), rounded to the dtype
	InitInts    InitKind = "ints"    // integers in [Lo, Hi)
	InitZero    InitKind = "zero"
	InitPoison  InitKind = "poison" // NaN bytes, so unwritten outputs fail verification
	InitOnes    InitKind = "ones"
	InitArange  InitKind = "arange" // 0, 1, 2, … (rounded to the dtype)
	InitData    InitKind = "data"   // BufferSpec.Data (e.g. read from a .npy file), rounded to the dtype
)

// Generated says whether the runner makes the buffer's values on the host
// and uploads them (as opposed to poison or zero bytes set on the device).
func (k InitKind) Generated() bool {
	switch k {
	case InitNormal, InitUniform, InitInts, InitOnes, InitArange, InitData:
		return true
	}
	return false
}

// BufferSpec is one device buffer.
type BufferSpec struct {
	Name   string
	Role   Role
	Type   DType
	Elems  int64
	Init   InitKind
	Scale  float64 // InitNormal
	Mean   float64 // InitNormal
	Lo, Hi float64 // InitUniform, InitInts
	// Outliers is the fraction of an InitNormal buffer's elements that are
	// multiplied by OutlierScale (chosen per element from the seed).
	Outliers     float64
	OutlierScale float64
	Data         []float32 // InitData: the values, Elems of them (IntBits: their slots, see IntSlot)
	// IntBits says that the buffer's []float32 host values (Fill's, the
	// Inputs a reference gets) carry each integer's 32-bit pattern
	// (math.Float32frombits) instead of its value as a float, so that every
	// value of an i32 or u32 buffer is exact, not only those within 2^24:
	// an i32 or i64 slot is the int32 pattern (sign-extended into an i64),
	// a u32 or u64 slot the uint32 pattern (zero-extended). It applies to
	// those four types only, and to every init but normal and uniform
	// (whose draws stay floats). Read and write such slots with IntValue,
	// Value and IntSlot, encode them with EncodeBuffer. Only the user
	// family sets it; the built-in families read their integer inputs
	// (ids, targets) as float values.
	IntBits bool `json:",omitempty"`
	// Symbol, when set, is the C++ name of a module global (a CUDA
	// __constant__ or __device__ variable) that the buffer's values are
	// copied into before the spec's launches (see SymbolWriter). Such a
	// buffer is an input that no dispatch binds as an argument.
	Symbol string `json:",omitempty"`
}

// Bytes is the buffer's size.
func (b BufferSpec) Bytes() int64 { return b.Elems * int64(b.Type.Size()) }

// Macro is a preprocessor definition baked into the program (MLX's
// JIT-constant approach: knobs become compile-time constants).
type Macro struct {
	Name  string
	Value string
}

// Program names a kernel source and entry point. Source is the file stem:
// <Source>.metal and <Source>.cu in the family's folder shaders/<family>/
// (shaders.Source finds them by name), and the CPU kernel registered as
// <Source> with kernels/kit/host.
//
// A user kernel's program carries its own source instead: Code is the text,
// File the path compile errors name (the user's file, so that a log's
// file:line points at it) and Includes the headers it may #include, by the
// name it includes them with. IncludeDirs are directories searched for
// the rest of its #includes (a manifest's include_dirs:, absolute paths),
// before the toolkit's. Entry may be any C++ name of the kernel: an
// extern "C" name, ns::kernel, or a template instance such as
// layernorm_fwd<__nv_bfloat16, 4> (backends that support it resolve it).
type Program struct {
	Source      string
	Entry       string
	Macros      []Macro
	Code        string             `json:",omitempty"`
	File        string             `json:",omitempty"`
	Includes    map[string]string  `json:",omitempty"`
	IncludeDirs []string           `json:",omitempty"`
	Constants   []FunctionConstant `json:",omitempty"` // Metal [[function_constant]] values (constants.go)
}

// ScalarKind is the C type of a scalar kernel parameter (see scalar.go).
type ScalarKind string

const (
	ScalarI8   ScalarKind = "i8"   // int8_t / signed char
	ScalarU8   ScalarKind = "u8"   // uint8_t / unsigned char
	ScalarI16  ScalarKind = "i16"  // int16_t / short
	ScalarU16  ScalarKind = "u16"  // uint16_t / unsigned short
	ScalarI32  ScalarKind = "i32"  // int32_t / int
	ScalarU32  ScalarKind = "u32"  // uint32_t / unsigned
	ScalarI64  ScalarKind = "i64"  // int64_t / long long
	ScalarU64  ScalarKind = "u64"  // uint64_t / size_t
	ScalarF32  ScalarKind = "f32"  // float
	ScalarF64  ScalarKind = "f64"  // double
	ScalarBool ScalarKind = "bool" // bool (one byte)
	ScalarF16  ScalarKind = "f16"  // half / __half: IEEE binary16 bits
	ScalarBF16 ScalarKind = "bf16" // __nv_bfloat16: bfloat16 bits
)

// Scalar is a by-value kernel parameter. CUDA passes each as its own
// argument, after the buffers or where Dispatch.Order puts it; Metal packs them, in order, into one struct
// bound with setBytes at the index after the last buffer. Integer kinds
// and bool hold their value in I (u64 as its bit pattern), float kinds in
// F (f16 and bf16 already rounded to their type); ScalarOf builds one with
// range checks.
type Scalar struct {
	Name string
	Kind ScalarKind
	I    int64
	F    float64
}

// I32Param makes an int scalar.
func I32Param(name string, v int) Scalar { return Scalar{Name: name, Kind: ScalarI32, I: int64(v)} }

// F32Param makes a float scalar.
func F32Param(name string, v float64) Scalar { return Scalar{Name: name, Kind: ScalarF32, F: v} }

// TGMItem is one named piece of threadgroup (shared) memory.
type TGMItem struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
	Note  string `json:"note"` // e.g. "BQ×(D+8) bf16, +8 padding against bank conflicts"
}

// Dispatch is one kernel launch, or a zero fill of a buffer when Zero is set.
type Dispatch struct {
	Name       string
	Program    Program
	Grid       [3]int // threadgroups
	Group      [3]int // threads per threadgroup
	Args       []string
	Scalars    []Scalar
	DynamicTGM int // bytes of threadgroup memory set at dispatch time
	TGM        []TGMItem
	Zero       string // when set: fill this buffer with zeros instead of launching
	// Order is the kernel's parameter list where buffers and scalars
	// interleave (CUDA): each entry is a buffer of Args or a scalar of
	// Scalars. Empty: the buffers in order, then the scalars.
	Order []ArgRef `json:",omitempty"`
	// Structs are by-value struct parameters (CUDA), placed by Order. The
	// buffers their pointer fields name are in Args too, where no Order
	// entry refers to them.
	Structs []StructArg `json:",omitempty"`
	// Cooperative asks for a cooperative launch (CUDA's
	// cuLaunchCooperativeKernel): every block of the grid is resident at
	// once, so the kernel may wait on a grid-wide barrier
	// (cooperative_groups' this_grid().sync()). A backend that cannot
	// launch so, or a grid larger than what fits at once, is refused.
	Cooperative bool `json:",omitempty"`
}

// StructArg is a struct a kernel takes by value: its bytes as C lays it
// out, and the pointer fields into which the backend writes a buffer's
// device address at launch.
type StructArg struct {
	Name     string // the parameter: "params"
	Type     string // the struct: "ConvParamsBase"
	Bytes    []byte
	Pointers []StructPointer `json:",omitempty"`
}

// StructPointer is a pointer field of a StructArg: 8 bytes at Offset that
// hold the address of the dispatch's buffer Args[Arg].
type StructPointer struct {
	Field  string
	Offset int
	Arg    int
}

// ArgRef is one kernel parameter of a Dispatch: Args[Index] or, when
// Scalar, Scalars[Index], or, when Struct, Structs[Index].
type ArgRef struct {
	Scalar bool
	Struct bool `json:",omitempty"`
	Index  int
}

// ParamOrder is the dispatch's parameter list: Order, or the buffers then
// the scalars when Order is empty.
func (d Dispatch) ParamOrder() []ArgRef {
	if len(d.Order) > 0 {
		return d.Order
	}
	out := make([]ArgRef, 0, len(d.Args)+len(d.Scalars))
	for i := range d.Args {
		out = append(out, ArgRef{Index: i})
	}
	for j := range d.Scalars {
		out = append(out, ArgRef{Scalar: true, Index: j})
	}
	return out
}

// Threads is the threadgroup size.
func (d Dispatch) Threads() int { return d.Group[0] * d.Group[1] * d.Group[2] }

// Groups is the number of threadgroups.
func (d Dispatch) Groups() int64 { return int64(d.Grid[0]) * int64(d.Grid[1]) * int64(d.Grid[2]) }

// TGMBytes sums the named items.
func (d Dispatch) TGMBytes() int {
	t := 0
	for _, it := range d.TGM {
		t += it.Bytes
	}
	return t
}

// TGMParts names the threadgroup memory items with their bytes, as the
// messages about a limit show them: "partial 1024 B + dynamic 256000 B",
// or "no items".
func (d Dispatch) TGMParts() string {
	if len(d.TGM) == 0 {
		return "no items"
	}
	parts := make([]string, len(d.TGM))
	for i, it := range d.TGM {
		parts[i] = fmt.Sprintf("%s %d B", it.Name, it.Bytes)
	}
	return strings.Join(parts, " + ")
}

// Buffer looks a buffer up by name.
func (p *Plan) Buffer(name string) (BufferSpec, bool) {
	for _, b := range p.Buffers {
		if b.Name == name {
			return b, true
		}
	}
	return BufferSpec{}, false
}

// MemoryBytes is the device memory the plan allocates: its peak footprint.
func (p *Plan) MemoryBytes() int64 {
	var t int64
	for _, b := range p.Buffers {
		t += b.Bytes()
	}
	return t
}

// TGMLimit is the threadgroup memory a dispatch may use: the opt-in limit
// where the platform has one and the dispatch asks for more than the default.
func TGMLimit(dev DeviceInfo, d *Dispatch) int {
	if dev.TGMPerGroupOptIn > dev.TGMPerGroup && d.TGMBytes() > dev.TGMPerGroup {
		return dev.TGMPerGroupOptIn
	}
	return dev.TGMPerGroup
}
