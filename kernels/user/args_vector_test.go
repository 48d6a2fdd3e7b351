package user

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// vectorWant is, per CUDA vector type, its size, alignment, field count
// and element kind, by hand from vector_types.h (long: 8 bytes, Linux).
var vectorWant = []struct {
	name        string
	size, align int
	n           int
	kind        profiler.ScalarKind
}{
	{"char1", 1, 1, 1, profiler.ScalarI8}, {"uchar2", 2, 2, 2, profiler.ScalarU8},
	{"char3", 3, 1, 3, profiler.ScalarI8}, {"uchar4", 4, 4, 4, profiler.ScalarU8},
	{"short2", 4, 4, 2, profiler.ScalarI16}, {"ushort3", 6, 2, 3, profiler.ScalarU16},
	{"short4", 8, 8, 4, profiler.ScalarI16},
	{"int1", 4, 4, 1, profiler.ScalarI32}, {"int2", 8, 8, 2, profiler.ScalarI32},
	{"uint3", 12, 4, 3, profiler.ScalarU32}, {"uint4", 16, 16, 4, profiler.ScalarU32},
	{"long1", 8, 8, 1, profiler.ScalarI64}, {"ulong2", 16, 16, 2, profiler.ScalarU64},
	{"long3", 24, 8, 3, profiler.ScalarI64}, {"long4", 32, 16, 4, profiler.ScalarI64},
	{"longlong2", 16, 16, 2, profiler.ScalarI64}, {"ulonglong3", 24, 8, 3, profiler.ScalarU64},
	{"longlong4", 32, 16, 4, profiler.ScalarI64},
	{"float1", 4, 4, 1, profiler.ScalarF32}, {"float2", 8, 8, 2, profiler.ScalarF32},
	{"float3", 12, 4, 3, profiler.ScalarF32}, {"float4", 16, 16, 4, profiler.ScalarF32},
	{"double1", 8, 8, 1, profiler.ScalarF64}, {"double2", 16, 16, 2, profiler.ScalarF64},
	{"double3", 24, 8, 3, profiler.ScalarF64}, {"double4", 32, 16, 4, profiler.ScalarF64},
	{"dim3", 12, 4, 3, profiler.ScalarU32},
	{"__half2", 4, 4, 2, profiler.ScalarF16}, {"half2", 4, 4, 2, profiler.ScalarF16},
	{"__nv_bfloat162", 4, 4, 2, profiler.ScalarBF16}, {"nv_bfloat162", 4, 4, 2, profiler.ScalarBF16},
	// toolkit 13's explicitly aligned forms
	{"double4_16a", 32, 16, 4, profiler.ScalarF64}, {"longlong4_32a", 32, 32, 4, profiler.ScalarI64},
}

func TestVectorLayout(t *testing.T) {
	for _, c := range vectorWant {
		l, ok := vectorLayout(c.name)
		if !ok {
			t.Errorf("%s: not a vector type", c.name)
			continue
		}
		if l.size != c.size || l.align != c.align || len(l.leaves) != c.n {
			t.Errorf("%s: size %d align %d fields %d, want %d, %d, %d", c.name, l.size, l.align, len(l.leaves), c.size, c.align, c.n)
		}
		es := profiler.Scalar{Kind: c.kind}.Size()
		for i, lf := range l.leaves {
			if lf.path != vectorFields[i] || lf.offset != i*es || lf.kind != c.kind || lf.count != 1 {
				t.Errorf("%s field %d: %+v, want %s at %d of kind %s", c.name, i, lf, vectorFields[i], i*es, c.kind)
			}
		}
	}
	for _, name := range []string{"float5", "float0", "int", "uint3x", "vec3", "float4_16a", "int4_32a", "dim2", "__half3"} {
		if _, ok := vectorLayout(name); ok {
			t.Errorf("%s: taken for a vector type", name)
		}
	}
}

// vectorStructs holds vector fields inside structs of the source's own.
const vectorStructs = `struct Fdv { char tag; uint3 fdv; float4 v; int2 p; };
struct Mixed { short s; __half2 h; double2 d; dim3 g; char3 c; };
`

var vectorStructWant = []struct {
	name        string
	size, align int
	offsets     map[string]int
}{
	{"Fdv", 48, 16, map[string]int{"tag": 0, "fdv.x": 4, "fdv.y": 8, "fdv.z": 12, "v.x": 16, "v.w": 28, "p.x": 32, "p.y": 36}},
	{"Mixed", 48, 16, map[string]int{"s": 0, "h.x": 4, "h.y": 6, "d.x": 16, "d.y": 24, "g.x": 32, "g.z": 40, "c.x": 44, "c.z": 46}},
}

