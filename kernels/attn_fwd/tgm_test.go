package attnfwd

import (
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// The Metal kernel declares exactly the Plan's TGM items over the knob space.
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
							items := AttnFwdTGM(bq, bk, wn, d, dt)
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
