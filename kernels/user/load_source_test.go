package user

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kernel source given where a manifest is due is named as what it is,
// with the manifest to give (when one is beside it) or the `mltop new`
// line that writes one; a manifest of any other name still loads.
func TestManifestsRefusesSources(t *testing.T) {
	for _, c := range []struct {
		file, beside string
		want         string // "" loads
	}{
		{"saxpy_softmax.cu", "", "this is a CUDA source, not a manifest: give its kernel.yaml, or write one with `mltop new saxpy_softmax --from DIR/saxpy_softmax.cu`"},
		{"red.cuh", "", "this is a CUDA header"},
		{"k.metal", "", "this is a Metal source, not a manifest"},
		{"K.CU", "", "this is a CUDA source"},
		{"ops.h", "", "this is a C/C++ header"},
		{"ops.hpp", "", "this is a C++ header"},
		{"main.cpp", "", "this is a C++ source"},
		{"my-kernel.cu", "", "`mltop new my_kernel --from DIR/my-kernel.cu`"},
		{"4_kernel_1D_blocktiling.cuh", "", "`mltop new k_4_kernel_1D_blocktiling --from DIR/4_kernel_1D_blocktiling.cuh`"},
		{"03-sum.metal", "", "`mltop new k_03_sum --from DIR/03-sum.metal`"},
		{"transpose.cu", "", "`mltop new transpose_mine --from DIR/transpose.cu`"}, // new refuses a built-in's name
		{"k.cu", "name: x\n", "this is a CUDA source, not a manifest: give its kernel.yaml (DIR/kernel.yaml is beside it)"},
		{"other.yaml", "", ""},
		{"kernel.yml", "", ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, []byte("__global__ void k() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.beside != "" {
				if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(c.beside), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ms, err := Manifests(path)
			if c.want == "" {
				if err != nil || len(ms) != 1 || ms[0] != path {
					t.Errorf("Manifests(%s) = %v, %v; want the file itself", c.file, ms, err)
				}
				return
			}
			var ue *Error
			if !errors.As(err, &ue) || ue.File != path {
				t.Fatalf("Manifests(%s) = %v, %v; want an *Error at the file", c.file, ms, err)
			}
			if want := strings.ReplaceAll(c.want, "DIR", dir); !strings.Contains(ue.Msg, want) {
				t.Errorf("message %q\nlacks %q", ue.Msg, want)
			}
		})
	}
}
