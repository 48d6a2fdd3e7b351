package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestStorageHint(t *testing.T) {
	prelude := "#if !defined(__CUDA_BF16_H__)\n" + StorageOnlyStruct("__nv_bfloat16") + "\n#endif\n" +
		"#if !defined(__CUDA_FP16_H__)\n" + StorageOnlyStruct("__half") + "\n#endif\n"
	conv := `k.cu:43: error: no suitable conversion function from "const floatX" to "float" exists`
	cases := []struct {
		name, src, log string
		want           []string // "" entries: no hint
	}{
		{"bf16 typedef, NVRTC names only the alias", prelude + "typedef __nv_bfloat16 floatX;\n__global__ void k(floatX* x) { float f = x[0]; }", conv,
			[]string{"so __nv_bfloat16 is mltop's storage-only struct", IncludeEnv, "cuda_bf16.h"}},
		{"half named in the log only", prelude + "__global__ void k(T* x) {}", `k.cu:3: error: identifier "__half2" is undefined`,
			[]string{"so __half is", "cuda_fp16.h"}},
		{"both", prelude + "__global__ void k(__half* a, nv_bfloat16* b) {}", conv,
			[]string{"__half and __nv_bfloat16", "cuda_fp16.h and cuda_bf16.h"}},
		{"the types unused: no hint", prelude + "__global__ void k(float* x) { x[0] = y; }", `k.cu:1: error: identifier "y" is undefined`, nil},
		{"the toolkit's headers were found: no hint", "#include <cuda_bf16.h>\n__global__ void k(__nv_bfloat16* x) {}", conv, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := withStorageHint(errors.New("NVRTC could not compile k.cu"), c.src, c.log)
			msg := err.Error()
			if c.want == nil {
				if strings.Contains(msg, "hint") {
					t.Errorf("unexpected hint: %s", msg)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
	if withStorageHint(nil, prelude+"__half h;", "") != nil {
		t.Error("a compile that succeeded got an error")
	}
}
