package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/mltop/mltop/cpu"
	_ "github.com/mltop/mltop/kernels/all"
	attnfwd "github.com/mltop/mltop/kernels/attn_fwd"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// skipLastTile is attn_fwd with a classic off-by-one: the key loop bound
// drops the last key tile (it runs with Lk rounded down to whole tiles, one
// tile short when Lk is a multiple of BK; with causal the mask offset Lk−Lq
// moves too). It must be caught as a mismatch.
const skipLastTile = "test_attn_fwd_skip_last_tile"

func init() {
	host.RegisterKernel(skipLastTile, func(g *host.Group) {
		// Run the real kernel against Lk shortened by one tile; rows then
		// miss keys (and, for causal, the mask shifts).
		bk, lk := g.Macro("BK"), g.Int("Lk")
		short := *g
		short.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range short.Scalars {
			if short.Scalars[i].Name == "Lk" && lk > bk {
				short.Scalars[i].I = int64((lk - 1) / bk * bk)
			}
		}
		attnfwd.CPUAttnFwd(&short)
	})
	host.RegisterKernel("test_store", func(g *host.Group) {
		dt := []profiler.DType{profiler.F32, profiler.F16, profiler.BF16}[g.Int("dtype")]
		g.Arg(1, dt).Set(0, g.Arg(0, profiler.F32).At(0))
	})
	host.RegisterKernel("test_out_of_range", func(g *host.Group) {
		if g.ID[0] == 0 {
			g.Arg(0, profiler.F32).At(4) // a 16-byte buffer holds elements 0..3
		}
	})
	host.RegisterKernel("test_panics", func(g *host.Group) {
		if g.ID[0] == 3 {
			panic("boom in group 3")
		}
	})
}

// remap sends every compile to another CPU kernel: the family's plan stays
// the same, only the code differs.
type remap struct {
	profiler.Backend
	to string
}

func (r remap) Compile(p profiler.Program) (profiler.Kernel, error) {
	p.Source = r.to
	return r.Backend.Compile(p)
}

func newBackendB() (profiler.Backend, error) { return cpu.New() }

func newBackend(t *testing.T) profiler.Backend {
	t.Helper()
	b, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func quick() profiler.Options {
	o := profiler.DefaultOptions()
	o.Cache = profiler.CacheHot
	o.Warmup = 0.001
	o.MaxRows = 4096 // small shapes: check every row
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 2, MinTime: 1e-4, MaxTime: 0.05}
	return o
}

func attnSpec(dt profiler.DType, knobs, dims map[string]int, causal bool) profiler.Spec {
	return profiler.Spec{Kernel: "attn_fwd", DType: dt, Knobs: knobs, Dims: dims, Flags: map[string]bool{"causal": causal}}
}

