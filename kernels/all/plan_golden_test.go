package all_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
)

var update = flag.Bool("update", false, "rewrite testdata/plans.golden from the current families")

// The fixed devices the golden plans against. They stand for the three
// backends; their numbers are those of real parts but need not match any
// one machine exactly: what matters is that they never change.
var (
	goldenCPU = profiler.DeviceInfo{Backend: "cpu", Name: "cpu (golden)", Vendor: "test", Arch: "amd64",
		Units: 8, UnitName: "core", TGMPerGroup: 64 << 10, TGMPerUnit: 64 << 10,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 1}
	goldenH100 = profiler.DeviceInfo{Backend: "cuda", Name: "H100 (golden)", Vendor: "NVIDIA", Arch: "sm_90a",
		Units: 132, UnitName: "SM", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10, TGMPerUnit: 228 << 10,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32, RegistersPerUnit: 65536, SIMDWidth: 32,
		MaxGrid:  [3]int{1<<31 - 1, 65535, 65535},
		Features: []profiler.Feature{profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync, profiler.FeatureClusters, profiler.FeatureCUDAKernels}}
	goldenM2 = profiler.DeviceInfo{Backend: "metal", Name: "Apple M2 (golden)", Vendor: "Apple", Arch: "applegpu_g14g",
		Units: 10, UnitName: "core", TGMPerGroup: 32 << 10, TGMPerUnit: 64 << 10,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1536, SIMDWidth: 32,
		Features: []profiler.Feature{profiler.FeatureSimdgroupMatrix}}
	goldenDevices = []profiler.DeviceInfo{goldenCPU, goldenH100, goldenM2}
)

// goldenShapes gives three shapes per family: the defaults, every dim at
// the allowed value nearest below half its default, and every dim at the
// allowed value nearest above twice its default.
func goldenShapes(sc profiler.Schema) []map[string]int {
	half, double := map[string]int{}, map[string]int{}
	for _, p := range sc.Dims {
		ch := p.Choices()
		h, d := ch[0], ch[len(ch)-1]
		for _, v := range ch {
			if v <= p.Default/2 {
				h = v
			}
		}
		for i := len(ch) - 1; i >= 0; i-- {
			if ch[i] >= 2*p.Default {
				d = ch[i]
			}
		}
		half[p.Name], double[p.Name] = h, d
	}
	return []map[string]int{{}, half, double}
}

