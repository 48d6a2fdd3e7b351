package attnbwd

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/kernels/attention"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

var ()

func tgmItem(d profiler.Dispatch, name string) (profiler.TGMItem, bool) {
	for _, it := range d.TGM {
		if it.Name == name {
			return it, true
		}
	}
	return profiler.TGMItem{}, false
}

// Seed 001's D=128 dKV (BQ=16, BK=16, WM=2, 16-bit): red_smem is 8192 B;
// aliased over Q_smem+dO_smem (2·4352 B) it costs nothing, which is what
// lets two groups share a 32 KB core.
func TestAttnBwdAliasTGM(t *testing.T) {
	knobs := map[string]int{"BQ_dkv": 16, "BK_dkv": 16, "WM_dkv": 2}
	dims := map[string]int{"D": 128, "H": 32, "Hkv": 32}
	var totals [2]int
	for i, alias := range []bool{false, true} {
		p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: knobs, Dims: dims, Flags: map[string]bool{"alias": alias}}, kittest.M3Max)
		d := p.Dispatches[2]
		if d.Name != "attn_bwd_dkv" {
			t.Fatalf("dispatch 2 is %s", d.Name)
		}
		q, _ := tgmItem(d, "Q_smem")
		do, _ := tgmItem(d, "dO_smem")
		red, ok := tgmItem(d, "red_smem")
		if q.Bytes != 4352 || do.Bytes != 4352 || !ok {
			t.Fatalf("alias=%t: Q_smem %d, dO_smem %d, red_smem present %t; want 4352, 4352, true", alias, q.Bytes, do.Bytes, ok)
		}
		wantRed := 8192
		if alias {
			wantRed = 0
			if !strings.Contains(red.Note, "aliased over Q_smem") {
				t.Errorf("aliased red_smem note %q", red.Note)
			}
		}
		if red.Bytes != wantRed {
			t.Errorf("alias=%t: red_smem %d B, want %d", alias, red.Bytes, wantRed)
		}
		totals[i] = d.TGMBytes()
		occ := run.EstimateOccupancy(kittest.M3Max, &d, profiler.KernelAttrs{})
		t.Logf("alias=%t: dKV TGM %d B, %d groups per core (%s)", alias, totals[i], occ.GroupsPerUnit, occ.Limiter)
	}
	if totals[0]-totals[1] != 8192 {
		t.Errorf("aliasing saved %d B, want 8192", totals[0]-totals[1])
	}
	// At D=96 the saving moves the dKV kernel from 1 to 2 groups per 32 KB
	// core (16000 B vs 22144 B), the effect seed 001 reports for its D=128.
	var groups []int
	for _, alias := range []bool{false, true} {
		p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: knobs, Dims: map[string]int{"D": 96}, Flags: map[string]bool{"alias": alias}}, kittest.M3Max)
		d := p.Dispatches[2]
		groups = append(groups, run.EstimateOccupancy(kittest.M3Max, &d, profiler.KernelAttrs{}).GroupsPerUnit)
	}
	if !slices.Equal(groups, []int{1, 2}) {
		t.Errorf("D=96 dKV groups per core without/with alias %v, want [1 2]", groups)
	}
	// WM=1: one warp, no reduction buffer at all.
	p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"WM_dkv": 1}, Dims: dims}, kittest.M3Max)
	if _, ok := tgmItem(p.Dispatches[2], "red_smem"); ok {
		t.Error("WM_dkv=1 must not list red_smem")
	}
}

// On the CUDA tensor-core path the dKV warps own key rows: no partials, so
// no red_smem whatever alias says, and Q, dO and the row statistics are
// double-buffered. The f32 path keeps seed 001's layout.
func TestAttnBwdDKVTensorCoreTGM(t *testing.T) {
	knobs := map[string]int{"BQ_dkv": 64, "BK_dkv": 128, "WM_dkv": 8}
	dims := map[string]int{"D": 128, "H": 32, "Hkv": 32}
	for _, alias := range []bool{false, true} {
		p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd", DType: profiler.BF16, Knobs: knobs, Dims: dims, Flags: map[string]bool{"alias": alias}}, kittest.H100Full)
		d := p.Dispatches[2]
		got := map[string]int{}
		for _, it := range d.TGM {
			got[it.Name] = it.Bytes
		}
		want := map[string]int{"Q_smem": 2 * 64 * 136 * 2, "dO_smem": 2 * 64 * 136 * 2, "KV_smem": 2 * 128 * 136 * 2, "stat_smem": 2 * 2 * 64 * 4}
		if !maps.Equal(got, want) {
			t.Errorf("alias=%t: dKV TGM %v, want %v", alias, got, want)
		}
	}
	p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd", DType: profiler.F32, Knobs: map[string]int{"BQ_dkv": 64, "BK_dkv": 64, "WM_dkv": 4}, Dims: dims}, kittest.H100Full)
	if it, ok := tgmItem(p.Dispatches[2], "red_smem"); !ok || it.Bytes != 64*128*4 {
		t.Errorf("f32 dKV red_smem %+v (present %t), want %d B", it, ok, 64*128*4)
	}
}

