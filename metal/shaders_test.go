package metal

import (
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels" // also registers attn_fwd and softmax_bwd
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

var testDev = DeviceInfo(RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024, HasTimestampSet: true, StageBoundary: true})

// The kernels must be embedded, define the Plan's entry points, bind every
// Arg and the scalar struct at the Plan's buffer indices, and use every
// macro the Plan passes.
func TestMetalSourcesMatchPlans(t *testing.T) {
	specs := []profiler.Spec{
		{Kernel: "attn_fwd", DType: profiler.BF16, Flags: map[string]bool{"causal": true}},
		{Kernel: "softmax_bwd", DType: profiler.F16},
	}
	for _, s := range specs {
		plan, _ := plancheck.Plan(t, s, testDev)
		for _, d := range plan.Dispatches {
			plancheck.MetalSource(t, d)
		}
	}
}

func TestAttnFwdTGMMatchesPlan(t *testing.T) {
	src, err := shaders.Source("metal", "attn_fwd", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		for _, d := range []int{64, 96, 128, 256} {
			for _, bq := range []int{8, 16, 32, 64, 128} {
				for _, bk := range []int{8, 16, 32, 64, 128} {
					for _, wm := range []int{1, 2, 4, 8} {
						for _, wn := range []int{1, 2, 4} {
							if bq%(8*wm) != 0 || bk%(8*wn) != 0 || d%(8*wn) != 0 {
								continue
							}
							got := plancheck.DeclaredTGM(t, src, map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn, "D": d, "CAUSAL": 0, "DTYPE": 0}, dt.Size())
							items := kernels.AttnFwdTGM(bq, bk, wn, d, dt)
							if len(got) != len(items) {
								t.Fatalf("BQ=%d BK=%d WN=%d D=%d %s: kernel declares %v, plan has %v", bq, bk, wn, d, dt, got, items)
							}
							for _, it := range items {
								if got[it.Name] != it.Bytes {
									t.Fatalf("BQ=%d BK=%d WM=%d WN=%d D=%d %s: %s is %d B in the kernel, %d B in the plan", bq, bk, wm, wn, d, dt, it.Name, got[it.Name], it.Bytes)
								}
							}
							n++
						}
					}
				}
			}
		}
		if testing.Short() {
			break
		}
	}
	if n == 0 {
		t.Fatal("no combinations checked")
	}
}

func TestSoftmaxBwdTGMMatchesPlan(t *testing.T) {
	src, err := shaders.Source("metal", "softmax_bwd", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	for _, wg := range []int{32, 64, 128, 256, 512, 1024} {
		got := plancheck.DeclaredTGM(t, src, map[string]int{"WG": wg, "DTYPE": 1}, 2)
		items := kernels.SoftmaxBwdTGM(wg)
		if len(got) != 1 || got["red_smem"] != items[0].Bytes {
			t.Errorf("WG=%d: kernel %v, plan %v", wg, got, items)
		}
	}
}
