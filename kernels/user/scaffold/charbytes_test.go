package scaffold

import "testing"

// A plain char* views bytes (MLX's rbitsc writes random bits through
// device char*): a u8 buffer with dtypes fixed, not the dtype T at f32,
// f16, bf16; signed char and uchar keep their own types. A char* the body
// reads through a cast (ggml's `(device const float *) ((device const
// char *) src0 + i * nb01)`, `(device int32_t *) dst`) holds that type.
func TestScaffoldCharPointerIsBytes(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
kernel void bits(device const uint32_t* keys [[buffer(0)]], device char* out [[buffer(1)]],
                 device uchar* flags [[buffer(2)]], constant const ulong& nb [[buffer(3)]],
                 uint2 index [[thread_position_in_grid]]) {
  out[index.x * nb] = char(keys[index.x]);
  flags[index.x] = 1;
}
`
	res, err := Manifest(Request{Name: "bits", SrcPath: "/w/bits.metal", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"{name: out, dtype: u8,", "{name: flags, dtype: u8,", "dtypes: [f32]   # the buffers' types are fixed in the source"},
		[]string{"dtype: T", "f16, bf16"})
	load(t, res.Text, "bits.metal", src)
}

func TestScaffoldCharPointerCast(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
kernel void amax(device const char * src0 [[buffer(0)]], device char * dst [[buffer(1)]], device char * raw [[buffer(2)]],
                 constant ulong& nb01 [[buffer(3)]], uint tgpig [[threadgroup_position_in_grid]]) {
    device const float * x_row = (device const float *) ((device const char *) src0 + tgpig * nb01);
    device int32_t * dst_i32 = (device int32_t *) dst;
    dst_i32[tgpig] = int(x_row[0]);
    raw[tgpig] = 1;
}
`
	res, err := Manifest(Request{Name: "amax", SrcPath: "/w/amax.metal", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"{name: src0, dtype: f32,", "{name: dst, dtype: i32,", "{name: raw, dtype: u8,"}, []string{"dtype: T"})
	load(t, res.Text, "amax.metal", src)
}
