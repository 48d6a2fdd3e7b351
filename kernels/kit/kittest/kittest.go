// Package kittest is what the families' tests share: fixed devices to plan
// against, spec builders, rule tables, and short CPU runs through the real
// runner. Only tests import it (it imports the CPU backend, which family
// code never does).
package kittest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// CUDA devices have these features (sm_90a); Metal devices simdgroup matrices.
var (
	hopperFeatures = []profiler.Feature{profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync, profiler.FeatureClusters, profiler.FeatureCUDAKernels}
	cudaMaxGrid    = [3]int{1<<31 - 1, 65535, 65535}
	appleFeatures  = []profiler.Feature{profiler.FeatureSimdgroupMatrix}
)

// Fixed devices the families' tests plan against. Their names appear in
// error messages the tests match.
var (
	CPU   = profiler.DeviceInfo{Backend: "cpu", Name: "cpu", TGMPerGroup: 64 << 10, MaxThreadsPerGroup: 1024}
	M2    = profiler.DeviceInfo{Backend: "metal", Name: "M2", TGMPerGroup: 32 << 10, MaxThreadsPerGroup: 1024, Features: appleFeatures}
	Small = profiler.DeviceInfo{Backend: "metal", Name: "small", TGMPerGroup: 32 << 10, MaxThreadsPerGroup: 512, Features: appleFeatures}
	// H100 with only the per-group limits set.
	H100 = profiler.DeviceInfo{Backend: "cuda", Name: "H100", Arch: "sm_90a", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10, MaxThreadsPerGroup: 1024, Features: hopperFeatures, MaxGrid: cudaMaxGrid}
	// H100Full has the per-SM limits too (occupancy-minded tests).
	H100Full = profiler.DeviceInfo{Backend: "cuda", Name: "H100", Arch: "sm_90a", TGMPerGroup: 49152, TGMPerGroupOptIn: 232448, TGMPerUnit: 233472, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, SIMDWidth: 32, Features: hopperFeatures, MaxGrid: cudaMaxGrid}
	M3Max    = profiler.DeviceInfo{Backend: "metal", Name: "Apple M3 Max", TGMPerGroup: 32768, TGMPerUnit: 32768, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 32, Features: appleFeatures}
	// A100 is a CUDA device before clusters (sm_80).
	A100 = profiler.DeviceInfo{Backend: "cuda", Name: "A100", Arch: "sm_80", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 163 << 10, MaxThreadsPerGroup: 1024,
		Features: []profiler.Feature{profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync, profiler.FeatureCUDAKernels}, MaxGrid: cudaMaxGrid}
)

// Named returns d renamed (for messages that name the device).
func Named(d profiler.DeviceInfo, name string) profiler.DeviceInfo {
	d.Name = name
	return d
}

// Spec is f's spec with set applied over the defaults (and causal where
// the family has the flag).
func Spec(f profiler.Family, dt profiler.DType, set map[string]int, causal bool) profiler.Spec {
	s := profiler.Spec{Kernel: f.Name(), DType: dt, Flags: map[string]bool{}}
	sc := f.Schema()
	for k, v := range set {
		if err := s.Set(sc, k, v); err != nil {
			panic(err)
		}
	}
	if _, ok := sc.Flag("causal"); ok {
		s.Flags["causal"] = causal
	}
	return s.WithDefaults(sc)
}

// RuleCase is one spec and the error it must get ("" for none).
type RuleCase struct {
	Name  string
	DT    profiler.DType
	Set   map[string]int
	Flags map[string]bool
	Dev   profiler.DeviceInfo
	Want  string // substring of the error; "" means valid
}

// CheckRules resolves each case against the schema and the family's rules.
func CheckRules(t *testing.T, kernel string, cases []RuleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := profiler.Spec{Kernel: kernel, DType: c.DT, Dims: map[string]int{}, Knobs: map[string]int{}, Flags: c.Flags}
			f, err := profiler.Lookup(kernel)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.Set {
				if err := s.Set(f.Schema(), k, v); err != nil {
					t.Fatal(err)
				}
			}
			_, full, err := profiler.Resolve(s, c.Dev)
			switch {
			case c.Want == "" && err != nil:
				t.Fatalf("%v: unexpected error %v", full, err)
			case c.Want != "" && err == nil:
				t.Fatalf("%v: valid, want an error containing %q", full, c.Want)
			case c.Want != "" && !strings.Contains(err.Error(), c.Want):
				t.Fatalf("%v: error %q does not contain %q", full, err, c.Want)
			}
			if err == nil {
				if _, err := f.Plan(full, c.Dev); err != nil {
					t.Fatalf("valid spec failed to plan: %v", err)
				}
			}
		})
	}
}

