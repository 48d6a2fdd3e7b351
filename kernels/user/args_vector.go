package user

import (
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// This file lays out CUDA's built-in vector types (vector_types.h:
// uint3, float4, int2, …, dim3; cuda_fp16.h's __half2 and cuda_bf16.h's
// __nv_bfloat162), which a kernel may take by value (ggml-cuda passes its
// fast-division constants as `const uint3`) or hold as a struct field.
// They are given like a struct: a mapping of x, y, z, w.

// vectorElems are the element types of the toolkit's vector families,
// by the family's name (the vector is the name plus 1, 2, 3 or 4).
var vectorElems = map[string]profiler.ScalarKind{
	"char": profiler.ScalarI8, "uchar": profiler.ScalarU8,
	"short": profiler.ScalarI16, "ushort": profiler.ScalarU16,
	"int": profiler.ScalarI32, "uint": profiler.ScalarU32,
	"long": profiler.ScalarI64, "ulong": profiler.ScalarU64, // long is 8 bytes on Linux (LP64)
	"longlong": profiler.ScalarI64, "ulonglong": profiler.ScalarU64,
	"float": profiler.ScalarF32, "double": profiler.ScalarF64,
}

// vectorFields are a vector's fields in order.
var vectorFields = [4]string{"x", "y", "z", "w"}

// vectorLayout lays out a CUDA built-in vector type; ok is false for any
// other name. The alignment is vector_types.h's: a 1- or 3-element vector
// aligns as its element (uint3: 12 bytes, align 4); a 2- or 4-element one
// as its whole size, at most 16 (int2: 8, float4: 16, double2: 16,
// char4: 4, longlong4: 32 bytes aligned 16). That is the classic
// alignment; toolkit 13 deprecates long4, ulong4, longlong4, ulonglong4
// and double4 in favour of explicit _16a (aligned 16) and _32a (aligned
// 32) variants, which are laid out with the alignment their name says.
func vectorLayout(name string) (structLayout, bool) {
	switch name {
	case "dim3":
		return vectorOf(name, profiler.ScalarU32, 3, 4), true
	case "__half2", "half2":
		return vectorOf(name, profiler.ScalarF16, 2, 4), true
	case "__nv_bfloat162", "nv_bfloat162":
		return vectorOf(name, profiler.ScalarBF16, 2, 4), true
	}
	base, forced := name, 0
	if b, ok := strings.CutSuffix(name, "_16a"); ok {
		base, forced = b, 16
	} else if b, ok := strings.CutSuffix(name, "_32a"); ok {
		base, forced = b, 32
	}
	if len(base) < 2 {
		return structLayout{}, false
	}
	n, err := strconv.Atoi(base[len(base)-1:])
	kind, ok := vectorElems[base[:len(base)-1]]
	if err != nil || !ok || n < 1 || n > 4 {
		return structLayout{}, false
	}
	es := profiler.Scalar{Kind: kind}.Size()
	if forced != 0 && (n != 4 || es != 8) {
		return structLayout{}, false // only the 4-element 8-byte vectors have _16a/_32a forms
	}
	align := es
	if n == 2 || n == 4 {
		align = min(n*es, 16)
	}
	if forced != 0 {
		align = forced
	}
	return vectorOf(name, kind, n, align), true
}

func vectorOf(name string, kind profiler.ScalarKind, n, align int) structLayout {
	es := profiler.Scalar{Kind: kind}.Size()
	l := structLayout{name: name, align: align, dataEnd: n * es, size: alignUp(n*es, align)}
	decl := cTypeOf(kind)
	for i := range n {
		f := vectorFields[i]
		l.leaves = append(l.leaves, structLeaf{path: f, decl: decl + " " + f, kind: kind, offset: i * es, count: 1, size: es})
	}
	return l
}

// cTypeOf names a scalar kind's C type as vector_types.h declares a
// vector's fields.
func cTypeOf(k profiler.ScalarKind) string {
	return map[profiler.ScalarKind]string{
		profiler.ScalarI8: "signed char", profiler.ScalarU8: "unsigned char",
		profiler.ScalarI16: "short", profiler.ScalarU16: "unsigned short",
		profiler.ScalarI32: "int", profiler.ScalarU32: "unsigned int",
		profiler.ScalarI64: "long long", profiler.ScalarU64: "unsigned long long",
		profiler.ScalarF32: "float", profiler.ScalarF64: "double",
		profiler.ScalarF16: "__half", profiler.ScalarBF16: "__nv_bfloat16",
	}[k]
}
