package metal

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/mltop/mltop/profiler"
)

func TestStructLayouts(t *testing.T) {
	// MTLSize is three NSUIntegers, NSRange two; both must match the C
	// layout byte for byte because purego copies them as they are.
	if s := unsafe.Sizeof(MTLSize{}); s != 24 {
		t.Errorf("MTLSize is %d bytes, want 24", s)
	}
	if o := unsafe.Offsetof(MTLSize{}.Depth); o != 16 {
		t.Errorf("MTLSize.Depth at %d, want 16", o)
	}
	if s := unsafe.Sizeof(NSRange{}); s != 16 {
		t.Errorf("NSRange is %d bytes, want 16", s)
	}
	if a := unsafe.Alignof(MTLSize{}); a != 8 {
		t.Errorf("MTLSize alignment %d, want 8", a)
	}
}

func TestMacroPairs(t *testing.T) {
	got, err := MacroPairs([]profiler.Macro{{Name: "BQ", Value: "32"}, {Name: "BK", Value: "16"}, {Name: "DTYPE", Value: "2"}, {Name: "CAUSAL", Value: "0"}, {Name: "EMPTY", Value: ""}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"BQ", "32"}, {"BK", "16"}, {"DTYPE", "2"}, {"CAUSAL", "0"}, {"EMPTY", ""}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d = %v, want %v", i, got[i], want[i])
		}
	}
	bad := []struct {
		ms   []profiler.Macro
		want string
	}{
		{[]profiler.Macro{{Name: "1BQ", Value: "2"}}, "not a C identifier"},
		{[]profiler.Macro{{Name: "B Q", Value: "2"}}, "not a C identifier"},
		{[]profiler.Macro{{Name: "", Value: "2"}}, "not a C identifier"},
		{[]profiler.Macro{{Name: "BQ", Value: "2"}, {Name: "BQ", Value: "4"}}, "defined twice"},
	}
	for _, c := range bad {
		if _, err := MacroPairs(c.ms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MacroPairs(%v) = %v, want %q", c.ms, err, c.want)
		}
	}
}

func TestPackScalars(t *testing.T) {
	// attn_fwd's scalars: B, H, Hkv, Lq, Lk, scale.
	ss := []profiler.Scalar{
		profiler.I32Param("B", 2), profiler.I32Param("H", 8), profiler.I32Param("Hkv", 2),
		profiler.I32Param("Lq", 256), profiler.I32Param("Lk", -1), profiler.F32Param("scale", 0.125),
	}
	got, err := PackScalars(ss)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		2, 0, 0, 0,
		8, 0, 0, 0,
		2, 0, 0, 0,
		0, 1, 0, 0,
		0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0x3e, // 0.125f = 0x3e000000
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("packed % x\nwant   % x", got, want)
	}
	if b, _ := PackScalars([]profiler.Scalar{profiler.F32Param("x", 1.0/3)}); math.Float32frombits(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24) != float32(1.0/3) {
		t.Errorf("1/3 packed as % x", b)
	}
	if b, err := PackScalars(nil); err != nil || len(b) != 0 {
		t.Errorf("no scalars: %v %v", b, err)
	}
	if _, err := PackScalars([]profiler.Scalar{profiler.I32Param("rows", 1<<31)}); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("overflow: %v", err)
	}
	if _, err := PackScalars([]profiler.Scalar{{Name: "x", Kind: "f64"}}); err == nil {
		t.Error("f64 accepted")
	}
}

func TestLanguageVersion(t *testing.T) {
	// MTLLanguageVersion3_0 = (3 << 16) + 0, 3_1 = 196609.
	if v := LanguageVersion(3, 1); v != 196609 {
		t.Errorf("3.1 = %d", v)
	}
	if v := LanguageVersion(2, 4); v != 131076 {
		t.Errorf("2.4 = %d", v)
	}
}

func TestAssembleSourceAndCacheKey(t *testing.T) {
	hdr := "#pragma once\n#include <metal_stdlib>\n"
	k := "#include \"mltop_common.h\"\nkernel void f() {}\n"
	src := AssembleSource(hdr, k)
	if strings.Count(src, "#include \"mltop_common.h\"") != 1 || !strings.Contains(src, "// #include \"mltop_common.h\"") {
		t.Fatalf("include not commented out:\n%s", src)
	}
	if strings.Index(src, "#pragma once") > strings.Index(src, "kernel void f") {
		t.Fatal("header is not in front of the kernel")
	}
	a := CacheKey(src, "f", CompileOptions{Macros: [][2]string{{"A", "1"}, {"B", "2"}}})
	b := CacheKey(src, "f", CompileOptions{Macros: [][2]string{{"B", "2"}, {"A", "1"}}})
	c := CacheKey(src, "f", CompileOptions{Macros: [][2]string{{"A", "1"}, {"B", "3"}}})
	d := CacheKey(src+" ", "f", CompileOptions{Macros: [][2]string{{"A", "1"}, {"B", "2"}}})
	e := CacheKey(src, "g", CompileOptions{Macros: [][2]string{{"A", "1"}, {"B", "2"}}})
	if a != b {
		t.Error("macro order changes the key")
	}
	if a == c || a == d || a == e {
		t.Error("different programs share a key")
	}
}

// A struct of mixed field widths (as ggml's kernel args) is laid out as C
// does: each field at a multiple of its size, the size a multiple of the
// widest field.
func TestPackScalarsAlignsMixedFields(t *testing.T) {
	ss := []profiler.Scalar{
		{Name: "n", Kind: profiler.ScalarI32, I: 3},
		{Name: "stride", Kind: profiler.ScalarU64, I: 1 << 33},
		{Name: "flag", Kind: profiler.ScalarBool, I: 1},
		{Name: "h", Kind: profiler.ScalarI16, I: -2},
		{Name: "eps", Kind: profiler.ScalarF32, F: 0.125},
	}
	got, err := PackScalars(ss)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		3, 0, 0, 0, 0, 0, 0, 0, // n, then 4 bytes of padding before the u64
		0, 0, 0, 0, 2, 0, 0, 0, // stride = 2^33
		1, 0, 0xfe, 0xff, // flag, a pad byte, h = -2
		0, 0, 0, 0x3e, // eps
		// size 24 is a multiple of 8: no tail padding
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("packed % x\nwant   % x", got, want)
	}
	tail, err := PackScalars([]profiler.Scalar{{Name: "s", Kind: profiler.ScalarU64, I: 1}, {Name: "k", Kind: profiler.ScalarI32, I: 1}})
	if err != nil || len(tail) != 16 {
		t.Errorf("u64 then i32: %d bytes (%v), want 16 (padded to 8)", len(tail), err)
	}
}
