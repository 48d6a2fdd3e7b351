package scaffold

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/usertest"
)

// checkCompiles loads the manifest beside its source and runs the whole
// `mltop check` on it (every dtype compiled): no errors. When the
// compiler is here (g++ for Metal's emulation, MLTOP_NVRTC for CUDA) the
// compile step must have run.
func checkCompiles(t *testing.T, text, file, src string) {
	t.Helper()
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, file: src})
	if _, err := user.Load(path); err != nil {
		t.Fatalf("the scaffold does not load: %v\n%s", err, text)
	}
	rep := lint.Check(path, lint.Options{Python: "none-needed"})
	compiled := false
	for _, m := range rep.Manifests {
		for _, fd := range m.Findings {
			if fd.Level == lint.Error {
				t.Errorf("mltop check: %s\n%s", fd.Msg, text)
			}
			compiled = compiled || strings.Contains(fd.Msg, " compiles ")
		}
	}
	_, gxxErr := exec.LookPath("g++")
	compilerHere := strings.HasSuffix(file, ".metal") && gxxErr == nil || strings.HasSuffix(file, ".cu") && os.Getenv("MLTOP_NVRTC") != ""
	if compilerHere && !compiled {
		t.Errorf("mltop check compiled nothing: %+v", rep.Manifests)
	}
}

// exp_xform's float4 and float4x4 buffers, as a user wrote it.
const xformMetal = `#include <metal_stdlib>
using namespace metal;

kernel void exp_xform(device const float4* x  [[buffer(0)]],
                      device const float4x4* m [[buffer(1)]],
                      device float4* y         [[buffer(2)]],
                      constant uint& n4        [[buffer(3)]],
                      uint3 gid [[thread_position_in_grid]]) {
    uint i = gid.x;
    if (i >= n4) return;
    float4 v = exp(x[i]);
    float4x4 M = m[0];
    y[i] = M * v;
}
`

// 3-lane vectors and matrices (Metal gives a 3-lane column 4 lanes'
// room), integer and byte vectors.
const mixedVectorsMetal = `#include <metal_stdlib>
using namespace metal;

kernel void rotate(device const half3* a [[buffer(0)]], device const half3x3* r [[buffer(1)]],
                   device int4* o [[buffer(2)]], device const uchar4* px [[buffer(3)]],
                   constant uint& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    if (i >= n) return;
    half3 v = r[0] * a[i];
    o[i] = int4(int(v.x), int(v.y), int(v.z), int(px[i].w));
}
`

// CUDA vectors: a float3 is 3 lanes there; the template's T stays the
// dtype.
const vectorsCUDA = `#include <cuda_fp16.h>
template <typename T>
__global__ void gather4(float4* out, const float3* p, const __half2* h, const T* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 f = __half22float2(h[i]);
    float s = (float)w[i];
    out[i] = make_float4(p[i].x * s, p[i].y * s, p[i].z, f.x + f.y);
}
`

// Marlin's way: halves loaded 8 at a time through const int4*.
const wordsCUDA = `#include <cuda_fp16.h>
__global__ void copy_words(const int4* __restrict__ a, int4* __restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}
`

// mini-nbody's way: an array of structs of one scalar type, updated in
// place; a struct of mixed fields stays the dtype's (a TODO as before).
const structsCUDA = `typedef struct { float x, y, z, vx, vy, vz; } Particle;
struct Mixed { int id; float w; };
__global__ void kick(Particle* p, const Mixed* m, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { p[i].vx += dt * p[i].x * m[i].w; }
}
`

