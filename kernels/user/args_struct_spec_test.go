package user

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// specStructCU takes two structs whose layout follows the spec: a
// Packet<T> of the dtype's scalars and pointers, and Widths<W * 2> of a
// knob's length. An empty functor of the dtype completes it.
const specStructCU = `template <typename T> struct Packet { T a; T b; int n; const T* x; T* y; };
template <int W> struct Widths { int w[W]; };
template <typename T> struct Twice {
  __device__ T operator()(T v) const { return v + v; }
};
template <typename P, typename Q, typename F>
__global__ void run(P p, Q q, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.y[i] = (decltype(p.a))((float)f(p.x[i]) * (float)p.a + (float)p.b + q.w[0]);
}
`

const specStructYAML = `name: t_spec_struct
sources: {cuda: k.cu}
dtypes: [f32, f16]
knobs:
  W: {values: [1, 2], default: 1}
dims:
  N: {default: 100}
buffers:
  - {name: x, dtype: XDTYPE, shape: [N]}
  - {name: y, dtype: T, shape: [N], out: true}
dispatches:
  - entry: "ENTRY"
    grid: ["cdiv(N, 32)"]
    threads: [32]
    args: ARGS
check: none
`

const specStructEntry = "run<Packet<T>, Widths<{W * 2}>, Twice<T>>"
const specStructArgs = "[{a: 2.0, b: 0.5, n: N, x: x, y: y}, {w: i}, {}]"

func specStructFamily(t *testing.T, xdtype, entry, args string) (*Family, error) {
	t.Helper()
	y := strings.NewReplacer("XDTYPE", xdtype, "ENTRY", entry, "ARGS", args).Replace(specStructYAML)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": specStructCU}))
}

// A struct type argument that names the dtype or a knob is laid out per
// spec: Packet<float> has its two floats at 0 and 4, n at 8 and the
// pointers at 16 and 24; Packet<__half> its two halves at 0 and 2, n at 4,
// the pointers at 8 and 16. Widths<{W * 2}> holds W * 2 ints.
func TestStructTemplateArgReadsSpec(t *testing.T) {
	f, err := specStructFamily(t, "T", specStructEntry, specStructArgs)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, c := range []struct {
		dt                         profiler.DType
		w                          int
		packet, widths             string
		size, nAt, xAt, yAt, wSize int
		a                          uint64 // a's bits
	}{
		{profiler.F32, 1, "Packet<float>", "Widths<2>", 32, 8, 16, 24, 8, uint64(0x40000000)},
		{profiler.F16, 2, "Packet<__half>", "Widths<4>", 24, 4, 8, 16, 16, 0x4000},
	} {
		s := profiler.Spec{Kernel: f.Name(), DType: c.dt, Knobs: map[string]int{"W": c.w}}.WithDefaults(f.Schema())
		p, err := f.Plan(s, cudaDev)
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		d := p.Dispatches[0]
		if len(d.Structs) != 3 {
			t.Fatalf("%s: structs %+v", c.dt, d.Structs)
		}
		pk, wd, fn := d.Structs[0], d.Structs[1], d.Structs[2]
		if pk.Type != c.packet || len(pk.Bytes) != c.size || wd.Type != c.widths || len(wd.Bytes) != c.wSize || len(fn.Bytes) != 1 {
			t.Errorf("%s: %s of %d bytes, %s of %d, functor of %d; want %s of %d, %s of %d, 1", c.dt, pk.Type, len(pk.Bytes), wd.Type, len(wd.Bytes), len(fn.Bytes), c.packet, c.size, c.widths, c.wSize)
			continue
		}
		var a uint64
		if c.dt == profiler.F32 {
			a = uint64(le.Uint32(pk.Bytes))
		} else {
			a = uint64(le.Uint16(pk.Bytes))
		}
		if a != c.a || le.Uint32(pk.Bytes[c.nAt:]) != 100 {
			t.Errorf("%s: a bits %#x, n %d; want %#x and 100", c.dt, a, le.Uint32(pk.Bytes[c.nAt:]), c.a)
		}
		if len(pk.Pointers) != 2 || pk.Pointers[0].Offset != c.xAt || pk.Pointers[1].Offset != c.yAt {
			t.Errorf("%s: pointers %+v, want x at %d, y at %d", c.dt, pk.Pointers, c.xAt, c.yAt)
		}
		if last := le.Uint32(wd.Bytes[c.wSize-4:]); int(last) != c.wSize/4-1 {
			t.Errorf("%s: last w = %d, want %d", c.dt, last, c.wSize/4-1)
		}
	}
}

