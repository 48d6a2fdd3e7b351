// Package usertest is what the tests of user kernels share (kernels/user,
// the interactive session's live reload, the CLI's watch and worker
// tests): one small valid manifest and its source, and a helper that
// writes them to a temporary folder. Only tests import it.
package usertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Source is k.cu: the kernel the manifest's dispatch names. It does
// nothing; the tests plan it, compile it with a fake or refuse it on the
// CPU backend.
const Source = `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {}`

// ScaleHeader is a kernel header as training code bases keep one
// (kernels/scale.cuh): scale_kernel, y = alpha * x over floatX, whose
// typedef the header reaches through #include common (a path such as
// "common.h" or "../common.h").
func ScaleHeader(common string) string {
	return `#pragma once
#include "` + common + `"

// y = alpha * x
__global__ void scale_kernel(floatX* out, const floatX* inp,
                             float alpha, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = (floatX)(alpha * (float)inp[i]);
}
`
}

// manifest is the kernel.yaml of Manifest. Tests match positions in it
// (the rule on line 9, the dispatch on line 14): keep them.
const manifest = `name: NAME
sources: {cuda: k.cu}
dtypes: [f32]
knobs:
  WG: {values: [64, 128], default: 64}
dims:
  rows: {default: 8}
  cols: {default: 16}
rules: ["cols % 4 == 0"]
buffers:
  - {name: X, dtype: T, shape: [rows, cols]}
  - {name: Y, dtype: T, shape: [rows, cols], out: true, tol: {atol: 1e-3}}
dispatches:
  - {entry: k, grid: [rows], threads: [WG], args: [X, Y, rows, cols]}
work: {flops: "rows * cols"}
check: none
`

// Manifest is a small valid kernel.yaml for a kernel called name: one
// knob (WG: 64 or 128), dims rows=8 and cols=16 with the rule cols % 4 ==
// 0, an input X and an output Y, one dispatch of Source's k, rows·cols
// FLOPs (128 at the defaults), `check: none`. Tests vary it with
// strings.Replace.
func Manifest(name string) string { return strings.Replace(manifest, "NAME", name, 1) }

// Write writes files (name → content, in subfolders where a name has a
// slash) into a new temporary folder and returns the path its
// kernel.yaml has there.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "kernel.yaml")
}
