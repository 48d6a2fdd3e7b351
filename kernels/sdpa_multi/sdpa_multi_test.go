package sdpamulti

import (
	"math"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestSDPAMultiRules(t *testing.T) {
	yes := map[string]bool{"causal": true}
	kittest.CheckRules(t, "sdpa_multi", []kittest.RuleCase{
		{Name: "the seed's geometry", DT: profiler.BF16, Set: map[string]int{"TPG": 1024, "D": 128}, Flags: yes, Dev: kittest.H100, Want: ""},
		{Name: "TPG 16 would hang", DT: profiler.BF16, Set: map[string]int{"TPG": 16}, Flags: yes, Dev: kittest.H100, Want: "TPG=16 is less than one warp"},
		{Name: "TPG 1 would hang", DT: profiler.F32, Set: map[string]int{"TPG": 1}, Flags: yes, Dev: kittest.CPU, Want: "never advance"},
		{Name: "TPG 48 is a partial warp", DT: profiler.F16, Set: map[string]int{"TPG": 48}, Flags: yes, Dev: kittest.M2, Want: "TPG=48 is not a multiple of 32"},
		{Name: "TPG above the device", DT: profiler.BF16, Set: map[string]int{"TPG": 1024}, Flags: yes, Dev: kittest.Small, Want: "TPG=1024 exceeds small's 512 threads per group"},
		{Name: "TPG 2048 above any device", DT: profiler.BF16, Set: map[string]int{"TPG": 2048}, Flags: yes, Dev: kittest.H100, Want: "exceeds H100's 1024"},
		{Name: "one warp, D=64", DT: profiler.BF16, Set: map[string]int{"TPG": 32, "D": 64}, Flags: yes, Dev: kittest.M2, Want: ""},
		{Name: "D=256 at 1024 threads fits CUDA", DT: profiler.BF16, Set: map[string]int{"TPG": 1024, "D": 256}, Flags: yes, Dev: kittest.H100, Want: ""},
		{Name: "D=256 at 1024 threads overflows Metal's 32 KB", DT: profiler.BF16, Set: map[string]int{"TPG": 1024, "D": 256}, Flags: yes, Dev: kittest.M2, Want: "TGM 33024 B exceeds"},
		{Name: "GQA must divide", DT: profiler.BF16, Set: map[string]int{"H": 6, "Hkv": 4}, Flags: yes, Dev: kittest.H100, Want: "H=6 must be a multiple of Hkv=4"},
		{Name: "block past the cache", DT: profiler.BF16, Set: map[string]int{"base_kv": 100, "n_query": 30, "kv_stride": 128}, Flags: yes, Dev: kittest.H100, Want: "exceed kv_stride=128"},
	})
}

func TestSDPAMultiPairsAndPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "sdpa_multi", DType: profiler.BF16, Knobs: map[string]int{"TPG": 256},
		Dims: map[string]int{"n_query": 3, "H": 4, "Hkv": 2, "D": 64, "base_kv": 10, "kv_stride": 16}, Flags: map[string]bool{"causal": true}}
	p := kittest.PlanOf(t, s, kittest.H100)
	// Causal: the queries see 11, 12, 13 keys.
	if want := 4.0 * 64 * 4 * (11 + 12 + 13); p.FLOPs != want {
		t.Errorf("FLOPs %g, want %g", p.FLOPs, want)
	}
	d := p.Dispatches[0]
	if d.Grid != [3]int{4, 3, 1} || d.TGMBytes() != 8*4+8*4+8*64*4 {
		t.Errorf("grid %v TGM %d", d.Grid, d.TGMBytes())
	}
	s.Flags["causal"] = false
	if p := kittest.PlanOf(t, s, kittest.H100); p.FLOPs != 4*64*4*3*13 {
		t.Errorf("dense FLOPs %g, want every query to see 13 keys", p.FLOPs)
	}
}

// With equal keys the softmax is uniform and O is the mean of the visible
// V rows: query r of a causal block sees base_kv + r + 1 of them.
func TestSDPAMultiReferenceUniform(t *testing.T) {
	a := SDPAMultiShape{NQ: 2, H: 2, Hkv: 1, D: 64, Base: 2, Stride: 5, Causal: true}
	q := make([]float32, a.NQ*a.H*a.D)
	k := make([]float32, a.Stride*a.D)
	v := make([]float32, a.Stride*a.D)
	for j := range a.Stride {
		for d := range a.D {
			v[j*a.D+d] = float32(j)
		}
	}
	o := make([]float64, a.D)
	SDPAMultiRow(a, q, k, v, 1, 1, o) // sees keys 0..3: mean 1.5
	if math.Abs(o[0]-1.5) > 1e-12 || math.Abs(o[63]-1.5) > 1e-12 {
		t.Errorf("O = %v…, want 1.5", o[0])
	}
	SDPAMultiRow(a, q, k, v, 0, 0, o) // keys 0..2: mean 1
	if math.Abs(o[0]-1) > 1e-12 {
		t.Errorf("O = %v, want 1", o[0])
	}
}
