package all_test

import (
	"path/filepath"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

// Every shipped config loads and every spec in it is valid on an H100: an
// invalid row makes the sweep exit 2, so a config must not carry any.
func TestShippedConfigsAreValidOnCUDA(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs found (%v)", err)
	}
	dev := kittest.H100Full
	dev.Arch = "sm_90"
	for _, f := range files {
		sw, err := sweep.Load(f, profiler.DefaultOptions())
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, j := range sw.Jobs {
			if _, _, err := profiler.Resolve(j.Spec, dev); err != nil {
				t.Errorf("%s: %v: %v", filepath.Base(f), j.Spec, err)
			}
		}
	}
}
