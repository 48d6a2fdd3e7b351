package user

import (
	"context"
	"testing"

	"github.com/mltop/mltop/cuda/cudatest"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// cudaTwin is one manifest a CUDA GPU test runs, a kernel or its broken
// twin: loaded and planned without a GPU, so that a run on one tests the
// kernel, not the test's YAML.
type cudaTwin struct {
	name  string
	f     *Family
	dt    profiler.DType
	want  profiler.Status
	check func(t *testing.T, res profiler.Result) // further assertions on the run; nil for none
}

// loadCUDATwin writes files (kernel.yaml and what it names), loads the
// manifest and plans its default spec at dt for cudaDev.
func loadCUDATwin(t *testing.T, name string, files map[string]string, dt profiler.DType, want profiler.Status) cudaTwin {
	t.Helper()
	f, err := Load(usertest.Write(t, files))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if _, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema()), cudaDev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cudaTwin{name: name, f: f, dt: dt, want: want}
}

// runTwinsOnCUDA runs each twin's default spec with the real Runner under
// stop, one subtest each: its status must be want, and its check must
// pass. Skips without a CUDA driver.
func runTwinsOnCUDA(t *testing.T, twins []cudaTwin, stop profiler.StopRule) {
	t.Helper()
	be := cudatest.OpenOrSkip(t)
	r := run.NewRunner(be)
	defer r.Close()
	opt := profiler.DefaultOptions()
	opt.Stop = stop
	for _, c := range twins {
		t.Run(c.name, func(t *testing.T) {
			if err := Install(c.f); err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), profiler.Spec{Kernel: c.f.Name(), DType: c.dt}.WithDefaults(c.f.Schema()), opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}