func TestAttnFwdOK(t *testing.T) {
	cases := []struct {
		name   string
		knobs  map[string]int
		dims   map[string]int
		causal bool
	}{
		{"dense square", map[string]int{"BQ": 32, "BK": 16, "WM": 4}, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 64, "Lk": 64, "D": 64}, false},
		{"causal square", map[string]int{"BQ": 16, "BK": 16, "WM": 2}, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 48, "Lk": 48, "D": 64}, true},
		{"GQA H=4 Hkv=2, Lq not a multiple of BQ", map[string]int{"BQ": 32, "BK": 32, "WM": 4}, map[string]int{"B": 2, "H": 4, "Hkv": 2, "Lq": 37, "Lk": 53, "D": 64}, false},
		{"causal Lq<Lk (decode-like)", map[string]int{"BQ": 8, "BK": 16, "WM": 1}, map[string]int{"B": 1, "H": 4, "Hkv": 2, "Lq": 19, "Lk": 70, "D": 96}, true},
		{"causal Lq>Lk (fully masked rows)", map[string]int{"BQ": 16, "BK": 8, "WM": 2, "WN": 1}, map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 40, "Lk": 25, "D": 128}, true},
		{"WN=2, BK=64 > Lk", map[string]int{"BQ": 32, "BK": 64, "WM": 2, "WN": 2}, map[string]int{"B": 1, "H": 1, "Hkv": 1, "Lq": 33, "Lk": 40, "D": 64}, false},
	}
	r := run.NewRunner(newBackend(t))
	for _, c := range cases {
		for _, dt := range profiler.FloatDTypes {
			t.Run(fmt.Sprintf("%s/%s", c.name, dt), func(t *testing.T) {
				res := r.Run(context.Background(), attnSpec(dt, c.knobs, c.dims, c.causal), quick(), nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("status %s: %s", res.Status, res.Error)
				}
				v := res.Verdict
				if v.Checked == 0 || v.RowsChecked != v.RowsTotal {
					t.Errorf("checked %d elements over %d of %d rows; want all rows of a small shape", v.Checked, v.RowsChecked, v.RowsTotal)
				}
				if res.Timer != "wall-clock" || res.Stats.N < 1 || res.Stats.Median <= 0 || res.TFLOPS <= 0 {
					t.Errorf("timing: timer %q n=%d median %.0f ns tflops %g", res.Timer, res.Stats.N, res.Stats.Median, res.TFLOPS)
				}
				if len(res.Occupancy) != 1 || res.Occupancy[0].Available || !strings.Contains(res.Occupancy[0].Reason, "n/a on the CPU backend") {
					t.Errorf("occupancy %+v, want n/a with the reason", res.Occupancy)
				}
				if res.PctPeakFLOP != 0 {
					t.Errorf("%% of peak = %g, want 0 (n/a: no CPU peak)", res.PctPeakFLOP)
				}
			})
		}
	}
}

func TestAttnFwdFullyMaskedRows(t *testing.T) {
	// Lq=12 > Lk=4, causal: rows 0..7 see no key and must read O=0, L=-inf.
	b := newBackend(t)
	r := run.NewRunner(b)
	s := attnSpec(profiler.F32, map[string]int{"BQ": 8, "BK": 8, "WM": 1}, map[string]int{"B": 1, "H": 1, "Hkv": 1, "Lq": 12, "Lk": 4, "D": 64}, true)
	res := r.Run(context.Background(), s, quick(), nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	// Run directly to read L.
	f, full, err := profiler.Resolve(s, b.Info())
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := f.Plan(full, b.Info())
	L := runPlan(t, b, plan, "L")
	for i, v := range L {
		masked := i < 8
		if masked != math.IsInf(float64(v), -1) {
			t.Errorf("L[%d] = %v, masked=%v", i, v, masked)
		}
	}
}

// runPlan allocates, fills, runs and downloads one output.
func runPlan(t *testing.T, b profiler.Backend, plan *profiler.Plan, out string) []float32 {
	t.Helper()
	bufs := map[string]profiler.Buffer{}
	for _, bs := range plan.Buffers {
		buf, err := b.Alloc(bs.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, bs.Bytes())
		bs.Type.Encode(raw, profiler.Fill(bs, 1))
		if err := b.Upload(buf, raw); err != nil {
			t.Fatal(err)
		}
		bufs[bs.Name] = buf
	}
	var ls []profiler.Launch
	for i := range plan.Dispatches {
		d := &plan.Dispatches[i]
		k, err := b.Compile(d.Program)
		if err != nil {
			t.Fatal(err)
		}
		l := profiler.Launch{Dispatch: d, Kernel: k}
		for _, a := range d.Args {
			l.Args = append(l.Args, bufs[a])
		}
		ls = append(ls, l)
	}
	if err := b.Run(ls); err != nil {
		t.Fatal(err)
	}
	bs, _ := plan.Buffer(out)
	raw := make([]byte, bs.Bytes())
	if err := b.Download(bufs[out], raw); err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, bs.Elems)
	bs.Type.Decode(raw, vals)
	return vals
}