// PlanOf resolves and plans s, failing the test on an error.
func PlanOf(t *testing.T, s profiler.Spec, dev profiler.DeviceInfo) *profiler.Plan {
	t.Helper()
	p, _ := plancheck.Plan(t, s, dev)
	return p
}

// NewBackend is a CPU backend.
func NewBackend(t testing.TB) profiler.Backend {
	t.Helper()
	b, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Remap sends every compile to another CPU kernel: the family's plan stays
// the same, only the code differs.
type Remap struct {
	profiler.Backend
	To string
}

// Compile compiles the kernel named To instead of p.Source.
func (r Remap) Compile(p profiler.Program) (profiler.Kernel, error) {
	p.Source = r.To
	return r.Backend.Compile(p)
}

// Quick is a short, hot measurement that checks every row of a small shape.
func Quick() profiler.Options {
	o := profiler.DefaultOptions()
	o.Cache = profiler.CacheHot
	o.Warmup = 0.001
	o.MaxRows = 4096
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 2, MinTime: 1e-4, MaxTime: 0.05}
	return o
}

// TrainOpts is a short, hot measurement that checks every row.
func TrainOpts() profiler.Options {
	o := profiler.DefaultOptions()
	o.Cache = profiler.CacheHot
	o.Warmup = 0.001
	o.MaxRows = 1 << 16
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 2, MinTime: 1e-4, MaxTime: 0.02}
	return o
}

// TrainCase is one spec expected to run ok, for each of its dtypes.
type TrainCase struct {
	Name   string
	DTypes []profiler.DType
	Knobs  map[string]int
	Dims   map[string]int
	Flags  map[string]bool
}

// RunTrainCases runs each case for each of its dtypes on the CPU and wants
// ok with every row checked, a positive time, and GB/s.
func RunTrainCases(t *testing.T, kernel string, cases []TrainCase) {
	t.Helper()
	r := run.NewRunner(NewBackend(t))
	for _, c := range cases {
		for _, dt := range c.DTypes {
			t.Run(fmt.Sprintf("%s/%s", c.Name, dt), func(t *testing.T) {
				s := profiler.Spec{Kernel: kernel, DType: dt, Knobs: c.Knobs, Dims: c.Dims, Flags: c.Flags}
				res := r.Run(context.Background(), s, TrainOpts(), nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("status %s: %s", res.Status, res.Error)
				}
				v := res.Verdict
				if v.Checked == 0 || v.RowsChecked != v.RowsTotal {
					t.Errorf("checked %d elements over %d of %d rows; want every row of a small shape", v.Checked, v.RowsChecked, v.RowsTotal)
				}
				if res.Stats.N < 1 || res.Stats.Median <= 0 || res.GBps <= 0 {
					t.Errorf("timing: n=%d median %.0f ns, %g GB/s", res.Stats.N, res.Stats.Median, res.GBps)
				}
			})
		}
	}
}

// WantMismatch runs s with the family's code replaced by the broken CPU
// kernel and wants a mismatch with mismatching elements.
func WantMismatch(t *testing.T, broken string, s profiler.Spec) profiler.Result {
	t.Helper()
	r := run.NewRunner(Remap{NewBackend(t), broken})
	res := r.Run(context.Background(), s, TrainOpts(), nil)
	if res.Status != profiler.StatusMismatch {
		t.Fatalf("broken kernel %s: status %s (%s), want mismatch", broken, res.Status, res.Error)
	}
	if res.Verdict == nil || res.Verdict.Mismatches == 0 {
		t.Fatalf("broken kernel %s: verdict %+v, want mismatches", broken, res.Verdict)
	}
	return res
}
