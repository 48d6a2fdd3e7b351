package scaffold

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A kernel whose buffers' types are fixed in the source is labelled with
// their float type (half: f16, bfloat: bf16), on Metal as on CUDA; where
// they mix, with the type of the data it reads (the narrowest of the
// inputs' types), and a TODO says so. The manifests load and plan.
func TestFixedBufferTypesGiveTheDType(t *testing.T) {
	metal := func(params string) string {
		return "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(" + params +
			", constant uint& n [[buffer(5)]], uint i [[thread_position_in_grid]]) {\n    if (i < n) y[i] = x[i];\n}\n"
	}
	cuda := func(params string) string {
		return "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n__global__ void k(" + params + ", int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i];\n}\n"
	}
	for _, c := range []struct {
		name, file, src string
		want            string // the dtypes line
		todo            string // in the TODO of a mix; "" for none
	}{
		{"metal half", "k.metal", metal("device const half* x [[buffer(0)]], device half* y [[buffer(1)]]"), "dtypes: [f16]   # the buffers' types are fixed in the source", ""},
		{"metal bfloat", "k.metal", metal("const device bfloat* x [[buffer(0)]], device bfloat* y [[buffer(1)]]"), "dtypes: [bf16]", ""},
		{"metal half4", "k.metal", metal("device const half4* x [[buffer(0)]], device half4* y [[buffer(1)]]"), "dtypes: [f16]", ""},
		{"metal float", "k.metal", metal("device const float* x [[buffer(0)]], device float* y [[buffer(1)]]"), "dtypes: [f32]   # the buffers' types are fixed in the source", ""},
		{"metal half in, float out", "k.metal", metal("device const half* x [[buffer(0)]], device float* y [[buffer(1)]]"), "dtypes: [f16]",
			"TODO: the buffers mix f16 (x) and f32 (y): dtypes lists f16, the type of the data it reads"},
		{"metal half and a float scale in, float out", "k.metal", metal("device const float* s [[buffer(2)]], device const half* x [[buffer(0)]], device float* y [[buffer(1)]]"), "dtypes: [f16]",
			"the type of the narrowest of the data it reads"},
		{"metal float in, half out", "k.metal", metal("device const float* x [[buffer(0)]], device half* y [[buffer(1)]]"), "dtypes: [f32]", "mix f32 (x) and f16 (y)"},
		{"metal indices in, half out", "k.metal", metal("device const int* x [[buffer(0)]], device half* y [[buffer(1)]]"), "dtypes: [f16]", ""},
		{"cuda __half", "k.cu", cuda("const __half* x, __half* y"), "dtypes: [f16]   # the buffers' types are fixed in the source", ""},
		{"cuda __nv_bfloat16", "k.cu", cuda("const __nv_bfloat16* x, __nv_bfloat16* y"), "dtypes: [bf16]", ""},
		{"cuda bf16 in, float out", "k.cu", cuda("const __nv_bfloat16* x, float* y"), "dtypes: [bf16]", "the buffers mix bf16 (x) and f32 (y)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/" + c.file, Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{c.want}
			var not []string
			if c.todo != "" {
				want = append(want, c.todo)
			} else {
				not = append(not, "the buffers mix")
			}
			manifestSays(t, res.Text, want, not)
			checkNotesHaveTODOs(t, res)
			f := load(t, res.Text, c.file, c.src)
			dev := cudaDevice
			if c.file == "k.metal" {
				dev.Backend = "metal"
			}
			if _, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), dev); err != nil {
				t.Fatalf("plan: %v\n%s", err, res.Text)
			}
			if strings.Count(res.Text, "dtypes:") != 1 {
				t.Errorf("dtypes written %d times", strings.Count(res.Text, "dtypes:"))
			}
		})
	}
}