func TestAttnFwdSkippedTileIsMismatch(t *testing.T) {
	cases := []struct {
		name   string
		dims   map[string]int
		causal bool
	}{
		{"dense", map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 32, "Lk": 48, "D": 64}, false},
		{"causal", map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 48, "Lk": 48, "D": 64}, true},
	}
	for _, c := range cases {
		for _, dt := range profiler.FloatDTypes {
			t.Run(c.name+"/"+string(dt), func(t *testing.T) {
				r := run.NewRunner(remap{newBackend(t), skipLastTile})
				res := r.Run(context.Background(), attnSpec(dt, map[string]int{"BQ": 16, "BK": 16, "WM": 2}, c.dims, c.causal), quick(), nil)
				if res.Status != profiler.StatusMismatch {
					t.Fatalf("status %s, want mismatch (verdict %+v)", res.Status, res.Verdict)
				}
				if res.Verdict.Mismatches == 0 {
					t.Errorf("no mismatched elements reported")
				}
			})
		}
	}
}

func TestSoftmaxBwdOK(t *testing.T) {
	cases := []struct {
		wg, rows, cols int
	}{
		{32, 7, 1},      // one column: most chunks are empty
		{64, 33, 100},   // cols not a multiple of WG
		{256, 16, 4096}, // default width
		{1024, 5, 513},
	}
	r := run.NewRunner(newBackend(t))
	for _, c := range cases {
		for _, dt := range profiler.FloatDTypes {
			t.Run(fmt.Sprintf("WG=%d rows=%d cols=%d/%s", c.wg, c.rows, c.cols, dt), func(t *testing.T) {
				s := profiler.Spec{Kernel: "softmax_bwd", DType: dt, Knobs: map[string]int{"WG": c.wg}, Dims: map[string]int{"rows": c.rows, "cols": c.cols}}
				res := r.Run(context.Background(), s, quick(), nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("status %s: %s", res.Status, res.Error)
				}
				if want := c.rows * c.cols; res.Verdict.Checked != want {
					t.Errorf("checked %d elements, want %d", res.Verdict.Checked, want)
				}
			})
		}
	}
}

func TestKernelPanicPropagates(t *testing.T) {
	cases := []struct {
		kernel string
		want   []string
	}{
		{"test_panics", []string{"boom in group 3", "cpu kernel test_panics, group (3,0,0)", "(at cpu_test.go:"}},
		{"test_out_of_range", []string{"load of elements [4, 5) out of range: the f32 tensor holds 4 elements", "group (0,0,0)", "(at cpu_test.go:"}},
	}
	b := newBackend(t)
	for _, c := range cases {
		t.Run(c.kernel, func(t *testing.T) {
			k, err := b.Compile(profiler.Program{Source: c.kernel})
			if err != nil {
				t.Fatal(err)
			}
			buf, _ := b.Alloc(16)
			d := &profiler.Dispatch{Name: "p", Grid: [3]int{64, 1, 1}, Group: [3]int{32, 1, 1}}
			defer func() {
				p := recover()
				if p == nil {
					t.Fatal("Run returned without panicking")
				}
				msg := fmt.Sprint(p)
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("panic %q lacks %q", msg, w)
					}
				}
			}()
			_ = b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf}}})
		})
	}
}

func TestPanicBecomesCrashedResult(t *testing.T) {
	r := run.NewRunner(remap{newBackend(t), "test_panics"})
	res := r.Run(context.Background(), profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Dims: map[string]int{"rows": 8, "cols": 8}}, quick(), nil)
	if res.Status != profiler.StatusCrashed || !strings.Contains(res.Error, "boom in group 3") {
		t.Fatalf("status %s error %q, want crashed with the kernel's message", res.Status, res.Error)
	}
}

