//go:build linux

package ui

import (
	"testing"

	"github.com/mltop/mltop/cuda/cudatest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// TestTuneUserKernelOnCUDA: T on a user kernel through the CUDA backend
// (NVRTC, events): both WG values measured, the best re-measured, the
// winner in the editor. Skips without a CUDA driver.
func TestTuneUserKernelOnCUDA(t *testing.T) {
	be := cudatest.OpenOrSkip(t)
	r := run.NewRunner(be)
	defer r.Close()
	opts, _, name := userKernelOptions(t, "my_cuda_tune")
	o := profiler.DefaultOptions()
	o.Stop = profiler.StopRule{Noise: 0.05, MinSamples: 5, MinTime: 0.01, MaxTime: 0.5}
	opts.DefaultOptions = o
	hs := start(t, r, opts, 120, 40)
	hs.waitFor("user kernel picked", func(m Model) bool { return m.family() != nil && m.family().Name() == name })
	hs.keys("T")
	hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptTune })
	hs.keys("enter")
	var tr *tuneRun
	var wg int
	frame := hs.waitFor("the end of the search", func(m Model) bool {
		if !tuneOver(m) {
			return false
		}
		tr, wg = tuning(m), m.spec().Knobs["WG"]
		return true
	})
	if tr.err != nil || tr.outcome == nil || len(tr.outcome.Finalists) == 0 {
		t.Fatalf("the search on CUDA ended with %v:\n%s", tr.err, frame)
	}
	if len(tr.points) != 2 {
		t.Errorf("%d evaluations, want both WG values", len(tr.points))
	}
	if w := tr.outcome.Winner(); w.Spec.Knobs["WG"] != wg {
		t.Errorf("winner WG=%d, editor WG=%d", w.Spec.Knobs["WG"], wg)
	}
	t.Logf("%s\n%s", tr.outcome.Compare.Text, frame)
}
