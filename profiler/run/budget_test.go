package run_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestBuildBudgetWarnings(t *testing.T) {
	dev := profiler.DeviceInfo{TGMPerGroup: 32768, TGMPerGroupOptIn: 0}
	d := &profiler.Dispatch{Name: "k", Group: [3]int{256, 1, 1}, TGM: []profiler.TGMItem{{Name: "a", Bytes: 20000}, {Name: "b", Bytes: 16000}, {Name: "red", Bytes: 4}}}
	b := run.BuildBudget(d, dev, profiler.KernelAttrs{StaticTGM: 36016, MaxThreads: 128, SpillBytes: 8})
	want := []string{"exceeds the 32768 B limit by 3236 B", "256 threads requested but the compiled kernel allows 128", "8 B of register spills"}
	if len(b.Warnings) != len(want) {
		t.Fatalf("warnings %q", b.Warnings)
	}
	for i, w := range want {
		if !strings.Contains(b.Warnings[i], w) {
			t.Errorf("warning %d %q lacks %q", i, b.Warnings[i], w)
		}
	}
	if strings.Contains(b.Warnings[2], "reserved") {
		t.Errorf("spills beside no reserve: %q", b.Warnings[2])
	}
	// Spills within the local memory reserved at start-up are plain; beyond
	// it, the warning says the level may move and how much to reserve.
	for _, c := range []struct {
		reserve, spill int
		want           string
	}{
		{8192, 5808, ""},
		{8192, 8192, ""},
		{8192, 9000, "MLTOP_CUDA_LOCAL_RESERVE=9216"},
		{6144, 6145, "beyond the 6144 B per thread of local memory reserved"},
	} {
		dev := dev
		dev.LocalReserve = c.reserve
		w := run.BuildBudget(d, dev, profiler.KernelAttrs{SpillBytes: c.spill}).Warnings
		if len(w) != 2 || !strings.Contains(w[1], fmt.Sprintf("%d B of register spills", c.spill)) {
			t.Fatalf("reserve %d, spills %d: %q", c.reserve, c.spill, w)
		}
		if got := strings.Contains(w[1], "reserved"); got != (c.want != "") || !strings.Contains(w[1], c.want) {
			t.Errorf("reserve %d, spills %d: %q, want %q", c.reserve, c.spill, w[1], c.want)
		}
	}
	// 12 B more than planned is Metal's 16-byte rounding; 16 B is a real difference
	if b := run.BuildBudget(d, dev, profiler.KernelAttrs{StaticTGM: 36016}); len(b.Warnings) != 1 {
		t.Errorf("rounding flagged: %q", b.Warnings)
	}
	if b := run.BuildBudget(d, dev, profiler.KernelAttrs{StaticTGM: 36020}); len(b.Warnings) != 2 || !strings.Contains(b.Warnings[1], "compiler reports 36020 B static") {
		t.Errorf("real difference not flagged: %q", b.Warnings)
	}
	// an opt-in limit applies once the plan needs more than the default
	big := &profiler.Dispatch{TGM: []profiler.TGMItem{{Name: "a", Bytes: 60000}}}
	if lim := profiler.TGMLimit(profiler.DeviceInfo{TGMPerGroup: 49152, TGMPerGroupOptIn: 232448}, big); lim != 232448 {
		t.Errorf("opt-in limit %d", lim)
	}
	if lim := profiler.TGMLimit(profiler.DeviceInfo{TGMPerGroup: 49152, TGMPerGroupOptIn: 232448}, d); lim != 49152 {
		t.Errorf("default limit %d", lim)
	}
}

