package all_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// The kernels' threadgroup declarations must add up to the Plans' TGM
// items, name by name, over the knob space (the CUDA gated_delta kernel
// carves one dynamic buffer and is checked by its offsets' comments only).
func TestSeedKernelsDeclareThePlansTGM(t *testing.T) {
	type combo struct {
		kernel string
		dt     profiler.DType
		set    map[string]int
	}
	var combos []combo
	for _, tile := range []int{16, 32, 64} {
		combos = append(combos, combo{"transpose", profiler.F16, map[string]int{"TILE": tile, "WG": tile * 4}})
	}
	for _, wg := range kit.WGValues {
		combos = append(combos,
			combo{"rmsnorm_bwd", profiler.BF16, map[string]int{"WG": wg, "D": 512, "RB": 2, "RPG": 4}},
			combo{"cross_entropy", profiler.F32, map[string]int{"WG": wg, "VEC": 4}})
	}
	for _, tpg := range []int{32, 96, 512, 1024} {
		for _, d := range []int{64, 128, 256} {
			combos = append(combos, combo{"sdpa_multi", profiler.BF16, map[string]int{"TPG": tpg, "D": d}})
		}
	}
	for _, bv := range []int{8, 16, 32, 64} {
		for _, bt := range []int{16, 32, 64} {
			combos = append(combos, combo{"gated_delta_chunk", profiler.BF16, map[string]int{"BV": bv, "BT": bt, "K": 64}})
		}
	}
	wide := profiler.DeviceInfo{Backend: "cpu", Name: "wide", TGMPerGroup: 1 << 20, MaxThreadsPerGroup: 1024}
	for _, c := range combos {
		s := profiler.Spec{Kernel: c.kernel, DType: c.dt, Knobs: map[string]int{}, Dims: map[string]int{}}
		f, _ := profiler.Lookup(c.kernel)
		for k, v := range c.set {
			if err := s.Set(f.Schema(), k, v); err != nil {
				t.Fatal(err)
			}
		}
		p := kittest.PlanOf(t, s, wide)
		d := p.Dispatches[len(p.Dispatches)-1]
		macros := map[string]int{}
		for _, m := range d.Program.Macros {
			macros[m.Name], _ = strconv.Atoi(m.Value)
		}
		for _, lang := range []string{"metal", "cuda"} {
			if lang == "cuda" && c.kernel == "gated_delta_chunk" {
				continue
			}
			ext := map[string]string{"metal": ".metal", "cuda": ".cu"}[lang]
			src, err := shaders.Source(lang, d.Program.Source, ext)
			if err != nil {
				t.Fatal(err)
			}
			got := plancheck.DeclaredTGM(t, src, macros, c.dt.Size())
			if len(got) != len(d.TGM) {
				t.Errorf("%s%s %v: declares %v, plan has %v", d.Program.Source, ext, c.set, got, d.TGM)
				continue
			}
			for _, it := range d.TGM {
				if got[it.Name] != it.Bytes {
					t.Errorf("%s%s %v: %s is %d B in the kernel, %d B in the plan", d.Program.Source, ext, c.set, it.Name, got[it.Name], it.Bytes)
				}
			}
		}
	}
	// The gated_delta CUDA kernel carves S_smem, wk_smem and vn_smem out of
	// one dynamic buffer at these offsets.
	src, _ := shaders.Source("cuda", "gated_delta", ".cu")
	for _, off := range []string{"smem + BV * SLD * 4", "smem + BV * SLD * 4 + BT * WLD * 2"} {
		if !strings.Contains(src, off) {
			t.Errorf("gated_delta.cu no longer carves its buffer at %q: update the plan's TGM items with it", off)
		}
	}
}