// The pointee a spec's layout gives a field holds the buffers to it: an
// f32 buffer in Packet<__half>'s `const __half* x` is invalid at f16.
func TestStructTemplateArgPointeePerSpec(t *testing.T) {
	f, err := specStructFamily(t, "f32", specStructEntry, specStructArgs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev); err != nil {
		t.Errorf("f32: %v", err)
	}
	_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), cudaDev)
	if err == nil || !strings.Contains(err.Error(), "buffer x holds f32 but field `const __half* x` points to f16") {
		t.Errorf("f16: %v, want the f32 buffer refused for the __half field", err)
	}
}

func TestStructTemplateArgErrors(t *testing.T) {
	for _, c := range []struct {
		entry, args string
		want        []string
	}{
		{specStructEntry, "[{a: 2.0, bb: 1, n: N, x: x, y: y}, {w: i}, {}]", []string{"struct Packet<float> (parameter `P p` of ", "k.cu:7) has no field bb: its fields are a, b, n, x, y"}},
		{specStructEntry, "[{a: 2.0, n: N, x: x, y: y}, {w: i}, {scale: 2}]", []string{"struct Twice<float> (parameter `F f` of ", "k.cu:7) has no fields, so nothing to set as scale: pass {}"}},
		{specStructEntry, "[{a: 2.0, n: N, x: x, y: y}, {w: [1, 2, 3]}, {}]", []string{"list [1, 2, 3] has 3 elements for field `int w[2]` of struct Widths<2>"}},
		{"run<Packet<T>, Widths<{W / 2}>, Twice<T>>", specStructArgs, []string{"parameter `Q q` of ", "k.cu:7: struct Widths<0>: field `int w[W]`: mltop needs the array's extent \"W\" as a positive constant"}},
	} {
		_, err := specStructFamily(t, "T", c.entry, c.args)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: %v\nwant it to say %q", c.entry, c.args, err, w)
			}
		}
	}
}

// The per-spec layouts match what NVRTC compiles: both dtypes' entries
// compile (where NVRTC is found; it skips elsewhere).
func TestStructTemplateArgCompilesWithNVRTC(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": strings.NewReplacer("XDTYPE", "T", "ENTRY", specStructEntry, "ARGS", specStructArgs).Replace(specStructYAML), "k.cu": specStructCU})
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		checkCompiles(t, path, dt, "run<Packet<"+CTypes["cuda"][dt]+">")
	}
}

// checkCompiles compiles the default spec at dt of the manifest at path
// with NVRTC, wanting an entry that starts with entryPrefix; it skips where
// NVRTC is not found.
func checkCompiles(t *testing.T, path string, dt profiler.DType, entryPrefix string) {
	t.Helper()
	prog, _ := preparedProgram(t, path, dt)
	if !strings.HasPrefix(prog.Entry, entryPrefix) {
		t.Errorf("%s: entry %q, want it to start with %q", dt, prog.Entry, entryPrefix)
	}
	r, err := cuda.CheckCompile(prog, "")
	if err != nil && r.Compiler == "" {
		t.Skipf("NVRTC not found: %v", err)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", dt, err, r.Log)
	}
}

// The notes caution against a flat list that fills only the first row of
// a multi-dimensional array, and against a declared i read as if it were
// the element index; the nested form and an undeclared i draw neither.
func TestStructArrayCautions(t *testing.T) {
	flat := "the flat list [y, x] fills ptrs[0][0..1], the start of the first row of `void* ptrs[2][4]`: for one element per row write the nested form [[y], [x]]"
	shadow := "chunk_of = i reads i, which the manifest declares: i is that name, not the element index"
	for _, c := range []struct {
		dimI      bool
		args      string
		want, not string
	}{
		{false, `[128, {ptrs: [y, x], lens: [N]}, {}, 2.0, 1]`, flat, shadow},
		{false, `[128, {ptrs: [[y], [x]], lens: [N], chunk_of: i}, {}, 2.0, 1]`, "", "the flat list"},
		{true, `[128, {ptrs: [[y], [x]], chunk_of: i}, {}, 2.0, 1]`, shadow, "the flat list"},
	} {
		y := strings.Replace(strings.Replace(forListsYAML, "ENTRY", forListsEntry, 1), "ARGS", c.args, 1)
		if c.dimI {
			y = strings.Replace(y, "  N: {default: 1000}", "  N: {default: 1000}\n  i: {default: 3}", 1)
		}
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": forListsCU}))
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(f.StructNotes("cuda"), "\n")
		if c.want != "" && !strings.Contains(notes, c.want) || strings.Contains(notes, c.not) {
			t.Errorf("%s: notes %q\nwant %q and not %q", c.args, notes, c.want, c.not)
		}
	}
}
