package user_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/scaffold"
)

// templatedScaleRows is a Metal kernel template and nothing more, as a
// user brings it to `mltop new`.
const templatedScaleRows = `#include <metal_stdlib>
using namespace metal;

template <typename T>
[[kernel]] void scale_rows(device const T* x [[buffer(0)]],
                           device T* y [[buffer(1)]],
                           constant uint& cols [[buffer(2)]],
                           uint2 gid [[thread_position_in_grid]]) {
    if (gid.x < cols) y[gid.y * cols + gid.x] = x[gid.y * cols + gid.x] * T(2);
}
`

// The manifest `mltop new` writes for a Metal kernel template (entry:
// "scale_rows<T>", dtypes f32, f16, bf16) checks as written: each dtype
// compiles on the MSL emulation, with the source's own [[host_name]]
// instantiations for some of them or without any.
func TestNewManifestOfAMetalTemplateChecks(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("needs g++ for the MSL emulation")
	}
	own := templatedScaleRows + `
template [[host_name("scale_rows_f32")]] [[kernel]] decltype(scale_rows<float>) scale_rows<float>;
template [[host_name("scale_rows_f16")]] [[kernel]] decltype(scale_rows<half>) scale_rows<half>;
`
	for name, src := range map[string]string{"bare": templatedScaleRows, "own_instantiations": own} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			srcPath := filepath.Join(dir, "k.metal")
			if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := scaffold.Manifest(scaffold.Request{Name: "t_new_tmpl_" + name, SrcPath: srcPath, Src: src, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, `entry: "scale_rows<T>"`) {
				t.Fatalf("mltop new no longer writes the template entry:\n%s", res.Text)
			}
			manifest := filepath.Join(dir, "kernel.yaml")
			if err := os.WriteFile(manifest, []byte(res.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := lint.Check(manifest, lint.Options{})
			var out bytes.Buffer
			rep.Write(&out, lint.Note)
			if rep.ExitCode() != 0 {
				t.Fatalf("mltop check exits %d:\n%s", rep.ExitCode(), out.String())
			}
			for _, want := range []string{"Metal f32: scale_rows<float> compiles", "Metal f16: scale_rows<half> compiles", "Metal bf16: scale_rows<bfloat> compiles"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("check says no %q:\n%s", want, out.String())
				}
			}
		})
	}
}
