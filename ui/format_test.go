package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestStepInt(t *testing.T) {
	choices := []int{8, 16, 32, 64, 128}
	for _, tc := range []struct{ cur, dir, want int }{
		{32, 1, 64}, {32, -1, 16}, {128, 1, 128}, {8, -1, 8},
		{48, 1, 64}, {48, -1, 32}, // a typed value steps to its neighbours
		{1000, -1, 128}, {1, 1, 8},
	} {
		if got := stepInt(choices, tc.cur, tc.dir); got != tc.want {
			t.Errorf("stepInt(%d, %+d) = %d, want %d", tc.cur, tc.dir, got, tc.want)
		}
	}
}

func TestFieldBlames(t *testing.T) {
	for _, tc := range []struct {
		field, msg string
		want       bool
	}{
		{"BQ", "BQ=48 is not allowed: use one of 8, 16", true},
		{"B", "BQ=48 is not allowed", false},
		{"Q", "BQ=48 is not allowed", false},
		{"H", "Hkv=3 must divide H=8", true},
		{"Hkv", "Hkv=3 must divide H=8", true},
		{"D", "TGM 46080 B exceeds the limit: lower BQ, BK or WN", false},
	} {
		f := field{kind: kindKnob, name: tc.field}
		if got := f.blames(errors.New(tc.msg)); got != tc.want {
			t.Errorf("%s blamed by %q = %v, want %v", tc.field, tc.msg, got, tc.want)
		}
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtRange(150e3, 158e3), "150–158 µs"},
		{fmtRange(900e3, 1.2e6), "900 µs–1.20 ms"},
		{fmtKiBPair(18432, 32768), "18.0/32.0 KiB"},
		{fmtKiBPair(32, 65536), "32 B/64.0 KiB"},
		{fmtKiBShort(18432, 32768), "18.0/32.0K"},
		{fit("abcdef", 4), "abc…"},
		{fit("ab", 4), "ab  "},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	lines := wrap("compiling attn_fwd: identifier BQX is undefined", 16)
	for _, l := range lines {
		if ansi.StringWidth(l) > 16 {
			t.Errorf("wrap made a line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	if !slices.Equal(lines, []string{"compiling", "attn_fwd:", "identifier BQX", "is undefined"}) {
		t.Errorf("wrap = %q", lines)
	}
}

// TestThroughputUnits: bandwidth-bound results chart in GB/s, compute-bound
// ones in FLOP/s, and one series shares one unit.
func TestThroughputUnits(t *testing.T) {
	res := func(flops, bytes, ns float64) profiler.Result {
		return profiler.Result{Status: profiler.StatusOK, FLOPs: flops, Bytes: bytes, Stats: profiler.Stats{N: 1, Median: ns}}
	}
	sm := res(4e6, 12e6, 10e3)    // 0.33 FLOP/B: 1200 GB/s
	at := res(1.3e8, 1.6e6, 35e3) // 84 FLOP/B: 3.8 TFLOP/s
	small := res(1.3e8, 1.6e6, 350e3)
	for _, tc := range []struct {
		name string
		r    profiler.Result
		want string
	}{{"softmax-like", sm, "1200 GB/s"}, {"attention-like", at, "3.71 TFLOP/s"}, {"slow attention", small, "371 GFLOP/s"}} {
		if got := fmtThroughput(tc.r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if u := unitFor([]profiler.Result{at, small}); u != "TFLOP/s" {
		t.Errorf("unit of a series reaching TFLOP/s = %q", u)
	}
	if v := inUnit(small, "TFLOP/s"); v < 0.37 || v > 0.372 {
		t.Errorf("371 GFLOP/s in TFLOP/s = %g", v)
	}
	if u := unitFor([]profiler.Result{at, sm}); u != "GB/s" {
		t.Errorf("the last result's kind picks the unit: got %q", u)
	}
	failed := profiler.Result{Status: profiler.StatusCompileError}
	if got := fmtThroughput(failed); got != "—" {
		t.Errorf("a failed run has no throughput, got %q", got)
	}
}

// TestMultiDispatchBudget: a plan of several kernels shows every
// dispatch's total first, in plan order, then every item of each; the
// occupancy panel names the tightest dispatch.
func TestMultiDispatchBudget(t *testing.T) {
	for _, name := range []string{"attn_bwd", "attn_bwd_atomic"} {
		t.Run(name, func(t *testing.T) {
			f, err := profiler.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			opts := testOptions()
			opts.Families = []profiler.Family{f}
			m := NewModel(&fakeExec{}, opts)
			bs := m.editor.preview.Budget
			lines := m.budget.lines(40)
			for i, l := range lines {
				lines[i] = ansi.Strip(l)
				if lines[i] == "" {
					t.Errorf("empty line in budget: %q", lines)
				}
			}
			if len(bs) > 1 {
				for i, b := range bs {
					if n := m.budget.short(b.Dispatch); !strings.HasSuffix(lines[i], " "+n) {
						t.Errorf("line %d is %q, want dispatch %q's total", i, lines[i], n)
					}
				}
			}
			all := strings.Join(lines, "\n")
			for _, b := range bs {
				for _, it := range b.Items {
					if !strings.Contains(all, it.Name) {
						t.Errorf("budget hides item %s of %s:\n%s", it.Name, b.Dispatch, all)
					}
				}
			}
			occ := m.occ.lines(40)
			if o, ok := minOcc(m.editor.preview.Occupancy); ok && len(m.editor.preview.Occupancy) > 1 && ansi.Strip(occ[0]) != o.Dispatch {
				t.Errorf("occupancy names %q, want the tightest dispatch %q", ansi.Strip(occ[0]), o.Dispatch)
			}
		})
	}
}

// TestDispatchShortNames: the budget drops the prefix a plan's dispatches
// share, never a whole name.
func TestDispatchShortNames(t *testing.T) {
	for fam, want := range map[string][]string{
		"attn_bwd":        {"delta", "dq", "dkv"},
		"attn_bwd_atomic": {"atomic", "cast"},
		"attn_fwd":        {"attn_fwd"},
	} {
		f, err := profiler.Lookup(fam)
		if err != nil {
			t.Fatal(err)
		}
		p := run.MakePreview(profiler.Spec{Kernel: fam}.WithDefaults(f.Schema()), fakeDevice)
		bp := budgetPanel{}
		bp.showPreview(p)
		var got []string
		for _, b := range p.Budget {
			got = append(got, bp.short(b.Dispatch))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: short names %q, want %q", fam, got, want)
		}
	}
}

func TestReasonDropsPrefixes(t *testing.T) {
	cpu := "compiling rowsum (rowsum): the CPU backend cannot run user kernel rowsum: it runs only built-in families' Go code: " + profiler.ErrCannotRun.Error()
	for _, c := range []struct {
		st        profiler.Status
		err, want string
	}{
		{profiler.StatusInvalid, cpu, "needs a GPU backend: use --backend cuda or metal\nthe CPU backend cannot run user kernel rowsum: it runs only built-in families' Go code"},
		{profiler.StatusInvalid, "compiling k (k): BQ=8 too small", "BQ=8 too small"},
		{profiler.StatusInvalid, "BQ=8 must be a multiple of 32", "BQ=8 must be a multiple of 32"},
		// A compile error keeps the dispatch's name: it says which of several failed.
		{profiler.StatusCompileError, "compiling k (k): error", "compiling k (k): error"},
	} {
		if got := reason(profiler.Result{Status: c.st, Error: c.err}); got != c.want {
			t.Errorf("reason(%s, %q) = %q, want %q", c.st, c.err, got, c.want)
		}
	}
	if !needsGPU(&profiler.Plan{Dispatches: []profiler.Dispatch{{Program: profiler.Program{Code: "x"}}}}, profiler.DeviceInfo{Backend: "cpu"}) {
		t.Error("a user source on the CPU backend should need a GPU")
	}
	if needsGPU(&profiler.Plan{Dispatches: []profiler.Dispatch{{Program: profiler.Program{Code: "x"}}}}, profiler.DeviceInfo{Backend: "cuda"}) ||
		needsGPU(&profiler.Plan{Dispatches: []profiler.Dispatch{{}}}, profiler.DeviceInfo{Backend: "cpu"}) {
		t.Error("CUDA runs user sources; the CPU runs built-in families")
	}
}

func TestDeltaComparesSameKindAndShape(t *testing.T) {
	mk := func(lq int, med, flops float64) profiler.Result {
		return profiler.Result{Status: profiler.StatusOK, FLOPs: flops, Stats: profiler.Stats{N: 1, Median: med},
			Spec: profiler.Spec{Kernel: "attn_fwd", DType: profiler.F32, Dims: map[string]int{"Lq": lq}}}
	}
	// 2 TFLOP/s against 500 GFLOP/s is one kind in two scales: +300%.
	if got := delta(mk(64, 1000, 2e6), mk(64, 1000, 5e5)); got != "+300.0%" {
		t.Errorf("delta across TFLOP/s and GFLOP/s = %q, want +300.0%%", got)
	}
	if got := delta(mk(64, 1000, 2e9), mk(256, 1000, 1e9)); got != "" {
		t.Errorf("delta against another shape = %q, want none", got)
	}
	if sameShape(mk(64, 1000, 2e9), mk(256, 1000, 1e9)) || !sameShape(mk(64, 1000, 2e9), mk(64, 900, 1e9)) {
		t.Errorf("sameShape must tell Lq=64 from Lq=256 and accept two runs at Lq=64")
	}
}

func TestPreviousIsSameKernelAndShape(t *testing.T) {
	mk := func(id, lq int) entry {
		return entry{id: id, res: profiler.Result{Status: profiler.StatusOK, FLOPs: 1e9, Stats: profiler.Stats{N: 1, Median: 1000},
			Spec: profiler.Spec{Kernel: "attn_fwd", DType: profiler.F32, Dims: map[string]int{"Lq": lq}}}}
	}
	h := history{entries: []entry{mk(1, 64), mk(2, 256), mk(3, 64)}}
	if p, ok := h.previous(h.entries[2]); !ok || p.id != 1 {
		t.Errorf("previous of #3 (Lq=64) = #%d %v, want #1: #2 is another shape", p.id, ok)
	}
	if _, ok := h.previous(h.entries[1]); ok {
		t.Error("#2 has no previous run of its shape")
	}
}
