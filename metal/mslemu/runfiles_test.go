package mslemu_test

import (
	"context"
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
