package kernels_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

var bwdMetalDev = profiler.DeviceInfo{Backend: "metal", Name: "Apple M3 Max (test)", TGMPerGroup: 32768, TGMPerUnit: 32768, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 32}

// bwdMetalSpecs cover every program of the three families (the masked
// Setup and the cast included).
var bwdMetalSpecs = []profiler.Spec{
	{Kernel: "attn_bwd_atomic", DType: profiler.F16, Knobs: map[string]int{"BQ": 16, "BK": 16, "WM": 1, "WN": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true, "mask": true}},
	{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BQ_dq": 16, "BK_dq": 16, "WM_dq": 2, "BQ_dkv": 16, "BK_dkv": 16, "WM_dkv": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 40, "Lk": 24, "D": 64}, Flags: map[string]bool{"causal": true, "alias": true}},
	{Kernel: "attn_bwd_unfused", DType: profiler.F32, Knobs: map[string]int{"BM": 16, "BN": 32},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true}},
}

// The embedded Metal sources define each entry point, bind every Arg and
// the scalar struct at the Plan's indices, declare the scalars in order, and
// use every macro the Plan passes.
func TestAttnBwdMetalSourcesMatchPlans(t *testing.T) {
	checked := map[string]bool{}
	for _, s := range bwdMetalSpecs {
		plan, _ := plancheck.Plan(t, s, bwdMetalDev)
		for _, d := range append(plan.Setup, plan.Dispatches...) {
			if d.Zero != "" || d.Program.Source == "attn_fwd" {
				continue
			}
			key := d.Program.Source + fmt.Sprint(d.Program.Macros)
			if checked[key] {
				continue
			}
			checked[key] = true
			src := plancheck.MetalSource(t, d)
			// The TGM items the plan lists are the arrays the kernel declares.
			for _, it := range d.TGM {
				if !strings.Contains(src, it.Name) {
					t.Errorf("%s.metal never declares %s (a TGM item of the plan)", d.Program.Source, it.Name)
				}
			}
		}
	}
	if len(checked) < 9 {
		t.Errorf("checked %d programs, want every backward program", len(checked))
	}
}

// The Metal kernels' text, compiled with g++ against the MSL emulation and
// run through the real Runner against the float64 reference. It proves the
// tile logic, masks, buffer order, scalar layout, atomics and aliasing; it
// cannot prove that the Metal compiler accepts the text.
func TestAttnBwdMetalKernelsOnCPUEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the emulation compiles a dozen kernels with g++")
	}
	eb := mslemu.New(t, "../metal/testdata/mslemu", bwdMetalDev)
	opt := mslemu.Options()
	opt.Hot = true
	opt.MaxRows = 4096
	r := run.NewRunner(eb)
	for _, s := range bwdMetalSpecs {
		t.Run(s.Kernel, func(t *testing.T) {
			mslemu.Check(t, r, s, opt)
		})
	}
}

var _ = kernels.AttnBwdReference
