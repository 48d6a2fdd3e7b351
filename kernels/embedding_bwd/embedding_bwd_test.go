package embeddingbwd

import (
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestEmbeddingBwdRules(t *testing.T) {
	kittest.CheckRules(t, "embedding_bwd", []kittest.RuleCase{
		{Name: "defaults", DT: profiler.BF16, Set: nil, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "D not a multiple of VEC", DT: profiler.BF16, Set: map[string]int{"D": 30, "VEC": 4}, Flags: nil, Dev: kittest.CPU, Want: "D=30 must be a multiple of VEC=4"},
		{Name: "f32 VEC=8", DT: profiler.F32, Set: map[string]int{"VEC": 8}, Flags: nil, Dev: kittest.CPU, Want: "32 bytes"},
		{Name: "table too large", DT: profiler.F32, Set: map[string]int{"vocab": 1 << 20, "D": 4096, "VEC": 4}, Flags: nil, Dev: kittest.H100, Want: "dW would hold"},
		{Name: "gather", DT: profiler.BF16, Set: map[string]int{"GATHER": 1, "WG": 512}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "gather on the CPU", DT: profiler.BF16, Set: map[string]int{"GATHER": 1}, Flags: nil, Dev: kittest.CPU, Want: "set GATHER=0 on cpu"},
		{Name: "gather links over the device", DT: profiler.BF16, Set: map[string]int{"GATHER": 1, "WG": 128}, Flags: nil, Dev: profiler.DeviceInfo{Backend: "cuda", Name: "small", TGMPerGroup: 48 << 10, MaxThreadsPerGroup: 128, Features: kittest.A100.Features}, Want: "linking the tokens needs 256 threads"},
	})
}

func TestEmbeddingBwdReferenceAndPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "embedding_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 32, "VEC": 1, "TPG": 2}, Dims: map[string]int{"tokens": 3, "vocab": 2, "D": 2}}
	// Tokens 0 and 2 hit row 1, token 1 hits row 0.
	ref, err := EmbeddingBwd{}.Reference(s, profiler.Inputs{"ids": {1, 0, 1}, "dY": {1, 2, 10, 20, 100, 200}}, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 20, 101, 202}
	for i, w := range want {
		if ref.Checks[0].Want[i] != w || ref.Checks[0].Index[i] != i {
			t.Errorf("dW[%d] = %v at %d, want %v", i, ref.Checks[0].Want[i], ref.Checks[0].Index[i], w)
		}
	}
	p := kittest.PlanOf(t, s, kittest.H100)
	if p.Dispatches[0].Zero != "dW" || p.Dispatches[1].Grid != [3]int{2, 1, 1} {
		t.Errorf("dispatches %+v", p.Dispatches)
	}
	if want := 3.0*2*4 + 3*4 + 2*2*4; p.Bytes != want {
		t.Errorf("bytes %g, want %g (dY + ids + the whole table once)", p.Bytes, want)
	}
}

func TestEmbeddingBwdGatherPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "embedding_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256, "VEC": 4, "TPG": 2, "GATHER": 1}, Dims: map[string]int{"tokens": 100, "vocab": 9, "D": 8}}
	p := kittest.PlanOf(t, s, kittest.H100)
	if len(p.Dispatches) != 2 || p.Dispatches[0].Program.Entry != "embedding_link" || p.Dispatches[0].Grid != [3]int{1, 1, 1} || p.Dispatches[1].Grid != [3]int{5, 1, 1} {
		t.Fatalf("dispatches %+v, want the linking then ceil(vocab/TPG) gather groups, no zero fill", p.Dispatches)
	}
	if b, _ := p.Buffer("head"); b.Init != profiler.InitZero {
		t.Errorf("head starts %s, want zero (an empty list)", b.Init)
	}
	for _, b := range []string{"head", "nxt"} {
		if _, ok := p.Buffer(b); !ok {
			t.Errorf("no scratch buffer %s", b)
		}
	}
	if want := 100.0*8*2 + 100*4 + 9*8*4; p.Bytes != want {
		t.Errorf("bytes %g, want %g: the same minimum as the scatter", p.Bytes, want)
	}
}
