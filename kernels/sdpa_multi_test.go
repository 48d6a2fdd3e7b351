package kernels

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestSDPAMultiRules(t *testing.T) {
	yes := map[string]bool{"causal": true}
	checkRules(t, "sdpa_multi", []ruleCase{
		{"the seed's geometry", profiler.BF16, map[string]int{"TPG": 1024, "D": 128}, yes, cudaDev, ""},
		{"TPG 16 would hang", profiler.BF16, map[string]int{"TPG": 16}, yes, cudaDev, "TPG=16 is less than one warp"},
		{"TPG 1 would hang", profiler.F32, map[string]int{"TPG": 1}, yes, cpuDev, "never advance"},
		{"TPG 48 is a partial warp", profiler.F16, map[string]int{"TPG": 48}, yes, metalDev, "TPG=48 is not a multiple of 32"},
		{"TPG above the device", profiler.BF16, map[string]int{"TPG": 1024}, yes, smallDev, "TPG=1024 exceeds small's 512 threads per group"},
		{"TPG 2048 above any device", profiler.BF16, map[string]int{"TPG": 2048}, yes, cudaDev, "exceeds H100's 1024"},
		{"one warp, D=64", profiler.BF16, map[string]int{"TPG": 32, "D": 64}, yes, metalDev, ""},
		{"D=256 at 1024 threads fits CUDA", profiler.BF16, map[string]int{"TPG": 1024, "D": 256}, yes, cudaDev, ""},
		{"D=256 at 1024 threads overflows Metal's 32 KB", profiler.BF16, map[string]int{"TPG": 1024, "D": 256}, yes, metalDev, "TGM 33024 B exceeds"},
		{"GQA must divide", profiler.BF16, map[string]int{"H": 6, "Hkv": 4}, yes, cudaDev, "H=6 must be a multiple of Hkv=4"},
		{"block past the cache", profiler.BF16, map[string]int{"base_kv": 100, "n_query": 30, "kv_stride": 128}, yes, cudaDev, "exceed kv_stride=128"},
	})
}

func TestSDPAMultiPairsAndPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "sdpa_multi", DType: profiler.BF16, Knobs: map[string]int{"TPG": 256},
		Dims: map[string]int{"n_query": 3, "H": 4, "Hkv": 2, "D": 64, "base_kv": 10, "kv_stride": 16}, Flags: map[string]bool{"causal": true}}
	p := planOf(t, s, cudaDev)
	// Causal: the queries see 11, 12, 13 keys.
	if want := 4.0 * 64 * 4 * (11 + 12 + 13); p.FLOPs != want {
		t.Errorf("FLOPs %g, want %g", p.FLOPs, want)
	}
	d := p.Dispatches[0]
	if d.Grid != [3]int{4, 3, 1} || d.TGMBytes() != 8*4+8*4+8*64*4 {
		t.Errorf("grid %v TGM %d", d.Grid, d.TGMBytes())
	}
	s.Flags["causal"] = false
	if p := planOf(t, s, cudaDev); p.FLOPs != 4*64*4*3*13 {
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
