package run_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestRunnerOK(t *testing.T) {
	b := &enginetest.MemBackend{}
	r := run.NewRunner(b)
	for _, dt := range []profiler.DType{profiler.F32, profiler.BF16} {
		res := r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: dt, Dims: map[string]int{"N": 1000}}, enginetest.QuickOptions(), nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("%s: status %s: %s", dt, res.Status, res.Error)
		}
		if res.Stats.N < 10 || res.Stats.Median < 1000 || res.Stats.Median > 1002 {
			t.Errorf("stats %+v", res.Stats)
		}
		if res.Verdict == nil || !res.Verdict.Pass || res.Verdict.Checked != 256 || res.Verdict.RowsTotal != 1000 {
			t.Errorf("verdict %+v", res.Verdict)
		}
		// 1000 FLOP in ~1001 ns = ~1 GFLOP/s = 0.001 TFLOP/s, 0.1% of the 1 TFLOP/s peak
		if res.TFLOPS < 0.00099 || res.TFLOPS > 0.00101 || (dt == profiler.F32 && (res.PctPeakFLOP < 0.099 || res.PctPeakFLOP > 0.101)) || (dt == profiler.BF16 && res.PctPeakFLOP != 0) {
			t.Errorf("throughput %g TFLOP/s, %g%% of peak", res.TFLOPS, res.PctPeakFLOP)
		}
		if res.Spec.Knobs["WG"] != 64 {
			t.Errorf("default knob not applied: %v", res.Spec.Knobs)
		}
		if len(res.Budget) != 1 || res.Budget[0].Total != 8 || res.Budget[0].Limit != 32768 {
			t.Errorf("budget %+v", res.Budget)
		}
		// threads: 2048/64 = 32 groups; tgm: 65536/8 = 8192 → threads bind
		if o, ok := res.MinOccupancy(); !ok || o.GroupsPerUnit != 32 || o.Limiter != "threads" {
			t.Errorf("occupancy %+v", res.Occupancy)
		}
	}
	if b.Compiled != 1 {
		t.Errorf("compiled %d times; one program must compile once", b.Compiled)
	}
}

func TestRunnerCatchesBrokenKernel(t *testing.T) {
	r := run.NewRunner(&enginetest.MemBackend{})
	res := r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}, Flags: map[string]bool{"broken": true}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusMismatch {
		t.Fatalf("status %s, want mismatch", res.Status)
	}
	// the unwritten last element is still the NaN poison
	if res.Verdict.NaNInf != 1 || !strings.Contains(res.Error, "out[99]") {
		t.Errorf("verdict %+v, error %q", res.Verdict, res.Error)
	}
}

// A kernel that is right once but keeps state across launches passes the
// first check and must fail the one after the timed launches.
func TestRunnerCatchesStateAcrossLaunches(t *testing.T) {
	r := run.NewRunner(&enginetest.MemBackend{})
	res := r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}, Flags: map[string]bool{"drift": true}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusMismatch || !strings.Contains(res.Error, "after the timed launches") {
		t.Fatalf("status %s, error %q; want a mismatch after the timed launches", res.Status, res.Error)
	}
	if res.Verdict == nil || res.Verdict.Mismatches == 0 {
		t.Errorf("verdict %+v", res.Verdict)
	}
	if res.Stats.N == 0 {
		t.Error("the timing must be kept with the mismatch")
	}
}

func TestRunnerInvalidAndCompileError(t *testing.T) {
	r := run.NewRunner(&enginetest.MemBackend{})
	cases := []struct {
		spec profiler.Spec
		want profiler.Status
		msg  string
	}{
		{profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 48}}, profiler.StatusInvalid, "WG=48 is not allowed: use one of 32, 64, 128"},
		{profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"N": 7}}, profiler.StatusInvalid, "rejected by the family"},
		{profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 0}}, profiler.StatusInvalid, "N=0 is out of range"},
		{profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 1 << 40}}, profiler.StatusInvalid, "of device memory (2 buffers) but test device has 1.00 GiB (90% usable): reduce N=1099511627776"},
		{profiler.Spec{Kernel: "nope", DType: profiler.F32}, profiler.StatusInvalid, `unknown kernel "nope"`},
		{profiler.Spec{Kernel: "test_scale", DType: profiler.I32}, profiler.StatusInvalid, `does not support dtype "i32"`},
	}
	for _, c := range cases {
		res := r.Run(context.Background(), c.spec, enginetest.QuickOptions(), nil)
		if res.Status != c.want || !strings.Contains(res.Error, c.msg) {
			t.Errorf("%v: %s %q, want %s containing %q", c.spec, res.Status, res.Error, c.want, c.msg)
		}
	}
	res := run.NewRunner(&enginetest.MemBackend{FailCompile: true}).Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusCompileError || !strings.Contains(res.Error, "expected ';'") {
		t.Errorf("compile error: %s %q", res.Status, res.Error)
	}
}

func TestRunnerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := run.NewRunner(&enginetest.MemBackend{}).Run(ctx, profiler.Spec{Kernel: "test_scale", DType: profiler.F32}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusCancelled {
		t.Errorf("status %s", res.Status)
	}
}

func TestDeviceLimitOverride(t *testing.T) {
	opt := enginetest.QuickOptions()
	tgm := 16
	opt.Limits = &profiler.DeviceLimitsYAML{TGMPerUnit: &tgm}
	res := run.NewRunner(&enginetest.MemBackend{}).Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32}, opt, nil)
	// 16 B per unit / 8 B per group = 2 groups, now bound by TGM
	if o, ok := res.MinOccupancy(); !ok || o.GroupsPerUnit != 2 || o.Limiter != "tgm" {
		t.Errorf("occupancy with override %+v", res.Occupancy)
	}
}

func TestSummarize(t *testing.T) {
	s := profiler.Summarize([]float64{5, 1, 4, 2, 3})
	want := profiler.Stats{N: 5, Min: 1, P10: 1.4, Median: 3, P90: 4.6, Mean: 3, Stdev: 1.5811388300841898, CV: 0.5270462766947299}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if (profiler.Summarize(nil) != profiler.Stats{}) {
		t.Error("empty samples")
	}
}

func TestVerifyCounts(t *testing.T) {
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: []int{0, 1, 2, 3}, Want: []float64{1, -2, 100, 0}}}, RowsChecked: 4, RowsTotal: 4}
	nan := float32(0)
	nan = nan / nan
	got := map[string][]float32{"o": {1.001, -2, 101, nan}}
	v := run.Verify(ref, got, profiler.Tolerance{ATol: 0.01, RTol: 0.001})
	// 1.001: |d|=0.001 ok; 101 vs 100: d=1 > 0.01+0.1 mismatch; NaN mismatch
	if v.Mismatches != 2 || v.NaNInf != 1 || v.Pass || v.Checked != 4 {
		t.Errorf("%+v", v)
	}
	if v.MaxAbsErr < 0.999 || v.MaxAbsErr > 1.001 || v.MaxRelErr < 0.00999 || v.MaxRelErr > 0.01001 {
		t.Errorf("errors %+v", v)
	}
}

func TestSampleRows(t *testing.T) {
	a := profiler.SampleRows(10000, 50, 7)
	b := profiler.SampleRows(10000, 50, 7)
	if len(a) != 50 || a[0] != 0 || a[49] != 9999 {
		t.Fatalf("rows %v", a)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("not deterministic")
		}
	}
	if c := profiler.SampleRows(10000, 50, 8); c[10] == a[10] && c[20] == a[20] && c[30] == a[30] {
		t.Error("seed has no effect")
	}
	if all := profiler.SampleRows(5, 50, 1); len(all) != 5 {
		t.Errorf("small shape: %v", all)
	}
}

func TestVerifyPerBufferTolerance(t *testing.T) {
	strict := profiler.Tolerance{ATol: 1e-6, RTol: 0}
	ref := &profiler.Reference{Checks: []profiler.Check{
		{Buffer: "o", Index: []int{0}, Want: []float64{1}},
		{Buffer: "l", Index: []int{0}, Want: []float64{1}, Tol: &strict},
	}}
	got := map[string][]float32{"o": {1.001}, "l": {1.001}}
	v := run.Verify(ref, got, profiler.Tolerance{ATol: 0.01})
	if v.Mismatches != 1 || v.Pass {
		t.Errorf("the strict buffer's error must count once: %+v", v)
	}
	// the verdict's bound (the summary's "atol … + rtol …") is the worst
	// output's, not the spec's default (an f64 output's, not f32's)
	if v.ATol != strict.ATol || v.RTol != strict.RTol {
		t.Errorf("verdict bound atol %g rtol %g, want the strict buffer's %g, %g", v.ATol, v.RTol, strict.ATol, strict.RTol)
	}
}

// slowBackend's Run blocks until the context the runner handed it
// (profiler.Interruptible) is done: a CPU launch of minutes.
type slowBackend struct {
	*enginetest.MemBackend
	ctx context.Context
}

func (b *slowBackend) SetContext(ctx context.Context) { b.ctx = ctx }

func (b *slowBackend) Run(ls []profiler.Launch) error {
	if b.ctx == nil {
		return errors.New("the runner did not hand the backend its context")
	}
	<-b.ctx.Done()
	return b.ctx.Err()
}

// TestRunnerCancelReachesBackend: ctrl-C while the backend is inside a long
// launch ends the spec as cancelled, not as an error.
func TestRunnerCancelReachesBackend(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &slowBackend{MemBackend: &enginetest.MemBackend{}}
	res := run.NewRunner(b).Run(ctx, profiler.Spec{Kernel: "test_scale", DType: profiler.F32}, enginetest.QuickOptions(), func(p profiler.Progress) {
		if p.Phase == "verify" {
			cancel()
		}
	})
	if res.Status != profiler.StatusCancelled || res.Error != "cancelled by user" {
		t.Fatalf("status %s %q, want cancelled", res.Status, res.Error)
	}
}
