package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/pyref"
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

// wholeProgram is a whole .cu program as a user writes it: host main with
// the launches, one kernel with __launch_bounds__, one launched with dim3
// block and grid variables.
const wholeProgram = `#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define THREADS 256

__global__ void __launch_bounds__(THREADS) saxpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = 2.0f * x[i];
}

int main(int argc, char** argv) {
    int n = 1 << 20;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    saxpy<<<(n + THREADS - 1) / THREADS, THREADS>>>(x, y, 2.0f, n);
    dim3 block(128);
    dim3 grid(1024);
    scale<<<grid, block>>>(x, y, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
`

// A whole program goes through `mltop new` and `mltop check` as it is: the
// threads come from __launch_bounds__ and the launches in main, the grids
// from those launches over the dims the launch arguments are bound to.
// The compile needs NVRTC (`. /tmp/nvenv.sh` style MLTOP_NVRTC and
// MLTOP_CUDA_INCLUDE): without it the test skips after the static check.
func TestNewThenCheckWholeProgram(t *testing.T) {
	t.Setenv(pyref.PythonEnv, filepath.Join(t.TempDir(), "no-python"))
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.cu")
	os.WriteFile(src, []byte(wholeProgram), 0o644)
	if code, out, errs := runCLI(t, "new", "test_whole_prog", "--from", src, "--entry", "saxpy,scale"); code != 0 {
		t.Fatalf("new: %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "kernel.yaml"))
	m := string(b)
	for _, w := range []string{
		"THREADS: {values: [256], default: 256, doc: threads per group}",
		`grid: ["(n + THREADS - 1) / THREADS", 1, 1]   # from the launch at line 21`, "threads: [THREADS, 1, 1]",
		"block: {values: [32, 64, 128, 256, 512, 1024], default: 128, doc: threads per group}   # from the launch at line 24 (block threads)",
		"grid: [1024, 1, 1]   # from the launch at line 24", "threads: [block, 1, 1]",
	} {
		if !strings.Contains(m, w) {
			t.Errorf("kernel.yaml lacks %q:\n%s", w, m)
		}
	}
	if strings.Contains(m, "guessed one thread") {
		t.Errorf("a grid was guessed:\n%s", m)
	}
	code, out, errs := runCLI(t, "check", dir)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "not compiled") {
		t.Skipf("NVRTC not found (set MLTOP_NVRTC and MLTOP_CUDA_INCLUDE to compile):\n%s", out)
	}
	if !strings.Contains(out, "=> ok") {
		t.Errorf("check:\n%s", out)
	}
}

// new ends with the next steps that work for the source's platform: a
// Metal kernel can run on the MSL emulation without a Mac, a CUDA one on
// the CUDA emulation without a GPU; only a GPU times either.
func TestNewNextSteps(t *testing.T) {
	for _, c := range []struct{ from, want, not string }{
		{"k.metal", "mltop check --run m/kernel.yaml   (runs it against the reference: on the MSL emulation without a Mac)", ""},
		{"K.METAL", "on the MSL emulation", ""},
		{"k.cu", "mltop check --run m/kernel.yaml   (runs it against the reference: on the CUDA emulation without a GPU), mltop run m/kernel.yaml   (runs, checks and times it, on an NVIDIA GPU)", ""},
	} {
		got := nextSteps(c.from, "m/kernel.yaml")
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: %q", c.from, got)
		}
	}
}