func TestAttnBwdRules(t *testing.T) {
	cases := []struct {
		name string
		s    profiler.Spec
		dev  profiler.DeviceInfo
		want string // "" = valid
	}{
		{"atomic defaults", profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.BF16}, kittest.M3Max, ""},
		{"atomic BQ vs WM", profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.BF16, Knobs: map[string]int{"BQ": 16, "WM": 4}}, kittest.M3Max, "BQ=16 must be a multiple of 8·WM=32"},
		{"atomic D=256 over 32 KB", profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.BF16, Dims: map[string]int{"D": 256}}, kittest.M3Max, "exceeds"},
		{"atomic D=256 small tile fits", profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.BF16, Knobs: map[string]int{"BQ": 16, "BK": 8, "WM": 1}, Dims: map[string]int{"D": 256}}, kittest.M3Max, ""},
		{"atomic D=256 opt-in on CUDA", profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.BF16, Dims: map[string]int{"D": 256}}, kittest.H100Full, ""},
		{"GQA divisor", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Dims: map[string]int{"H": 6, "Hkv": 4}}, kittest.M3Max, "multiple of Hkv=4"},
		{"alias ignored with WM=1", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BQ_dkv": 16, "BK_dkv": 64, "WM_dkv": 1}, Flags: map[string]bool{"alias": true}}, kittest.H100Full, ""},
		{"alias too small", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F32, Knobs: map[string]int{"BQ_dkv": 32, "BK_dkv": 128, "WM_dkv": 2}, Flags: map[string]bool{"alias": true}}, kittest.H100Full, "does not fit over Q_smem+dO_smem"},
		{"alias has nothing to alias on the tensor-core path", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BQ_dkv": 32, "BK_dkv": 128, "WM_dkv": 2}, Flags: map[string]bool{"alias": true}}, kittest.H100Full, ""},
		{"CUDA tensor cores: 16 keys per warp", profiler.Spec{Kernel: "attn_bwd", DType: profiler.BF16, Knobs: map[string]int{"BK_dkv": 16, "WM_dkv": 2}}, kittest.H100Full, "BK_dkv=16 must be a multiple of 16·WM_dkv=32"},
		{"CUDA tensor cores: dKV query block of 16s", profiler.Spec{Kernel: "attn_bwd", DType: profiler.BF16, Knobs: map[string]int{"BQ_dkv": 8, "BK_dkv": 64, "WM_dkv": 4}}, kittest.H100Full, "BQ_dkv=8 must be a multiple of 16"},
		{"CUDA tensor cores: dQ rows per warp", profiler.Spec{Kernel: "attn_bwd", DType: profiler.BF16, Knobs: map[string]int{"BQ_dq": 32, "WM_dq": 4}}, kittest.H100Full, "BQ_dq=32 must be a multiple of 16·WM_dq=64"},
		{"CUDA f32 keeps 8 rows per warp", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F32, Knobs: map[string]int{"BQ_dkv": 16, "WM_dkv": 2}}, kittest.H100Full, ""},
		{"CUDA tensor cores: BK multiple of 16", profiler.Spec{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BK_dq": 8}}, kittest.H100Full, "BK_dq=8 must be a multiple of 16"},
		{"unfused", profiler.Spec{Kernel: "attn_bwd_unfused", DType: profiler.F32}, kittest.M3Max, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := profiler.Resolve(c.s, c.dev)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FLOPs are 2.5 × the forward's over the same pairs, for every family;
// peak memory counts every buffer, so the unfused plan grows with L².
func TestAttnBwdFLOPsAndMemory(t *testing.T) {
	dims := map[string]int{"B": 1, "H": 32, "Hkv": 32, "Lq": 4096, "Lk": 4096, "D": 64}
	for _, causal := range []bool{false, true} {
		fl := map[string]bool{"causal": causal}
		fwd, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_fwd", DType: profiler.F16, Knobs: map[string]int{"BQ": 64, "WM": 4}, Dims: dims, Flags: fl}, kittest.H100Full)
		mem := map[string]int64{}
		for _, k := range []string{"attn_bwd", "attn_bwd_atomic", "attn_bwd_unfused"} {
			p, _ := plancheck.Plan(t, profiler.Spec{Kernel: k, DType: profiler.F16, Dims: dims, Flags: fl}, kittest.H100Full)
			if math.Abs(p.FLOPs/fwd.FLOPs-2.5) > 1e-12 {
				t.Errorf("%s causal=%t: FLOPs %g = %g × forward, want 2.5×", k, causal, p.FLOPs, p.FLOPs/fwd.FLOPs)
			}
			if len(p.Setup) != 1 || p.Setup[0].Program.Source != "attn_fwd" {
				t.Errorf("%s: Setup %v, want one attn_fwd dispatch", k, p.Setup)
			}
			mem[k] = p.MemoryBytes()
		}
		// Q, K, V, O, dO, dQ, dK, dV: 8 × 32·4096·64·2 B = 268 MB; L and delta 0.5 MB each.
		qkv := int64(32 * 4096 * 64 * 2)
		if want := 8*qkv + 2*32*4096*4; mem["attn_bwd"] != want {
			t.Errorf("attn_bwd peak %d B, want %d", mem["attn_bwd"], want)
		}
		if want := mem["attn_bwd"] + 2*32*4096*4096*4; mem["attn_bwd_unfused"] != want {
			t.Errorf("attn_bwd_unfused peak %d B, want fused + P and dS f32 = %d", mem["attn_bwd_unfused"], want)
		}
		if want := 8*qkv + 32*4096*4 + 4 + 2*qkv*2; mem["attn_bwd_atomic"] != want {
			t.Errorf("attn_bwd_atomic peak %d B, want %d (f32 dK/dV scratch)", mem["attn_bwd_atomic"], want)
		}
	}
}

// The mask flag swaps the Setup for attn_bwd_prep and sizes the mask.
func TestAttnBwdAtomicMaskPlan(t *testing.T) {
	dims := map[string]int{"Lq": 100, "Lk": 70}
	for _, mask := range []bool{false, true} {
		p, _ := plancheck.Plan(t, profiler.Spec{Kernel: "attn_bwd_atomic", DType: profiler.F16, Dims: dims, Flags: map[string]bool{"mask": mask}}, kittest.M3Max)
		b, _ := p.Buffer("mask")
		wantElems, wantSetup := int64(1), "attn_fwd"
		if mask {
			wantElems, wantSetup = 7000, "attn_bwd_prep"
		}
		if b.Elems != wantElems || p.Setup[0].Program.Source != wantSetup {
			t.Errorf("mask=%t: mask buffer %d elements, setup %s; want %d, %s", mask, b.Elems, p.Setup[0].Program.Source, wantElems, wantSetup)
		}
		names := []string{}
		for _, d := range p.Dispatches {
			names = append(names, d.Name)
		}
		if !slices.Equal(names, []string{"zero dK_acc", "zero dV_acc", "attn_bwd_atomic", "attn_bwd_cast"}) {
			t.Errorf("dispatches %v", names)
		}
	}
}

// configs/attention_bwd.yaml loads and every spec plans on an H100.
func TestAttentionBwdConfigPlans(t *testing.T) {
	sw, err := sweep.Load("../../configs/attention_bwd.yaml", profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, j := range sw.Jobs {
		f, full, err := profiler.Resolve(j.Spec, kittest.H100Full)
		if err != nil {
			t.Fatalf("%v: %v", j.Spec, err)
		}
		if _, err := f.Plan(full, kittest.H100Full); err != nil {
			t.Fatalf("%v: %v", full, err)
		}
		count[full.Kernel]++
	}
	for _, k := range []string{"attn_bwd", "attn_bwd_atomic", "attn_bwd_unfused"} {
		if count[k] != 24 { // D × L × causal = 3 × 4 × 2
			t.Errorf("%s: %d specs, want 24", k, count[k])
		}
	}
}

// The reference on a small shape: dQ/dK/dV against finite differences of
// the loss Σ dO∘O, so the float64 math itself is checked.
func TestAttnBwdReferenceFiniteDifferences(t *testing.T) {
	s := profiler.Spec{Kernel: "attn_bwd", DType: profiler.F32, Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 5, "Lk": 7, "D": 64}, Flags: map[string]bool{"causal": true}}
	a := attention.AttnShapeOf(s)
	rng := profiler.NewRNG(3)
	mk := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.Normal())
		}
		return v
	}
	in := profiler.Inputs{"Q": mk(2 * 5 * 64), "K": mk(7 * 64), "V": mk(7 * 64), "dO": mk(2 * 5 * 64)}
	ref, err := AttnBwdReference(s, in, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		var l float64
		for r := range a.Rows() {
			b, h, i := a.RowBHI(r)
			o, _ := attention.AttnRowRef(a, in["Q"], in["K"], in["V"], b, h, i)
			for d, x := range o {
				l += x * float64(in["dO"][a.QOffset(b, h, i)+d])
			}
		}
		return l
	}
	src := map[string]string{"dQ": "Q", "dK": "K", "dV": "V"}
	for _, c := range ref.Checks {
		buf := in[src[c.Buffer]]
		for k := 0; k < len(c.Index); k += 37 {
			idx := c.Index[k]
			old := buf[idx]
			const eps = 1e-2
			buf[idx] = old + eps
			lp := loss()
			buf[idx] = old - eps
			lm := loss()
			buf[idx] = old
			fd := (lp - lm) / (2 * eps)
			if math.Abs(fd-c.Want[k]) > 2e-3+2e-3*math.Abs(fd) {
				t.Errorf("%s[%d]: reference %g, finite difference %g", c.Buffer, idx, c.Want[k], fd)
			}
		}
	}
}
