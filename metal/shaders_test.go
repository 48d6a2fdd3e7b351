package metal

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels" // also registers attn_fwd and softmax_bwd
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

var testDev = DeviceInfo(RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024, HasTimestampSet: true, StageBoundary: true})

// The kernels must be embedded, define the Plan's entry points, bind every
// Arg and the scalar struct at the Plan's buffer indices, and use every
// macro the Plan passes.
func TestMetalSourcesMatchPlans(t *testing.T) {
	specs := []profiler.Spec{
		{Kernel: "attn_fwd", DType: profiler.BF16, Flags: map[string]bool{"causal": true}},
		{Kernel: "softmax_bwd", DType: profiler.F16},
	}
	for _, s := range specs {
		plan, _ := plancheck.Plan(t, s, testDev)
		for _, d := range plan.Dispatches {
			plancheck.MetalSource(t, d)
		}
	}
}

// staticTGM evaluates the kernel's threadgroup array declarations for a set
// of macro values: the bytes Metal's staticThreadgroupMemoryLength reports,
// computed from the source text.
func staticTGM(t *testing.T, src string, macros map[string]int, elemSize int) map[string]int {
	t.Helper()
	defs := map[string]string{}
	defRE := regexp.MustCompile(`^#define (\w+) (\(.*?\))\s*(//.*)?$`)
	arrRE := regexp.MustCompile(`^\s*threadgroup (\w+) (\w+)\[([^\]]+)\];`)
	identRE := regexp.MustCompile(`[A-Za-z_]\w*`)
	expand := func(e string) string {
		for range 4 {
			e = identRE.ReplaceAllStringFunc(e, func(id string) string {
				if d, ok := defs[id]; ok {
					return d
				}
				return id
			})
		}
		return e
	}
	eval := func(e string) int {
		// profiler.Expr answers comparisons: binary-search the value.
		x, err := profiler.ParseExpr("(" + expand(e) + ") <= V")
		if err != nil {
			t.Fatalf("parse %q: %v", e, err)
		}
		vals := map[string]int{}
		for k, v := range macros {
			vals[k] = v
		}
		lo, hi := 0, 1<<24
		for lo < hi {
			vals["V"] = (lo + hi) / 2
			ok, err := x.Eval(vals)
			if err != nil {
				t.Fatalf("eval %q: %v", e, err)
			}
			if ok {
				hi = vals["V"]
			} else {
				lo = vals["V"] + 1
			}
		}
		return lo
	}
	cond := func(e string) bool {
		x, err := profiler.ParseExpr(expand(e))
		if err != nil {
			t.Fatalf("parse #if %q: %v", e, err)
		}
		ok, err := x.Eval(macros)
		if err != nil {
			t.Fatalf("eval #if %q: %v", e, err)
		}
		return ok
	}
	out := map[string]int{}
	var active []bool
	on := func() bool {
		for _, a := range active {
			if !a {
				return false
			}
		}
		return true
	}
	for _, l := range strings.Split(src, "\n") {
		tl := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(tl, "#if "):
			active = append(active, cond(strings.TrimPrefix(tl, "#if ")))
		case strings.HasPrefix(tl, "#ifndef"), strings.HasPrefix(tl, "#ifdef"):
			active = append(active, true)
		case tl == "#else":
			active[len(active)-1] = !active[len(active)-1]
		case tl == "#endif":
			active = active[:len(active)-1]
		case on():
			if m := defRE.FindStringSubmatch(tl); m != nil {
				defs[m[1]] = m[2]
			} else if m := arrRE.FindStringSubmatch(l); m != nil {
				sz := map[string]int{"mltop_t": elemSize, "float": 4}[m[1]]
				if sz == 0 {
					t.Fatalf("threadgroup array of unknown type %s", m[1])
				}
				out[m[2]] = sz * eval(m[3])
			}
		}
	}
	return out
}

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
							got := staticTGM(t, src, map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn, "D": d, "CAUSAL": 0, "DTYPE": 0}, dt.Size())
							items := kernels.AttnFwdTGM(bq, bk, wn, d, dt)
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

func TestSoftmaxBwdTGMMatchesPlan(t *testing.T) {
	src, err := shaders.Source("metal", "softmax_bwd", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	for _, wg := range []int{32, 64, 128, 256, 512, 1024} {
		got := staticTGM(t, src, map[string]int{"WG": wg, "DTYPE": 1}, 2)
		items := kernels.SoftmaxBwdTGM(wg)
		if len(got) != 1 || got["red_smem"] != items[0].Bytes {
			t.Errorf("WG=%d: kernel %v, plan %v", wg, got, items)
		}
	}
}
