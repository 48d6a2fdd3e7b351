package all_test

import (
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

// Every family's defaults are valid, and plan, for every dtype it offers on
// a CPU, a CUDA and a Metal device: `mltop run KERNEL --dtype D` with
// nothing set must run anywhere.
func TestDefaultsValidForEveryDType(t *testing.T) {
	for _, f := range profiler.Families(false) {
		for _, dt := range f.Schema().DTypes {
			for _, dev := range []profiler.DeviceInfo{kittest.CPU, kittest.H100, kittest.M2} {
				f, full, err := profiler.Resolve(profiler.Spec{Kernel: f.Name(), DType: dt}, dev)
				if err != nil {
					t.Errorf("%s %s defaults on %s: %v", f.Name(), dt, dev.Backend, err)
					continue
				}
				if _, err := f.Plan(full, dev); err != nil {
					t.Errorf("%s %s defaults on %s: plan: %v", f.Name(), dt, dev.Backend, err)
				}
			}
		}
	}
}

// Setting H alone gives Hkv = H (the default Hkv would make H=2 invalid),
// through the schema, so the CLI, YAML sweeps and the TUI all get it.
func TestHkvFollowsH(t *testing.T) {
	for _, kernel := range []string{"attn_fwd", "attn_bwd", "sdpa_multi"} {
		f, err := profiler.Lookup(kernel)
		if err != nil {
			t.Fatal(err)
		}
		sc := f.Schema()
		s := profiler.Spec{Kernel: kernel}
		if err := s.Set(sc, "H", 2); err != nil {
			t.Fatal(err)
		}
		_, full, err := profiler.Resolve(s, kittest.CPU)
		if err != nil || full.Dims["Hkv"] != 2 {
			t.Errorf("%s --set H=2: Hkv=%d, %v; want Hkv=2 and valid", kernel, full.Dims["Hkv"], err)
		}
		// An explicit Hkv stays.
		gqa := profiler.Spec{Kernel: kernel, Dims: map[string]int{"H": 8, "Hkv": 2}}.WithDefaults(sc)
		if gqa.Dims["Hkv"] != 2 {
			t.Errorf("%s H=8 Hkv=2: Hkv became %d", kernel, gqa.Dims["Hkv"])
		}
		// Stepping H on a full spec moves a tied Hkv, not an untied one.
		tied := profiler.Spec{Kernel: kernel, Dims: map[string]int{"H": 8, "Hkv": 8}}.WithDefaults(sc)
		_ = tied.Set(sc, "H", 16)
		if tied.Dims["Hkv"] != 16 {
			t.Errorf("%s: H 8→16 with Hkv=8 tied: Hkv=%d, want 16", kernel, tied.Dims["Hkv"])
		}
		_ = gqa.Set(sc, "H", 16)
		if gqa.Dims["Hkv"] != 2 {
			t.Errorf("%s: H 8→16 with Hkv=2: Hkv=%d, want it kept", kernel, gqa.Dims["Hkv"])
		}
	}
	f, _ := profiler.Lookup("gated_delta_chunk")
	s := profiler.Spec{Kernel: "gated_delta_chunk", Dims: map[string]int{"H": 4}}.WithDefaults(f.Schema())
	if s.Dims["Hg"] != 4 {
		t.Errorf("gated_delta_chunk H=4 alone: Hg=%d, want 4", s.Dims["Hg"])
	}
}

// A dtype-dependent default: f32 takes VEC=4 where f16/bf16 take 8.
func TestDefaultsFollowTheDType(t *testing.T) {
	for _, kernel := range []string{"cross_entropy", "rmsnorm_bwd"} {
		f, _ := profiler.Lookup(kernel)
		for dt, want := range map[profiler.DType]int{profiler.F32: 4, profiler.F16: 8, profiler.BF16: 8} {
			s := profiler.Spec{Kernel: kernel, DType: dt}.WithDefaults(f.Schema())
			if s.Knobs["VEC"] != want {
				t.Errorf("%s %s: default VEC=%d, want %d", kernel, dt, s.Knobs["VEC"], want)
			}
		}
	}
}
