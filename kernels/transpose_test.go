package kernels

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// ruleCase is one spec and the error it must get ("" for none).
type ruleCase struct {
	name  string
	dt    profiler.DType
	set   map[string]int
	flags map[string]bool
	dev   profiler.DeviceInfo
	want  string // substring of the error; "" means valid
}

// checkRules resolves each case against the schema and the family's rules.
func checkRules(t *testing.T, kernel string, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := profiler.Spec{Kernel: kernel, DType: c.dt, Dims: map[string]int{}, Knobs: map[string]int{}, Flags: c.flags}
			f, err := profiler.Lookup(kernel)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.set {
				if err := s.Set(f.Schema(), k, v); err != nil {
					t.Fatal(err)
				}
			}
			_, full, err := profiler.Resolve(s, c.dev)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("%v: unexpected error %v", full, err)
			case c.want != "" && err == nil:
				t.Fatalf("%v: valid, want an error containing %q", full, c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("%v: error %q does not contain %q", full, err, c.want)
			}
			if err == nil {
				if _, err := f.Plan(full, c.dev); err != nil {
					t.Fatalf("valid spec failed to plan: %v", err)
				}
			}
		})
	}
}

func planOf(t *testing.T, s profiler.Spec, dev profiler.DeviceInfo) *profiler.Plan {
	t.Helper()
	p, _ := plancheck.Plan(t, s, dev)
	return p
}

// seedSpecs are one spec per family (each dtype it supports) whose plans the
// kernel sources must match.
var seedSpecs = []profiler.Spec{
	{Kernel: "transpose", DType: profiler.BF16},
	{Kernel: "rmsnorm_bwd", DType: profiler.F16},
	{Kernel: "cross_entropy", DType: profiler.F32, Knobs: map[string]int{"VEC": 4}},
	{Kernel: "embedding_bwd", DType: profiler.BF16},
	{Kernel: "sdpa_multi", DType: profiler.BF16},
	{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BV": 16}},
}

// The Metal sources cannot be compiled here: check that each defines the
// entry, uses every macro the Plan passes, binds every Arg and the scalar
// struct at the Plan's indices, and declares the scalars in order.
func TestSeedMetalSourcesMatchPlans(t *testing.T) {
	for _, s := range seedSpecs {
		p := planOf(t, s, metalDev)
		for _, d := range p.Dispatches {
			if d.Zero != "" {
				continue
			}
			src := plancheck.MetalSource(t, d)
			// Every TGM item of the plan is declared by name.
			for _, it := range d.TGM {
				if !regexp.MustCompile(`threadgroup \w+ ` + it.Name + `\[`).MatchString(src) {
					t.Errorf("%s.metal declares no threadgroup array %s", d.Program.Source, it.Name)
				}
			}
		}
	}
}

// The CUDA sources: an extern "C" entry whose parameters are the Args then
// the Scalars (int / float), every macro used, and every TGM item named.
func TestSeedCUDASourcesMatchPlans(t *testing.T) {
	for _, s := range seedSpecs {
		p := planOf(t, s, cudaDev)
		for _, d := range p.Dispatches {
			if d.Zero != "" {
				continue
			}
			src, err := shaders.Source("cuda", d.Program.Source, ".cu")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?s)extern "C" __global__ void(?: __launch_bounds__\(\w+\))?\s+` + d.Program.Entry + `\(([^)]*)\)`).FindStringSubmatch(src)
			if m == nil {
				t.Fatalf("%s.cu has no extern \"C\" kernel %s", d.Program.Source, d.Program.Entry)
			}
			params := strings.Split(m[1], ",")
			if len(params) != len(d.Args)+len(d.Scalars) {
				t.Fatalf("%s.cu: %d parameters, plan passes %d buffers and %d scalars", d.Program.Source, len(params), len(d.Args), len(d.Scalars))
			}
			for i, sc := range d.Scalars {
				f := strings.Fields(params[len(d.Args)+i])
				want := map[profiler.ScalarKind]string{profiler.ScalarI32: "int", profiler.ScalarF32: "float"}[sc.Kind]
				if len(f) != 2 || f[0] != want {
					t.Errorf("%s.cu scalar %d is %q, the plan passes %s %s", d.Program.Source, i, params[len(d.Args)+i], want, sc.Name)
				}
			}
			for i := range d.Args {
				if !strings.Contains(params[i], "*") {
					t.Errorf("%s.cu parameter %d (%q) is not a pointer but the plan binds buffer %s", d.Program.Source, i, params[i], d.Args[i])
				}
			}
			for _, mac := range d.Program.Macros {
				if mac.Name == "DTYPE" {
					continue // mltop_common.cuh picks T by it
				}
				body := regexp.MustCompile(`#ifndef `+mac.Name+`\n#define `+mac.Name+` \w+\n#endif`).ReplaceAllString(src, "")
				if !regexp.MustCompile(`\b` + mac.Name + `\b`).MatchString(body) {
					t.Errorf("%s.cu never uses macro %s", d.Program.Source, mac.Name)
				}
			}
			for _, it := range d.TGM {
				if !strings.Contains(src, it.Name) {
					t.Errorf("%s.cu never names TGM item %s", d.Program.Source, it.Name)
				}
			}
		}
	}
}

