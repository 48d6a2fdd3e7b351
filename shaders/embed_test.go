package shaders

import (
	"strings"
	"testing"
)

func TestSourceFindsFamilyFolders(t *testing.T) {
	for _, c := range []struct{ backend, name, ext, path string }{
		{"cuda", "attn_fwd", ".cu", "attn_fwd/attn_fwd.cu"},
		{"metal", "attn_bwd_dq", ".metal", "attn_bwd/attn_bwd_dq.metal"},
		{"cuda", "calibrate", ".cu", "calibrate/calibrate.cu"},
	} {
		p, err := Path(c.name, c.ext)
		if err != nil || p != c.path {
			t.Errorf("Path(%s%s) = %q, %v; want %s", c.name, c.ext, p, err, c.path)
		}
		src, err := Source(c.backend, c.name, c.ext)
		if err != nil || !strings.Contains(src, c.name) {
			t.Errorf("Source(%s, %s%s): %d bytes, %v", c.backend, c.name, c.ext, len(src), err)
		}
	}
	if _, err := Source("metal", "no_such_kernel", ".metal"); err == nil || !strings.Contains(err.Error(), "no_such_kernel.metal") {
		t.Errorf("missing source: error %v, want one naming no_such_kernel.metal", err)
	}
}

func TestFileNamesAreUnique(t *testing.T) {
	indexOnce.Do(buildIndex)
	for n, ps := range index {
		if len(ps) > 1 {
			t.Errorf("%s is in %v: Source finds sources by file name, which must be unique", n, ps)
		}
	}
}

func TestHeaders(t *testing.T) {
	for backend, want := range map[string]string{"cuda": "mltop_common.cuh", "metal": "mltop_common.h"} {
		h, err := Headers(backend)
		if err != nil || len(h) != 1 || h[want] == "" {
			t.Errorf("Headers(%s) = %d headers (%v), want just %s", backend, len(h), err, want)
		}
	}
	if _, err := Headers("vulkan"); err == nil || !strings.Contains(err.Error(), `"vulkan"`) {
		t.Errorf("Headers(vulkan): %v, want an error naming it", err)
	}
	if l := List("cuda", ".cu"); len(l) < 12 || l[0] > l[len(l)-1] {
		t.Errorf("List(cuda, .cu) = %v", l)
	}
}
