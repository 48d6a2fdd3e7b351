package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
)

const threeKernels = `#include <stdio.h>
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void scale(float* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
template <typename T>
__global__ void copy(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
int main() { printf("hi\n"); return 0; }
`

// TestNewWholeFile: several kernels without --entry are listed (exit 2);
// --entry a,b writes one dispatch each in that order; relative and
// absolute --from / -o both give a sources: path that loads; an existing
// kernel.yaml needs --force.
func TestNewWholeFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("a", 0o755)
	os.WriteFile(filepath.Join("a", "k.cu"), []byte(threeKernels), 0o644)
	code, out, errs := runCLI(t, "new", "whole_k", "--from", "a/k.cu")
	if code != 2 || out != "" {
		t.Fatalf("new without --entry: %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"has 3 kernels", "--entry a,b", "line 2: add  add(const float* a", "line 6: scale", "line 11: template <T> copy"} {
		if !strings.Contains(errs, w) {
			t.Errorf("the listing lacks %q:\n%s", w, errs)
		}
	}
	absOut := filepath.Join(dir, "out", "abs")
	absSrc := filepath.Join(dir, "a", "k.cu")
	for _, tc := range []struct{ name, from, out, manifest string }{
		{"relative from, absolute out", "./a/k.cu", absOut, filepath.Join(absOut, "kernel.yaml")},
		{"absolute from, relative out", absSrc, "rel/dir", filepath.Join("rel", "dir", "kernel.yaml")},
		{"both relative, beside the source", "a/k.cu", "", filepath.Join("a", "kernel.yaml")},
	} {
		args := []string{"new", "whole_k", "--from", tc.from, "--entry", "scale,add, copy"}
		if tc.out != "" {
			args = append(args, "-o", tc.out)
		}
		code, out, errs := runCLI(t, args...)
		if code != 0 || !strings.Contains(errs, "things to check, each a # TODO on the line to edit:\n") || !strings.Contains(errs, "guessed grid") {
			t.Fatalf("%s: %d\n%s\n%s", tc.name, code, out, errs)
		}
		f, err := user.Load(tc.manifest)
		if err != nil {
			t.Fatalf("%s: the manifest does not load: %v", tc.name, err)
		}
		var entries []string
		for _, d := range f.DispatchInfos() {
			entries = append(entries, d.Entry)
		}
		if got := strings.Join(entries, " "); got != "scale add copy<T>" {
			t.Errorf("%s: dispatches %q, want scale add copy<T> in the --entry order", tc.name, got)
		}
		code, _, errs = runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "exists: pass --force") {
			t.Errorf("%s: new over an existing manifest: %d %s", tc.name, code, errs)
		}
		if code, _, errs = runCLI(t, append(args, "--force")...); code != 0 {
			t.Errorf("%s: --force: %d %s", tc.name, code, errs)
		}
	}
}