func TestTransposeRules(t *testing.T) {
	checkRules(t, "transpose", []ruleCase{
		{"defaults", profiler.BF16, nil, nil, cudaDev, ""},
		{"WG above TILE²/VEC", profiler.F32, map[string]int{"TILE": 16, "WG": 512, "VEC": 2}, nil, cpuDev, "must be a multiple of TILE/VEC=8 and divide TILE·TILE/VEC=128"},
		{"WG below TILE/VEC", profiler.F32, map[string]int{"TILE": 64, "WG": 32, "VEC": 1}, nil, cpuDev, "WG=32 must be a multiple of TILE/VEC=64"},
		{"WG = TILE/VEC", profiler.F32, map[string]int{"TILE": 64, "WG": 32, "VEC": 2}, nil, cpuDev, ""},
		{"f32 VEC=4 is one 16-byte access", profiler.F32, map[string]int{"VEC": 4}, nil, cudaDev, ""},
		{"too many elements", profiler.F16, map[string]int{"rows": 1 << 20, "cols": 1 << 12}, nil, cpuDev, "32-bit indices"},
		{"CUDA grid y", profiler.F16, map[string]int{"TILE": 16, "WG": 128, "rows": 1 << 20, "cols": 16}, nil, cudaDev, "groups along y, more than CUDA's 65535"},
		{"threads over the device", profiler.F32, map[string]int{"TILE": 64, "WG": 1024, "VEC": 1}, nil, smallDev, "exceed the small limit of 512"},
	})
}

func TestTransposePlan(t *testing.T) {
	p := planOf(t, profiler.Spec{Kernel: "transpose", DType: profiler.BF16, Knobs: map[string]int{"TILE": 32, "WG": 256, "VEC": 2}, Dims: map[string]int{"rows": 100, "cols": 70}}, cudaDev)
	d := p.Dispatches[0]
	if d.Grid != [3]int{3, 4, 1} || d.Group != [3]int{256, 1, 1} {
		t.Errorf("grid %v group %v, want (3,4,1) and (256,1,1)", d.Grid, d.Group)
	}
	if d.TGMBytes() != 32*33*4 || p.Bytes != 2*100*70*2 || p.FLOPs != 0 {
		t.Errorf("TGM %d B, bytes %g, flops %g", d.TGMBytes(), p.Bytes, p.FLOPs)
	}
	ref, err := Transpose{}.Reference(profiler.Spec{Kernel: "transpose", Dims: map[string]int{"rows": 2, "cols": 3}}, profiler.Inputs{"X": {1, 2, 3, 4, 5, 6}}, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Y = [[1 4] [2 5] [3 6]].
	if fmt.Sprint(ref.Checks[0].Index, ref.Checks[0].Want) != "[0 1 2 3 4 5] [1 4 2 5 3 6]" {
		t.Errorf("reference %v %v", ref.Checks[0].Index, ref.Checks[0].Want)
	}
}
