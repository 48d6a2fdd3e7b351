package scaffold

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
)

// A training code base's layout: the program includes its kernel from a
// header in a folder, which includes the common header one level up.
var layout = map[string]string{
	"train.cu":          "#include <stdio.h>\n#include \"kernels/scale.cuh\"\n\nint main() {\n    scale_kernel<<<4, 128>>>(0, 0, 2.0f, 512);\n    return 0;\n}\n",
	"kernels/scale.cuh": usertest.ScaleHeader("../common.h"),
	"common.h":          "#pragma once\ntypedef float floatX;\n",
	"notes/empty.h":     "#pragma once\nint helper(int x);\n",
}

func readFrom(files map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		rel, err := filepath.Rel("/w", p)
		if err == nil {
			if s, ok := files[filepath.ToSlash(rel)]; ok {
				return []byte(s), nil
			}
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
}

// mltop new follows the local headers the source includes: the kernel a
// header defines is found, its comment names the header's line, the
// header's typedef fixes the dtype, and the manifest (naming the .cu)
// loads. A header given directly works too; one without a kernel says
// what to give instead.
func TestScaffoldFollowsLocalHeaders(t *testing.T) {
	read := readFrom(layout)
	for _, c := range []struct{ name, from, source string }{
		{"the program", "train.cu", "sources: {cuda: train.cu}"},
		{"the header itself", "kernels/scale.cuh", `sources: {cuda: "kernels/scale.cuh"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/" + c.from, Src: layout[c.from], Dir: "/w", Read: read})
			if err != nil {
				t.Fatal(err)
			}
			checkNotesHaveTODOs(t, res)
			for _, w := range []string{c.source, "# line 5 of kernels/scale.cuh: scale_kernel(floatX* out, const floatX* inp, float alpha, int N)",
				"dtype_name: floatX", "dtypes: [f32]   # the source's typedef fixes floatX as float", "args: [out, inp, alpha, N]"} {
				if c.from != "train.cu" {
					w = strings.Replace(w, "line 5 of kernels/scale.cuh", "line 5", 1)
				}
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			files := map[string]string{"kernel.yaml": res.Text}
			for k, v := range layout {
				files[k] = v
			}
			if _, err := user.Load(usertest.Write(t, files)); err != nil {
				t.Fatalf("does not load: %v\n%s", err, res.Text)
			}
		})
	}
	_, err := Manifest(Request{Name: "my_k", SrcPath: "/w/notes/empty.h", Src: layout["notes/empty.h"], Dir: "/w", Read: read})
	if err == nil || !strings.Contains(err.Error(), "a header with no __global__ (CUDA) or kernel (Metal) function: give the .cu or .metal file that includes the kernel's header") {
		t.Errorf("a header without kernels: %v", err)
	}
	// Without Read (or with headers that cannot be read) the source is read alone.
	_, err = Manifest(Request{Name: "my_k", SrcPath: "/w/train.cu", Src: layout["train.cu"], Dir: "/w", Read: func(string) ([]byte, error) { return nil, errors.New("no") }})
	if err == nil || !strings.Contains(err.Error(), "has no kernels") {
		t.Errorf("headers not read: %v", err)
	}
}

// An #include the compiler does not read (under #if 0, or in a comment)
// pastes nothing; a live one pastes its header.
func TestWithLocalHeadersReadsLiveIncludesOnly(t *testing.T) {
	read := readFrom(layout)
	for _, c := range []struct {
		name, src string
		pasted    bool
	}{
		{"live", "#include \"common.h\"\nint x;\n", true},
		{"under #if 0", "#if 0\n#include \"common.h\"\n#endif\nint x;\n", false},
		{"in a block comment", "/*\n#include \"common.h\"\n*/\nint x;\n", false},
		{"host code under #ifndef __CUDA_ARCH__", "#ifndef __CUDA_ARCH__\n#include \"common.h\"\n#endif\nint x;\n", true},
		{"under #ifdef __HIPCC__", "#ifdef __HIPCC__\n#include \"common.h\"\n#endif\nint x;\n", false},
	} {
		got, _ := withLocalHeaders("/w/main.cu", c.src, read)
		if pasted := strings.Contains(got, "typedef float floatX;"); pasted != c.pasted {
			t.Errorf("%s: pasted %v, want %v:\n%s", c.name, pasted, c.pasted, got)
		}
	}
}

// Kaldi's way: src/cudamatrix/norm.cu includes "cudamatrix/dims.h", a
// path from src/, which the build passes with -I. new finds the header
// under that folder above the source's, reads its struct (the kernel's
// by-value parameter becomes a mapping, not a TODO) and writes the folder
// as include_dirs, relative to the manifest; the manifest loads.
func TestScaffoldFindsTheTreesRoot(t *testing.T) {
	tree := map[string]string{
		"src/cudamatrix/dims.h": "#pragma once\ntypedef struct Dims_ { int rows; int cols; int stride; } Dims;\n#define BLOCK 256\n",
		"src/cudamatrix/norm.cu": `#include "cudamatrix/dims.h"
template <typename Real>
__global__ static void scale_rows(Real* y, const Real* x, Dims d) {
    int i = blockIdx.x;
    for (int j = threadIdx.x; j < d.cols; j += BLOCK) y[i * d.stride + j] = 2 * x[i * d.stride + j];
}
`,
	}
	read := readFrom(map[string]string{"src/cudamatrix/dims.h": tree["src/cudamatrix/dims.h"], "src/cudamatrix/norm.cu": tree["src/cudamatrix/norm.cu"]})
	res, err := Manifest(Request{Name: "k", SrcPath: "/w/src/cudamatrix/norm.cu", Src: tree["src/cudamatrix/norm.cu"], Dir: "/w", Read: read})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"include_dirs: [src]", "{rows: rows, cols: cols, stride: stride}"}, []string{"cannot pass"})
	files := map[string]string{"kernel.yaml": res.Text}
	for k, v := range tree {
		files[k] = v
	}
	if _, err := user.Load(usertest.Write(t, files)); err != nil {
		t.Fatalf("does not load: %v\n%s", err, res.Text)
	}
	// a header beside the source is found there: no include_dirs
	res, err = Manifest(Request{Name: "k", SrcPath: "/w/src/cudamatrix/norm.cu", Src: strings.Replace(tree["src/cudamatrix/norm.cu"], "cudamatrix/dims.h", "dims.h", 1), Dir: "/w", Read: read})
	if err != nil || strings.Contains(res.Text, "include_dirs") {
		t.Errorf("beside the source: %v\n%s", err, res.Text)
	}
}

// MLX's way: random.metal includes "mlx/backend/metal/kernels/utils.h"
// (found under the source's own folder), which includes
// "mlx/backend/metal/kernels/bf16.h", a path from that same folder, not
// from utils.h's: new finds it and writes include_dirs: [.] (the build's
// -I of the tree's root); a header's include beside it needs none.
func TestScaffoldFindsTheSourceFolderAsRoot(t *testing.T) {
	tree := map[string]string{
		"k/lib/utils.h": "#pragma once\n#include \"k/lib/bf16.h\"\n",
		"k/lib/bf16.h":  "#pragma once\n#define LANES 4\n",
		"bits.metal": `#include "k/lib/utils.h"
kernel void bits(device const uint* keys [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i * LANES] = keys[i];
}
`,
	}
	res, err := Manifest(Request{Name: "bits", SrcPath: "/w/bits.metal", Src: tree["bits.metal"], Dir: "/w", Read: readFrom(tree)})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"include_dirs: [.]"}, nil)
	tree["k/lib/utils.h"] = "#pragma once\n#include \"bf16.h\"\n"
	res, err = Manifest(Request{Name: "bits", SrcPath: "/w/bits.metal", Src: tree["bits.metal"], Dir: "/w", Read: readFrom(tree)})
	if err != nil || strings.Contains(res.Text, "include_dirs") {
		t.Errorf("beside the header: %v\n%s", err, res.Text)
	}
}