func TestCompileErrors(t *testing.T) {
	b := newBackend(t)
	cases := []struct {
		p    profiler.Program
		want []string
	}{
		{profiler.Program{Source: "nope"}, []string{`"nope"`, "attn_fwd", "softmax_bwd"}},
		{profiler.Program{Source: "attn_fwd", Macros: []profiler.Macro{{Name: "BQ", Value: "x"}}}, []string{`BQ="x"`, "integer"}},
	}
	for _, c := range cases {
		_, err := b.Compile(c.p)
		if err == nil {
			t.Fatalf("%+v compiled", c.p)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
	}
	k, err := b.Compile(profiler.Program{Source: "attn_fwd", Macros: []profiler.Macro{{Name: "BQ", Value: "32"}}})
	if err != nil || k.Attrs().MaxThreads != 1024 {
		t.Errorf("attn_fwd: %v, attrs %+v", err, k)
	}
}

func TestInfo(t *testing.T) {
	info := newBackend(t).Info()
	if info.Backend != "cpu" || info.Units != runtime.NumCPU() || info.UnitName != "core" || info.Timer != "wall-clock" {
		t.Errorf("info %+v", info)
	}
	if info.TGMPerGroup != 64<<10 || info.MaxThreadsPerGroup != 1024 || info.SIMDWidth != 32 || info.PeakFLOPS != nil {
		t.Errorf("limits %+v", info)
	}
	if info.Name == "" || info.MemoryBytes <= 0 || info.CacheBytes <= 0 {
		t.Errorf("probe: name %q memory %d cache %d", info.Name, info.MemoryBytes, info.CacheBytes)
	}
}

func TestBuffersAndZeroFill(t *testing.T) {
	b := newBackend(t)
	buf, err := b.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(buf, []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(buf, make([]byte, 9)); err == nil {
		t.Error("9-byte upload into 8 bytes succeeded")
	}
	d := &profiler.Dispatch{Name: "zero", Zero: "X"}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Zero: buf}}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	if err := b.Download(buf, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0 {
			t.Errorf("byte %d = %d after zero fill", i, v)
		}
	}
	if _, err := b.Alloc(1 << 62); err == nil || !strings.Contains(err.Error(), "reduce the dims") {
		t.Errorf("absurd alloc: %v", err)
	}
	tm, err := b.Time([]profiler.Launch{{Dispatch: d, Zero: buf}}, 3, profiler.CacheCold)
	if err != nil || len(tm.Samples) != 3 || len(tm.Samples[0]) != 1 || tm.Timer != "wall-clock" {
		t.Errorf("Time: %v %+v", err, tm)
	}
}

// The CPU backend times its runs (the runner's verification run) with the
// wall clock, the device's time here; the run does what Run does.
func TestRunTimed(t *testing.T) {
	b := newBackend(t).(*cpu.Backend)
	var _ profiler.RunTimer = b
	buf, err := b.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(buf, []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	sec, err := b.RunTimed([]profiler.Launch{{Dispatch: &profiler.Dispatch{Name: "zero", Zero: "X"}, Zero: buf}})
	got := make([]byte, 8)
	if derr := b.Download(buf, got); err != nil || derr != nil || sec <= 0 || string(got) != string(make([]byte, 8)) {
		t.Errorf("RunTimed: %g s, %v %v, buffer %v after a zero fill", sec, err, derr, got)
	}
	// A spec run on it reports its verification run's time.
	r := run.NewRunner(b)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 4, "cols": 64}}
	if res := r.Run(context.Background(), s, quick(), nil); res.Status != profiler.StatusOK || res.Phases == nil || res.Phases.VerifyGPU <= 0 {
		t.Errorf("status %s (%s), phases %+v: want the verification run's time in verify_gpu", res.Status, res.Error, res.Phases)
	}
}

func TestTensorRoundsToNearestEven(t *testing.T) {
	cases := []struct {
		dt   profiler.DType
		in   float32
		want float32
	}{
		{profiler.BF16, 1 + 1.0/256, 1},             // halfway between 1 and 1+2^-7: ties to even (1)
		{profiler.BF16, 1 + 3.0/256, 1 + 4.0/256},   // halfway, ties to even (1+2^-6)
		{profiler.F16, 1 + 1.0/2048, 1},             // halfway between 1 and 1+2^-10
		{profiler.F16, 1 + 3.0/2048, 1 + 4.0/2048},  // halfway, ties up to even
		{profiler.F16, 65520, float32(math.Inf(1))}, // rounds past the largest f16
		{profiler.F16, 1e-8, 0},                     // below half the smallest subnormal
		{profiler.F32, 0.1, 0.1},
	}
	b := newBackend(t)
	k, err := b.Compile(profiler.Program{Source: "test_store"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		in, _ := b.Alloc(4)
		out, _ := b.Alloc(int64(c.dt.Size()))
		raw := make([]byte, 4)
		profiler.F32.Encode(raw, []float32{c.in})
		_ = b.Upload(in, raw)
		d := &profiler.Dispatch{Name: "store", Grid: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1}, Scalars: []profiler.Scalar{profiler.I32Param("dtype", map[profiler.DType]int{profiler.F32: 0, profiler.F16: 1, profiler.BF16: 2}[c.dt])}}
		if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{in, out}}}); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 1)
		c.dt.Decode(out.(*cpu.Buffer).Bytes(), got)
		if got[0] != c.want {
			t.Errorf("%s store of %v = %v, want %v", c.dt, c.in, got[0], c.want)
		}
	}
}

