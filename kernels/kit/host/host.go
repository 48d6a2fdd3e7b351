package host

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mltop/mltop/profiler"
)

// KernelFunc runs ONE threadgroup of a dispatch: the group g.ID of the grid.
// The backend runs the groups of a dispatch in parallel over the cores, so
// a KernelFunc must only write the outputs its group owns.
type KernelFunc func(g *Group)

var (
	kernelsMu sync.RWMutex
	kernelReg = map[string]KernelFunc{}
)

// RegisterKernel makes k the CPU implementation of Program.Source name.
// Call it from the family's init or from a test's init/TestMain;
// registering a name twice is a programming error and panics.
func RegisterKernel(name string, k KernelFunc) {
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	if _, dup := kernelReg[name]; dup {
		panic("host: CPU kernel registered twice: " + name)
	}
	kernelReg[name] = k
}

// Kernels lists the registered CPU kernels, sorted.
func Kernels() []string {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	return slices.Sorted(maps.Keys(kernelReg))
}

// Lookup finds the CPU kernel registered as name.
func Lookup(name string) (KernelFunc, bool) {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	k, ok := kernelReg[name]
	return k, ok
}

// Group is what a KernelFunc sees: its group index, the dispatch geometry,
// the program's macros (as ints), the scalars and the argument buffers.
type Group struct {
	ID      [3]int // group index (x, y, z)
	Grid    [3]int // groups in the dispatch
	Threads int    // threads per group the plan asked for
	Macros  map[string]int
	Scalars []profiler.Scalar

	args  [][]byte
	arena *arena
}

// NewGroup makes the group a backend worker reuses for the groups it runs:
// args are the argument buffers' bytes in Dispatch.Args order. Set ID and
// call Reset before each group.
func NewGroup(grid [3]int, threads int, macros map[string]int, scalars []profiler.Scalar, args [][]byte) *Group {
	return &Group{Grid: grid, Threads: threads, Macros: macros, Scalars: scalars, args: args, arena: &arena{}}
}

// Reset frees the tile scratch of the previous group.
func (g *Group) Reset() { g.arena.reset() }

// Macro returns the value of a macro; a missing macro panics with the
// name, as a missing #define fails a GPU compile.
func (g *Group) Macro(name string) int {
	v, ok := g.Macros[name]
	if !ok {
		panic(fmt.Sprintf("cpu kernel: macro %s is not defined (have %s)", name, strings.Join(slices.Sorted(maps.Keys(g.Macros)), ", ")))
	}
	return v
}

// DType is the storage type named by the DTYPE macro (0 f32, 1 f16, 2 bf16).
func (g *Group) DType() profiler.DType {
	switch g.Macros["DTYPE"] {
	case 1:
		return profiler.F16
	case 2:
		return profiler.BF16
	}
	return profiler.F32
}

func (g *Group) scalar(name string) profiler.Scalar {
	for _, s := range g.Scalars {
		if s.Name == name {
			return s
		}
	}
	panic(fmt.Sprintf("cpu kernel: scalar %s was not passed", name))
}

// Int is the i32 scalar named name.
func (g *Group) Int(name string) int { return int(int32(g.scalar(name).I)) }

// Float is the f32 scalar named name (rounded to float32, as a GPU sees it).
func (g *Group) Float(name string) float32 { return float32(g.scalar(name).F) }

// Arg is argument buffer i viewed as elements of dt.
func (g *Group) Arg(i int, dt profiler.DType) Tensor {
	if i >= len(g.args) {
		panic(fmt.Sprintf("cpu kernel: argument %d requested but %d were bound", i, len(g.args)))
	}
	return Tensor{DType: dt, b: g.args[i]}
}

// Scratch returns n float32 of zeroed tile scratch owned by this group (the
// CPU's threadgroup memory). It is reused across the groups a worker runs,
// so it never allocates in steady state; it is valid until the group ends.
func (g *Group) Scratch(n int) []float32 { return g.arena.take(n) }

// arena is one worker's scratch, reset at each group.
type arena struct {
	buf []float32
	off int
}

func (a *arena) reset() { a.off = 0 }

func (a *arena) take(n int) []float32 {
	if a.off+n > len(a.buf) {
		// Grow; earlier slices of this group keep the old backing array.
		a.buf = make([]float32, max(2*len(a.buf), a.off+n, 4096))
		a.off = 0
	}
	s := a.buf[a.off : a.off+n : a.off+n]
	a.off += n
	clear(s)
	return s
}

// Tensor is typed access to a buffer: elements are decoded to float32 on
// load and encoded with round-to-nearest-even on store.
type Tensor struct {
	DType profiler.DType
	b     []byte
}

// Len is the number of elements.
func (t Tensor) Len() int { return len(t.b) / t.DType.Size() }

// Load decodes len(dst) elements starting at element off.
func (t Tensor) Load(off int, dst []float32) {
	sz := t.DType.Size()
	if off < 0 || (off+len(dst))*sz > len(t.b) {
		boundsPanic("load", off, len(dst), t)
	}
	b := t.b[off*sz : (off+len(dst))*sz]
	if littleEndian && len(dst) > 0 {
		switch t.DType {
		case profiler.F32:
			copy(dst, unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(dst)))
			return
		case profiler.BF16:
			h := unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(dst))
			for i, x := range h {
				dst[i] = math.Float32frombits(uint32(x) << 16)
			}
			return
		}
	}
	t.DType.Decode(b, dst)
}

// Store encodes src into the elements starting at element off.
func (t Tensor) Store(off int, src []float32) {
	sz := t.DType.Size()
	if off < 0 || (off+len(src))*sz > len(t.b) {
		boundsPanic("store", off, len(src), t)
	}
	b := t.b[off*sz : (off+len(src))*sz]
	if littleEndian && len(src) > 0 {
		switch t.DType {
		case profiler.F32:
			copy(unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(src)), src)
			return
		case profiler.BF16:
			h := unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(src))
			for i, x := range src {
				h[i] = profiler.F32ToBF16(x)
			}
			return
		}
	}
	t.DType.Encode(b, src)
}

func boundsPanic(op string, off, n int, t Tensor) {
	panic(fmt.Sprintf("%s of elements [%d, %d) out of range: the %s tensor holds %d elements", op, off, off+n, t.DType, t.Len()))
}

// littleEndian enables the fast paths of Load and Store, which view the
// buffer's bytes as native float32/uint16 (buffers are allocated by make,
// so element offsets are aligned). Elsewhere the portable codecs run.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// At decodes element i.
func (t Tensor) At(i int) float32 {
	var v [1]float32
	t.Load(i, v[:])
	return v[0]
}

// Set encodes v into element i.
func (t Tensor) Set(i int, v float32) {
	t.Store(i, []float32{v})
}

// AtomicAdd adds v to element i of an f32 tensor with a compare-and-swap
// loop: the CPU's float atomic, for outputs that groups running in
// parallel on the cores accumulate into.
func (t Tensor) AtomicAdd(i int, v float32) {
	if t.DType != profiler.F32 {
		panic(fmt.Sprintf("atomic add into a %s tensor: float atomics need f32", t.DType))
	}
	if i < 0 || 4*i+4 > len(t.b) {
		boundsPanic("atomic add", i, 1, t)
	}
	p := (*uint32)(unsafe.Pointer(&t.b[4*i]))
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+v)) {
			return
		}
	}
}