// A vector or matrix pointee is never the element type's name: its
// scalar is the buffer's dtype and its lanes the last extents; the
// manifest loads and passes mltop check.
func TestScaffoldVectorPointees(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		want, not       []string
	}{
		{name: "float4 and float4x4 (exp_xform)", file: "xform.metal", src: xformMetal,
			want: []string{
				"dtypes: [f32]   # the buffers' types are fixed in the source",
				`{name: x, dtype: f32, shape: [n4, 4], init: "normal(0, 1)"}   # float4 has 4 lanes, last in the shape; TODO`,
				`{name: m, dtype: f32, shape: [n4, 4, 4], init: "normal(0, 1)"}   # float4x4 is 4 columns of 4 lanes, last in the shape; TODO`,
				"{name: y, dtype: f32, shape: [n4, 4], out: true}",
				"args: [x, m, y, n4]",
			},
			not: []string{"dtype_name", "float4x4,", "dtype: float4"}},
		{name: "half3, half3x3, int4, uchar4 on Metal", file: "rot.metal", src: mixedVectorsMetal,
			want: []string{
				"dtypes: [f16]   # the buffers' types are fixed in the source", // half in, int out: the kernel is in f16
				"{name: a, dtype: f16, shape: [n, 4],", "half3 has 3 lanes in 4 lanes' room",
				"{name: r, dtype: f16, shape: [n, 3, 4],", "half3x3 is 3 columns of 3 lanes (each in 4 lanes' room)",
				"{name: o, dtype: i32, shape: [n, 4], out: true}",
				`{name: px, dtype: u8, shape: [n, 4], init: "randint(0, 256)"}`,
			},
			not: []string{"dtype_name"}},
		{name: "float4, float3, __half2 and T on CUDA", file: "g.cu", src: vectorsCUDA,
			want: []string{
				"dtypes: [f32, f16, bf16]", `entry: "gather4<T>"`,
				"{name: out, dtype: f32, shape: [n, 4], out: true}",
				"{name: p, dtype: f32, shape: [n, 3],", "float3 has 3 lanes, last",
				"{name: h, dtype: f16, shape: [n, 2],",
				"{name: w, dtype: T, shape: [n],",
			},
			not: []string{"dtype_name", "4 lanes' room"}},
		{name: "a struct of 6 floats on CUDA (mini-nbody's Body)", file: "p.cu", src: structsCUDA,
			want: []string{
				"{name: p, dtype: f32, shape: [n, 6],", "Particle is 6 floats (x, y, z, vx, vy, vz), last in the shape",
				"{name: m, dtype: T, shape: [n],",
			},
			not: []string{"Mixed is"}},
		{name: "int4 words on CUDA (Marlin)", file: "w.cu", src: wordsCUDA,
			want: []string{
				"{name: a, dtype: i32, shape: [n, 4],",
				"int4 has 4 lanes (any dtype fits too, read as whole words: e.g. f16 [rows, cols] for halves the kernel loads 8 at a time), last in the shape",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "vec", SrcPath: tc.file, Src: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, tc.want, tc.not)
			checkNotesHaveTODOs(t, res)
			checkCompiles(t, res.Text, tc.file, tc.src)
		})
	}
}

func TestVectorType(t *testing.T) {
	for _, tc := range []struct {
		name, lang, scalar string
		extents            []string // nil: not a vector type
	}{
		{"float4", "metal", "float", []string{"4"}},
		{"float3", "metal", "float", []string{"4"}},
		{"float3", "cuda", "float", []string{"3"}},
		{"half2", "metal", "half", []string{"2"}},
		{"__half2", "cuda", "__half", []string{"2"}},
		{"__nv_bfloat162", "cuda", "__nv_bfloat16", []string{"2"}},
		{"char4", "cuda", "signed char", []string{"4"}},
		{"ulong2", "metal", "unsigned long", []string{"2"}},
		{"float4x4", "metal", "float", []string{"4", "4"}},
		{"float2x3", "metal", "float", []string{"2", "4"}},
		{"bfloat3x2", "metal", "bfloat", []string{"3", "2"}},
		{"float4x4", "cuda", "", nil}, // no CUDA type: a struct of the source's
		{"float", "metal", "", nil},
		{"float5", "metal", "", nil},
		{"float1", "cuda", "", nil},
		{"myfloat4", "cuda", "", nil},
		{"float4x", "metal", "", nil},
	} {
		v, ok := vectorType(tc.name, tc.lang)
		if ok != (tc.extents != nil) || ok && (v.scalar != tc.scalar || strings.Join(v.extents, ",") != strings.Join(tc.extents, ",")) {
			t.Errorf("vectorType(%q, %s) = %+v, %v; want %s %v", tc.name, tc.lang, v, ok, tc.scalar, tc.extents)
		}
	}
}
