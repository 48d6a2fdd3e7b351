package mslemu

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/shaders"
)

func TestCallForDerivesTheCallFromTheSignature(t *testing.T) {
	src, err := shaders.Source("metal", "softmax_bwd", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	got, err := CallFor(src, "softmax_bwd")
	want := `softmax_bwd((const mltop_t*)b[0].data(), (const mltop_t*)b[1].data(), (mltop_t*)b[2].data(), *(SoftmaxBwdParams*)sc.data(), tg.x, tid, sg, lane);`
	if err != nil || got != want {
		t.Errorf("CallFor(softmax_bwd) = %q, %v\nwant %q", got, err, want)
	}
	src, _ = shaders.Source("metal", "attn_bwd_delta", ".metal")
	got, err = CallFor(src, "attn_bwd_delta")
	want = `attn_bwd_delta((const mltop_t*)b[0].data(), (const mltop_t*)b[1].data(), (float*)b[2].data(), *(BwdParams*)sc.data(), tg, sg, lane);`
	if err != nil || got != want {
		t.Errorf("CallFor(attn_bwd_delta) = %q, %v\nwant %q", got, err, want)
	}
	bad := map[string]string{
		"no such entry":     "[[kernel]] void other(device float* x [[buffer(0)]]) {}",
		"unknown attribute": "[[kernel]] void k(device float* x [[buffer(0)]], uint q [[quad_index]]) {}",
		"unbound parameter": "[[kernel]] void k(device float* x) {}",
	}
	for name, src := range bad {
		if _, err := CallFor(src, "k"); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "k") {
			t.Errorf("%s: error %q does not name the kernel", name, err)
		}
	}
}
