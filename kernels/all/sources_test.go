package all_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// examples walks the registry: every family's example specs.
func examples(t *testing.T) map[string][]profiler.Spec {
	t.Helper()
	out := map[string][]profiler.Spec{}
	for _, f := range profiler.Families(false) {
		ex, ok := f.(kit.Exampler)
		if !ok {
			t.Errorf("family %s has no Examples (kit.Exampler): give it small specs that run each of its programs", f.Name())
			continue
		}
		out[f.Name()] = ex.Examples()
	}
	return out
}

// programs lists the distinct programs (source, entry, macros) of a plan,
// the Setup included.
func programs(p *profiler.Plan, seen map[string]bool) []profiler.Dispatch {
	var out []profiler.Dispatch
	for _, d := range append(append([]profiler.Dispatch(nil), p.Setup...), p.Dispatches...) {
		key := d.Program.Source + d.Program.Entry + fmt.Sprint(d.Program.Macros)
		if d.Zero != "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	return out
}

// The Metal sources cannot be compiled here: for every family's examples,
// each program defines the entry, uses every macro the Plan passes, binds
// every Arg and the scalar struct at the Plan's indices, declares the
// scalars in order, and names every TGM item of the plan.
func TestMetalSourcesMatchPlans(t *testing.T) {
	for fam, specs := range examples(t) {
		t.Run(fam, func(t *testing.T) {
			seen := map[string]bool{}
			for _, s := range specs {
				p, _ := plancheck.Plan(t, s, kittest.M3Max)
				for _, d := range programs(p, seen) {
					src := plancheck.MetalSource(t, d)
					for _, it := range d.TGM {
						if !strings.Contains(src, it.Name) {
							t.Errorf("%s.metal never declares %s (a TGM item of the plan)", d.Program.Source, it.Name)
						}
					}
				}
			}
			if len(seen) == 0 {
				t.Errorf("%s: its examples run no Metal program", fam)
			}
		})
	}
}

// The CUDA sources: an extern "C" entry whose parameters are the Args then
// the Scalars (int / float), every macro used, and every TGM item named,
// for each family's defaults and examples that are valid on an H100.
func TestCUDASourcesMatchPlans(t *testing.T) {
	for fam, specs := range examples(t) {
		t.Run(fam, func(t *testing.T) {
			f, _ := profiler.Lookup(fam)
			seen := map[string]bool{}
			for _, dt := range f.Schema().DTypes {
				specs = append(specs, profiler.Spec{Kernel: fam, DType: dt})
			}
			for _, s := range specs {
				f, full, err := profiler.Resolve(s, kittest.H100)
				if err != nil {
					continue // examples are chosen for Metal; CUDA's rules may refuse some
				}
				p, err := f.Plan(full, kittest.H100)
				if err != nil {
					t.Fatalf("plan %v: %v", full, err)
				}
				for _, d := range programs(p, seen) {
					checkCUDASource(t, d)
				}
			}
			if len(seen) == 0 {
				t.Errorf("%s: neither its defaults nor its examples are valid on an H100", fam)
			}
		})
	}
}

var cudaScalar = map[profiler.ScalarKind]string{profiler.ScalarI32: "int", profiler.ScalarF32: "float"}

func checkCUDASource(t *testing.T, d profiler.Dispatch) {
	t.Helper()
	src, err := shaders.Source("cuda", d.Program.Source, ".cu")
	if err != nil {
		t.Fatal(err)
	}
	hdrs, err := shaders.Headers("cuda")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+` + d.Program.Entry + `\(([^)]*)\)`).FindStringSubmatch(src)
	if m == nil {
		t.Errorf("%s.cu has no extern \"C\" kernel %s", d.Program.Source, d.Program.Entry)
		return
	}
	params := strings.Split(m[1], ",")
	if len(params) != len(d.Args)+len(d.Scalars) {
		t.Errorf("%s.cu %s: %d parameters, plan passes %d buffers and %d scalars", d.Program.Source, d.Program.Entry, len(params), len(d.Args), len(d.Scalars))
		return
	}
	for i, sc := range d.Scalars {
		f := strings.Fields(params[len(d.Args)+i])
		if len(f) != 2 || f[0] != cudaScalar[sc.Kind] {
			t.Errorf("%s.cu scalar %d is %q, the plan passes %s %s", d.Program.Source, i, params[len(d.Args)+i], cudaScalar[sc.Kind], sc.Name)
		}
	}
	for i := range d.Args {
		if !strings.Contains(params[i], "*") {
			t.Errorf("%s.cu parameter %d (%q) is not a pointer but the plan binds buffer %s", d.Program.Source, i, params[i], d.Args[i])
		}
	}
	full := src
	for _, h := range hdrs {
		full += "\n" + h
	}
	for _, mac := range d.Program.Macros {
		body := regexp.MustCompile(`#ifndef `+mac.Name+`\n#define `+mac.Name+` \w+\n#endif`).ReplaceAllString(full, "")
		if !regexp.MustCompile(`\b` + mac.Name + `\b`).MatchString(body) {
			t.Errorf("%s.cu never uses macro %s", d.Program.Source, mac.Name)
		}
	}
	if strings.Contains(src, "extern __shared__") {
		return // one dynamic buffer carved by offsets: the items are not named
	}
	for _, it := range d.TGM {
		if !strings.Contains(src, it.Name) {
			t.Errorf("%s.cu never names TGM item %s", d.Program.Source, it.Name)
		}
	}
}