func TestVectorFieldsInStructs(t *testing.T) {
	st := newStructTypes(vectorStructs, typeScope{dtype: "T"})
	for _, c := range vectorStructWant {
		l, found, err := st.layout(c.name, 0)
		if err != nil || !found {
			t.Fatalf("%s: found %v, err %v", c.name, found, err)
		}
		if l.size != c.size || l.align != c.align {
			t.Errorf("%s: size %d align %d, want %d and %d", c.name, l.size, l.align, c.size, c.align)
		}
		for path, off := range c.offsets {
			if lf, ok := l.leaf(path); !ok || lf.offset != off {
				t.Errorf("%s.%s: offset %d (found %v), want %d", c.name, path, lf.offset, ok, off)
			}
		}
	}
}

// The same sizes, alignments and offsets as g++ gives the toolkit's own
// vector_types.h, cuda_fp16.h and cuda_bf16.h, where g++ and the CUDA
// headers ($MLTOP_CUDA_INCLUDE) are found.
func TestVectorLayoutAgainstToolkit(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	inc := os.Getenv("MLTOP_CUDA_INCLUDE")
	if err != nil || inc == "" {
		t.Skip("needs g++ and MLTOP_CUDA_INCLUDE")
	}
	if _, err := os.Stat(filepath.Join(inc, "vector_types.h")); err != nil {
		t.Skip("no vector_types.h under MLTOP_CUDA_INCLUDE")
	}
	var prog, want strings.Builder
	prog.WriteString("#include <vector_types.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <stdio.h>\n#include <stddef.h>\n" + vectorStructs + "int main() {\n")
	emit := func(name string, l structLayout) {
		fmt.Fprintf(&prog, "  printf(\"%s %%zu %%zu\\n\", sizeof(%s), alignof(%s));\n", name, name, name)
		fmt.Fprintf(&want, "%s %d %d\n", name, l.size, l.align)
		for _, lf := range l.leaves {
			fmt.Fprintf(&prog, "  printf(\"%s.%s %%zu\\n\", offsetof(%s, %s));\n", name, lf.path, name, lf.path)
			fmt.Fprintf(&want, "%s.%s %d\n", name, lf.path, lf.offset)
		}
	}
	for _, c := range vectorWant {
		if strings.HasSuffix(c.name, "a") { // _16a, _32a: toolkit 13 only
			continue
		}
		l, _ := vectorLayout(c.name)
		emit(c.name, l)
	}
	for _, fam := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "ulonglong", "float", "double"} {
		for n := 1; n <= 4; n++ {
			l, ok := vectorLayout(fmt.Sprint(fam, n))
			if !ok {
				t.Fatalf("%s%d: not a vector type", fam, n)
			}
			emit(l.name, l)
		}
	}
	st := newStructTypes(vectorStructs, typeScope{dtype: "T"})
	for _, c := range vectorStructWant {
		l, _, _ := st.layout(c.name, 0)
		emit(c.name, l)
	}
	prog.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "vectors.cpp"), filepath.Join(dir, "vectors")
	if err := os.WriteFile(src, []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-std=c++17", "-Wno-invalid-offsetof", "-I", inc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("g++ cannot build against %s: %v\n%s", inc, err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want.String() {
		t.Errorf("g++ with the toolkit's headers lays the vectors out as\n%s\nmltop as\n%s", out, want.String())
	}
}

const vectorKernel = `struct Box { int n; uint3 fdv; float4 v; };
__global__ void vecs(unsigned* q, const uint3 fdv, float4 v, int n) {}
__global__ void boxed(unsigned* q, Box b) {}
__global__ void pair(unsigned* q, __half2 h) {}
typedef uint3 fastdiv_t;
__global__ void named(unsigned* q, fastdiv_t f) {}
`

const vectorManifest = `name: t_vector
sources: {cuda: k.cu}
dims:
  N: {default: 100}
buffers:
  - {name: q, dtype: u32, shape: [N], out: true}
dispatches:
  - {entry: ENTRY, grid: ["cdiv(N, 32)"], threads: [32], args: ARGS}
check: none
`

func vectorFamily(t *testing.T, entry, args string) (*Family, error) {
	t.Helper()
	y := strings.Replace(strings.Replace(vectorManifest, "ENTRY", entry, 1), "ARGS", args, 1)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": vectorKernel}))
}