func TestEstimateOccupancyLimiters(t *testing.T) {
	dev := profiler.DeviceInfo{Backend: "x", MaxThreadsPerUnit: 2048, TGMPerUnit: 100000, RegistersPerUnit: 65536, MaxGroupsPerUnit: 32}
	cases := []struct {
		threads, tgm, regs int
		groups             int
		limiter            string
	}{
		{128, 0, 0, 16, "threads"},
		{128, 40000, 0, 2, "tgm"},
		{128, 1000, 128, 4, "registers"},
		{32, 100, 0, 32, "groups"},
	}
	for _, c := range cases {
		d := &profiler.Dispatch{Group: [3]int{c.threads, 1, 1}}
		if c.tgm > 0 {
			d.TGM = []profiler.TGMItem{{Name: "t", Bytes: c.tgm}}
		}
		o := run.EstimateOccupancy(dev, d, profiler.KernelAttrs{Registers: c.regs})
		if !o.Available || o.GroupsPerUnit != c.groups || o.Limiter != c.limiter {
			t.Errorf("%+v: got %d by %s", c, o.GroupsPerUnit, o.Limiter)
		}
	}
	if o := run.EstimateOccupancy(profiler.DeviceInfo{Backend: "cpu"}, &profiler.Dispatch{Group: [3]int{32, 1, 1}}, profiler.KernelAttrs{}); o.Available || o.Reason == "" {
		t.Errorf("no limits: %+v", o)
	}
}

func TestPreviewShowsBudgetOverLimit(t *testing.T) {
	dev := (&enginetest.MemBackend{}).Info()
	dev.TGMPerGroup = 4 // the test family plans wg/32·4 bytes: WG=64 needs 8
	p := run.MakePreview(profiler.Spec{Kernel: "test_scale", DType: profiler.F32}, dev)
	if p.Err != nil || len(p.Budget) != 1 || p.Budget[0].Total != 8 || p.Budget[0].Limit != 4 || len(p.Budget[0].Warnings) != 1 {
		t.Fatalf("preview %+v", p)
	}
	// a spec the family rejects for its TGM alone still gets its budget
	profiler.Replace(tgmFamily{})
	p = run.MakePreview(profiler.Spec{Kernel: "test_tgm", DType: profiler.F32, Knobs: map[string]int{"WG": 128}}, dev)
	if p.Err == nil || !strings.Contains(p.Err.Error(), "TGM") || len(p.Budget) != 1 || p.Budget[0].Total != 16 {
		t.Errorf("spec over the TGM limit: preview %+v", p)
	}
	// one its other rules reject is not planned: Plan receives only
	// validated specs
	p = run.MakePreview(profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"N": 7}}, dev)
	if p.Err == nil || p.Plan != nil || len(p.Budget) != 0 {
		t.Errorf("rejected spec preview %+v", p)
	}
}

// tgmFamily is test_scale whose rules refuse a tile over the TGM limit.
type tgmFamily struct{ enginetest.ScaleFamily }

func (tgmFamily) Name() string { return "test_tgm" }
func (tgmFamily) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if need := s.Knobs["WG"] / 32 * 4; need > dev.TGMPerGroup {
		return fmt.Errorf("TGM %d B over the %d B limit", need, dev.TGMPerGroup)
	}
	return nil
}

// boundedKernel is a compiled kernel that allows 256 threads per group,
// as a CUDA kernel with __launch_bounds__(256) does.
type boundedKernel struct{ enginetest.MemKernel }

func (boundedKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{MaxThreads: 256} }

// A launch with more threads than its compiled kernel allows makes the spec
// invalid, naming both counts; within the bound, nothing is said.
func TestOverCompiledThreads(t *testing.T) {
	d := &profiler.Dispatch{Name: "k", Group: [3]int{512, 1, 1}}
	err := run.OverCompiledThreads([]profiler.Launch{{Dispatch: d, Kernel: boundedKernel{}}})
	if err == nil || !strings.Contains(err.Error(), "512 threads per group") || !strings.Contains(err.Error(), "allows 256") {
		t.Fatalf("512 threads on a kernel bounded at 256: %v", err)
	}
	d.Group = [3]int{256, 1, 1}
	if err := run.OverCompiledThreads([]profiler.Launch{{Dispatch: d, Kernel: boundedKernel{}}, {Dispatch: &profiler.Dispatch{Name: "zero", Zero: "X"}}}); err != nil {
		t.Errorf("256 threads within the bound: %v", err)
	}
}