// describePlan renders everything a plan decides, one fact a line.
func describePlan(b *strings.Builder, p *profiler.Plan) {
	fmt.Fprintf(b, "    flops %.0f bytes %.0f memory %d\n", p.FLOPs, p.Bytes, p.MemoryBytes())
	for _, buf := range p.Buffers {
		fmt.Fprintf(b, "    buffer %s %s %s elems=%d init=%s scale=%g lo=%g hi=%g\n", buf.Name, buf.Role, buf.Type, buf.Elems, buf.Init, buf.Scale, buf.Lo, buf.Hi)
	}
	for i, group := range [][]profiler.Dispatch{p.Setup, p.Dispatches} {
		kind := [...]string{"setup", "dispatch"}[i]
		for _, d := range group {
			if d.Zero != "" {
				fmt.Fprintf(b, "    %s %s zero %s\n", kind, d.Name, d.Zero)
				continue
			}
			macros := make([]string, len(d.Program.Macros))
			for j, m := range d.Program.Macros {
				macros[j] = m.Name + "=" + m.Value
			}
			fmt.Fprintf(b, "    %s %s %s:%s grid=%v group=%v dyn_tgm=%d args=%s\n", kind, d.Name, d.Program.Source, d.Program.Entry, d.Grid, d.Group, d.DynamicTGM, strings.Join(d.Args, ","))
			fmt.Fprintf(b, "      macros %s\n", strings.Join(macros, " "))
			for _, s := range d.Scalars {
				fmt.Fprintf(b, "      scalar %s %s i=%d f=%g\n", s.Name, s.Kind, s.I, s.F)
			}
			for _, it := range d.TGM {
				fmt.Fprintf(b, "      tgm %s %d %s\n", it.Name, it.Bytes, it.Note)
			}
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(b, "    note %s\n", n)
	}
}

// TestPlanGolden records every family's Plan at three shapes per dtype on
// three fixed devices, so that moving code around provably changes no plan
// (go test ./kernels/all -run PlanGolden -update rewrites it, on purpose).
// Besides the snapshot it asserts what must hold of every plan.
func TestPlanGolden(t *testing.T) {
	var b strings.Builder
	fams := profiler.Families(false)
	if len(fams) < 11 {
		t.Fatalf("%d families registered, want at least the 11 built-in ones", len(fams))
	}
	for _, f := range fams {
		sc := f.Schema()
		planned := 0
		for _, dt := range sc.DTypes {
			for si, dims := range goldenShapes(sc) {
				s := profiler.Spec{Kernel: f.Name(), DType: dt, Dims: dims}
				for _, dev := range goldenDevices {
					_, full, err := profiler.Resolve(s, dev)
					fmt.Fprintf(&b, "%s %s shape%d %s: %s\n", f.Name(), dt, si, dev.Backend, full.String())
					if err != nil {
						fmt.Fprintf(&b, "    invalid: %v\n", err)
						continue
					}
					p, err := f.Plan(full, dev)
					if err != nil {
						fmt.Fprintf(&b, "    plan error: %v\n", err)
						continue
					}
					planned++
					checkPlan(t, f.Name()+" "+full.String()+" on "+dev.Backend, p, dev)
					describePlan(&b, p)
				}
			}
		}
		if planned == 0 {
			t.Errorf("%s: no shape of any dtype planned on any golden device", f.Name())
		}
	}
	compareGolden(t, "plans.golden", b.String())
}

// checkPlan asserts what every plan must satisfy, whatever the golden says.
func checkPlan(t *testing.T, what string, p *profiler.Plan, dev profiler.DeviceInfo) {
	t.Helper()
	if len(p.Dispatches) == 0 {
		t.Errorf("%s: no dispatch", what)
	}
	if p.Bytes <= 0 {
		t.Errorf("%s: bytes moved %g, want > 0", what, p.Bytes)
	}
	if p.FLOPs < 0 {
		t.Errorf("%s: FLOPs %g < 0", what, p.FLOPs)
	}
	limit := max(dev.TGMPerGroup, dev.TGMPerGroupOptIn)
	names := map[string]bool{}
	for _, buf := range p.Buffers {
		if names[buf.Name] {
			t.Errorf("%s: buffer %s declared twice", what, buf.Name)
		}
		names[buf.Name] = true
		if buf.Elems <= 0 {
			t.Errorf("%s: buffer %s has %d elements", what, buf.Name, buf.Elems)
		}
	}
	hasOut := slices.ContainsFunc(p.Buffers, func(b profiler.BufferSpec) bool { return b.Role == profiler.Out })
	if !hasOut {
		t.Errorf("%s: no output buffer", what)
	}
	for _, d := range append(slices.Clone(p.Setup), p.Dispatches...) {
		if d.Zero != "" {
			if !names[d.Zero] {
				t.Errorf("%s: %s zeroes unknown buffer %s", what, d.Name, d.Zero)
			}
			continue
		}
		if d.Program.Source == "" || d.Program.Entry == "" {
			t.Errorf("%s: dispatch %s has no program source/entry", what, d.Name)
		}
		if d.Groups() <= 0 || d.Threads() <= 0 {
			t.Errorf("%s: dispatch %s grid %v group %v is empty", what, d.Name, d.Grid, d.Group)
		}
		if d.Threads() > dev.MaxThreadsPerGroup {
			t.Errorf("%s: dispatch %s has %d threads, device allows %d", what, d.Name, d.Threads(), dev.MaxThreadsPerGroup)
		}
		if tb := d.TGMBytes(); tb > limit {
			t.Errorf("%s: dispatch %s's TGM items sum to %d B, device allows %d", what, d.Name, tb, limit)
		}
		for _, a := range d.Args {
			if !names[a] {
				t.Errorf("%s: dispatch %s binds unknown buffer %s", what, d.Name, a)
			}
		}
	}
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./kernels/all -update to create it)", err)
	}
	if string(want) == got {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s differs from the families at line %d:\n golden: %s\n    now: %s\n(if the change is deliberate: go test ./kernels/all -update, and say why in the commit)", path, i+1, w, g)
		}
	}
}
