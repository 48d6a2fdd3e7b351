package cli

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// A --dry-run away from the backend's GPU holds each spec against the
// limits every GPU of the backend shares (1024 threads per group; CUDA's
// 48 KiB of static shared memory per block; Metal's 32 KiB of threadgroup
// memory): a spec over them counts as invalid, with the reason, and a
// sweep of only such specs exits 2. Dynamic shared memory over 48 KiB
// stays runnable on CUDA (mltop opts in at launch).
func TestDryRunHoldsSpecsAgainstSharedLimits(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Metal may be here")
	}
	if _, err := countDevices("cuda"); err == nil {
		t.Skip("CUDA is here: the dry run counts on the device")
	}
	const metalSrc = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& rows [[buffer(2)]], constant int& cols [[buffer(3)]], uint i [[thread_position_in_grid]]) {}\n"
	for _, c := range []struct {
		name, backend, dispatchExtra, wg string
		code                             int
		want                             []string
	}{
		{"threads over 1024 among others", "cuda", "", "[64, 2048]", exitOK,
			[]string{"1 spec to run from", "and 1 invalid", "mltop: --dry-run: 1 spec of ", " would be invalid rows, by reason (",
				"\n  1 × dispatch k: 2048 threads per group (threads [2048 1 1]); no CUDA GPU runs more than 1024: lower the threads\n      test_dry_shared_threads_over_1024_among_others f32 WG=2048 | "}},
		{"threads over 1024 alone", "cuda", "", "2048", exitBadInput,
			[]string{"nothing would run", "dispatch k: 2048 threads per group (threads [2048 1 1]); no CUDA GPU runs more than 1024"}},
		{"static shared over 48 KiB", "cuda", `, tgm: [{name: buf, bytes: "WG * 1000"}]`, "64", exitBadInput,
			[]string{"dispatch k: 64000 B of static shared memory per block (buf 64000 B); no CUDA GPU gives static arrays more than 49152 B (48 KiB)"}},
		{"dynamic shared over 48 KiB", "cuda", `, dynamic_tgm: "WG * 1000"`, "64", exitOK,
			[]string{"1 spec to run from"}},
		{"metal threadgroup memory over 32 KiB", "metal", `, dynamic_tgm: "WG * 1000"`, "64", exitBadInput,
			[]string{"specs are held against the limits every Apple GPU shares (1024 threads per group, 32 KiB of threadgroup memory)",
				"dispatch k: 64000 B of threadgroup memory per group (dynamic 64000 B); no Apple GPU gives a group more than 32768 B (32 KiB)"}},
		{"metal within", "metal", `, dynamic_tgm: "WG * 100"`, "64", exitOK, []string{"1 spec to run from"}},
		// A manifest without the backend's source: every GPU of it refuses.
		{"metal source only on cuda", "cuda-metal-only", "", "64", exitBadInput,
			[]string{"and 1 invalid", "the one spec of ", "  1 × test_dry_shared_metal_source_only_on_cuda has no cuda source for the cuda backend: add `sources: {cuda: kernel.cu}` to "}},
		{"cuda source only on metal", "metal-cuda-only", "", "64", exitBadInput,
			[]string{"and 1 invalid", "  1 × test_dry_shared_cuda_source_only_on_metal has no metal source for the metal backend: add `sources: {metal: kernel.metal}` to "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "test_dry_shared_" + strings.ReplaceAll(c.name, " ", "_") // registered once per process
			m := strings.Replace(usertest.Manifest(name), "WG: {values: [64, 128]", "WG: {values: [64, 2048]", 1)
			m = strings.Replace(m, "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+c.dispatchExtra+"}", 1)
			files := map[string]string{"k.cu": usertest.Source, "kernel.yaml": m}
			backend, source, _ := strings.Cut(c.backend, "-") // "cuda-metal-only": a cuda sweep of a kernel with only a metal source
			if source == "" {
				source = backend
			}
			if strings.HasPrefix(source, "metal") {
				files = map[string]string{"k.metal": metalSrc, "kernel.yaml": strings.Replace(m, "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)}
			}
			dir := filepath.Dir(usertest.Write(t, files))
			sw := writeFile(t, "sweep.yaml", "backend: "+backend+"\nsweeps:\n  - kernel: "+dir+"\n    knobs: {WG: "+c.wg+"}\n")
			code, _, stderr := runMain(t, "--config", sw, "--dry-run")
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, stderr)
			}
			for _, w := range append(c.want, "--dry-run counts the sweep without a device") {
				if !strings.Contains(stderr, w) {
					t.Errorf("want %q in\n%s", w, stderr)
				}
			}
		})
	}
}
