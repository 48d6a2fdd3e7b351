package metal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// emuVariant is one source of a kernel and the status it must get.
type emuVariant struct {
	name, src string
	want      profiler.Status
}

// runAgainstReference runs each variant of a Metal kernel on the CPU
// emulator, checked against ref, the same kernel written out
// (`check: {kernel: …}`). manifest is a kernel.yaml whose NAME (prefix_
// and the variant's name) and CHECK are filled in for each; the spec is
// f32 at dims.
func runAgainstReference(t *testing.T, prefix, manifest, ref string, dims map[string]int, variants []emuVariant) {
	t.Helper()
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	root := t.TempDir()
	write := func(dir, src, check string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.NewReplacer("NAME", prefix+"_"+dir, "CHECK", check).Replace(manifest)
		if err := os.WriteFile(filepath.Join(root, dir, "kernel.yaml"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "k.metal"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("reference", ref, "check: none")
	for _, v := range variants {
		write(v.name, v.src, "check: {kernel: ../reference/kernel.yaml}")
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			fams, err := user.Register(filepath.Join(root, v.name))
			if err != nil {
				t.Fatal(err)
			}
			spec := profiler.Spec{Kernel: fams[0].Name(), DType: profiler.F32, Dims: dims}
			res := run.NewRunner(eb).Run(context.Background(), spec, mslemu.Options(), nil)
			if res.Status != v.want {
				t.Errorf("status %s, want %s: %s %+v", res.Status, v.want, res.Error, res.Verdict)
			}
		})
	}
}
