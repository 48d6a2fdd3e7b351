package mslemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// runFiles writes files (a kernel.yaml, its Metal source and ref.py) to a
// temporary folder, loads and installs the manifest, and runs its default
// f32 spec on the emulation.
func runFiles(t *testing.T, eb *mslemu.Backend, files map[string]string) profiler.Result {
	t.Helper()
	f, err := user.Load(usertest.Write(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if err := user.Install(f); err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	return run.NewRunner(eb).Run(context.Background(), s, mslemu.Options(), nil)
}

// variant is the kernel with one text replaced (none: as it is) and the
// status its run must have: the broken twins a test plants.
type variant struct {
	name, from, to string
	want           profiler.Status
}

// runVariants runs each variant of src (its manifest yaml naming it NAME,
// which becomes prefix+the variant's name; its reference ref) on eb's
// emulation and checks the status.
func runVariants(t *testing.T, eb *mslemu.Backend, prefix, yaml, src, ref string, cases []variant) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := strings.Replace(src, c.from, c.to, 1)
			if k == src && c.from != "" {
				t.Fatalf("%q is not in the source", c.from)
			}
			res := runFiles(t, eb, map[string]string{
				"kernel.yaml": strings.Replace(yaml, "NAME", prefix+c.name, 1),
				"k.metal":     k, "ref.py": ref})
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