// A uint3 and a float4 taken by value: each a mapping of x, y, z, w
// (expressions), packed at the toolkit's layout.
func TestVectorArgPacks(t *testing.T) {
	le := binary.LittleEndian
	for _, c := range []struct {
		entry, args string
		check       func(sts []profiler.StructArg) string
	}{
		{"vecs", `[q, {x: 1, y: "N / 4", z: N}, {x: 0.5, y: -2, z: "N * 2", w: 3}, N]`, func(sts []profiler.StructArg) string {
			u, f := sts[0], sts[1]
			if u.Type != "uint3" || len(u.Bytes) != 12 || f.Type != "float4" || len(f.Bytes) != 16 {
				return fmt.Sprintf("structs %s of %d bytes, %s of %d", u.Type, len(u.Bytes), f.Type, len(f.Bytes))
			}
			if x, y, z := le.Uint32(u.Bytes), le.Uint32(u.Bytes[4:]), le.Uint32(u.Bytes[8:]); x != 1 || y != 25 || z != 100 {
				return fmt.Sprintf("uint3 %d %d %d", x, y, z)
			}
			var v [4]float32
			for i := range v {
				v[i] = math.Float32frombits(le.Uint32(f.Bytes[4*i:]))
			}
			if v != [4]float32{0.5, -2, 200, 3} {
				return fmt.Sprintf("float4 %v", v)
			}
			return ""
		}},
		{"boxed", `[q, {n: 7, fdv.x: 5, fdv: {y: 6}, v: {w: 1.5}}]`, func(sts []profiler.StructArg) string {
			b := sts[0].Bytes // n 0, fdv 4..16, v 16..32
			if len(b) != 32 || le.Uint32(b) != 7 || le.Uint32(b[4:]) != 5 || le.Uint32(b[8:]) != 6 || le.Uint32(b[12:]) != 0 || math.Float32frombits(le.Uint32(b[28:])) != 1.5 {
				return fmt.Sprintf("Box % x", b)
			}
			return ""
		}},
		{"pair", `[q, {x: 1, y: -2}]`, func(sts []profiler.StructArg) string {
			if b := sts[0].Bytes; !slices.Equal(b, []byte{0x00, 0x3c, 0x00, 0xc0}) {
				return fmt.Sprintf("__half2 % x", b)
			}
			return ""
		}},
		{"named", `[q, {x: 1, z: 3}]`, func(sts []profiler.StructArg) string {
			if b := sts[0].Bytes; len(b) != 12 || le.Uint32(b) != 1 || le.Uint32(b[8:]) != 3 {
				return fmt.Sprintf("fastdiv_t % x", b)
			}
			return ""
		}},
	} {
		f, err := vectorFamily(t, c.entry, c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		if msg := c.check(p.Dispatches[0].Structs); msg != "" {
			t.Errorf("%s %s: %s", c.entry, c.args, msg)
		}
	}
}

// Broken variants: a field the vector lacks (named, with the type's
// fields), a scalar for a vector, a vector value out of its field's range.
func TestVectorArgErrors(t *testing.T) {
	for _, c := range []struct{ entry, args, want string }{
		{"vecs", `[q, {x: 1, w: 2}, {x: 0}, N]`, "dispatches[0].args[1].w: struct uint3 (parameter `uint3 fdv` of "},
		{"vecs", `[q, {x: 1, w: 2}, {x: 0}, N]`, "k.cu:2) has no field w: its fields are x, y, z"},
		{"vecs", `[q, {x: 1}, {r: 0}, N]`, "k.cu:2) has no field r: its fields are x, y, z, w"},
		{"vecs", `[q, 3, {x: 0}, N]`, "k.cu:2, a struct taken by value: give a mapping of its fields, as {x: …, y: …, z: …} (fields: x, y, z)"},
		{"vecs", `[q, [1, 0, 1], {x: 0}, N]`, "goes to parameter `uint3 fdv` of "},
		{"vecs", `[q, {x: -1}, {x: 0}, N]`, "-1 = -1 goes to field `unsigned int x` of struct uint3"},
		{"vecs", `[q, {x: q}, {x: 0}, N]`, "buffer q goes to field `unsigned int x` of struct uint3, a scalar"},
		{"boxed", `[q, {fdv.w: 1}]`, "has no field fdv.w: its fields are n, fdv.x, fdv.y, fdv.z, v.x, v.y, v.z, v.w"},
		{"pair", `[q, {x: 70000}]`, "70000 = 70000 goes to field `__half x` of struct __half2"},
	} {
		_, err := vectorFamily(t, c.entry, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v\nwant it to say %q", c.entry, c.args, err, c.want)
		}
	}
}
