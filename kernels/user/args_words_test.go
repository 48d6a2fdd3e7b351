package user

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// wordsSource copies halves 16 bytes at a time through int4 pointers, as
// Marlin's `const int4* A` and `int4* C` carry fp16 matrices: the integer
// vector type is the width of a load, not the data's type.
const wordsSource = `#include <cuda_fp16.h>
__global__ void copy16(const WORD* __restrict__ a, WORD* __restrict__ c, int n16) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n16) c[i] = a[i];
}
`

const wordsYAML = `name: t_words
sources: {cuda: w.cu}
dtypes: [f16]
dims: {N: {default: 1024}}
buffers:
  - {name: a, dtype: DT, shape: [N], init: "uniform(0, 4)"}
  - {name: c, dtype: DT, shape: [N], out: true}
dispatches:
  - entry: copy16
    grid: ["cdiv(N, 64)"]
    threads: [64]
    args: [a, c, "N / 16"]
check: none
`

// A pointer to one of CUDA's 8- or 16-byte integer vectors (int2, int4,
// uint2, uint4) takes a buffer of any dtype, as a char* does: kernels read
// halves, floats or packed codes through them as whole words. A float4 or
// __half2 pointer still needs its own element type.
func TestIntegerWordPointersTakeAnyBuffer(t *testing.T) {
	for _, c := range []struct{ word, dtype, want string }{
		{"int4", "f16", ""},
		{"uint4", "bf16", ""},
		{"int2", "f32", ""},
		{"uint2", "u8", ""},
		{"int4", "i32", ""},
		{"float4", "f16", "buffer a holds f16 but parameter `const float4* a` points to f32"},
		{"__half2", "f32", "buffer a holds f32 but parameter `const __half2* a` points to f16"},
		{"int", "f16", "buffer a holds f16 but parameter `const int* a` points to i32"},
	} {
		t.Run(fmt.Sprintf("%s* given %s", c.word, c.dtype), func(t *testing.T) {
			src := strings.ReplaceAll(wordsSource, "WORD", c.word)
			y := strings.ReplaceAll(wordsYAML, "DT", c.dtype)
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "w.cu": src}))
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema())
			_, err = f.Plan(s, cudaDev)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}