// Random shapes and knobs (seeded): every spec the family accepts must
// verify, including the edge shapes (Lq or Lk of 1, tiles larger than the
// sequence, D=256).
func TestAttnFwdRandomShapes(t *testing.T) {
	be := newBackend(t)
	r := run.NewRunner(be)
	rng := profiler.NewRNG(2024)
	pick := func(vs ...int) int { return vs[rng.Uint64()%uint64(len(vs))] }
	opt := quick()
	opt.Stop.MaxTime = 0.005
	ran := 0
	for n := 0; ran < 24 && n < 200; n++ {
		h := pick(1, 2, 4)
		dims := map[string]int{"B": pick(1, 2), "H": h, "Hkv": pick(1, h), "Lq": 1 + int(rng.Uint64()%70), "Lk": 1 + int(rng.Uint64()%70), "D": pick(64, 96, 128, 256)}
		knobs := map[string]int{"BQ": pick(8, 16, 32, 64, 128), "BK": pick(8, 16, 32, 64, 128), "WM": pick(1, 2, 4, 8), "WN": pick(1, 2, 4)}
		dt := profiler.FloatDTypes[rng.Uint64()%3]
		s := attnSpec(dt, knobs, dims, rng.Uint64()%2 == 0)
		if _, _, err := profiler.Resolve(s, be.Info()); err != nil {
			continue // a spec the rules reject (tile vs warps, TGM)
		}
		ran++
		res := r.Run(context.Background(), s, opt, nil)
		if res.Status != profiler.StatusOK {
			t.Errorf("%s: status %s: %s", res.Spec, res.Status, res.Error)
		}
	}
	if ran < 24 {
		t.Fatalf("only %d random specs were valid", ran)
	}
}

// TestCancelStopsLaunch: ctrl-C during the first (verification) run of a
// spec stops the CPU launch itself: the result is cancelled with no
// verdict, instead of the whole launch, the reference and the check
// finishing first.
func TestCancelStopsLaunch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := run.NewRunner(newBackend(t))
	spec := attnSpec(profiler.F32, map[string]int{"BQ": 16, "BK": 16, "WM": 2}, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 64, "Lk": 64, "D": 64}, false)
	res := r.Run(ctx, spec, quick(), func(p profiler.Progress) {
		if p.Phase == "verify" {
			cancel()
		}
	})
	if res.Status != profiler.StatusCancelled || res.Verdict != nil {
		t.Fatalf("status %s (%s), verdict %v: want cancelled before the check", res.Status, res.Error, res.Verdict)
	}
	// The same runner runs the next spec normally.
	if res := r.Run(context.Background(), spec, quick(), nil); res.Status != profiler.StatusOK {
		t.Fatalf("after a cancel: status %s: %s", res.Status, res.Error)
	}
}

// TestLaunchHonoursCancelledContext: a launch under a done context
// returns context.Canceled.
func TestLaunchHonoursCancelledContext(t *testing.T) {
	b := newBackend(t).(*cpu.Backend)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.SetContext(ctx)
	if err := b.Run([]profiler.Launch{{Dispatch: &profiler.Dispatch{Name: "x"}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run under a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := b.Time(nil, 3, profiler.CacheHot); !errors.Is(err, context.Canceled) {
		t.Fatalf("Time under a cancelled context: %v, want context.Canceled", err)
	}
}
