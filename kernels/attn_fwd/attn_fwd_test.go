package attnfwd_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/attention"
	attnfwd "github.com/mltop/mltop/kernels/attn_fwd"
	"github.com/mltop/mltop/kernels/kit/kittest"
	softmaxbwd "github.com/mltop/mltop/kernels/softmax_bwd"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestRegistered(t *testing.T) {
	for _, name := range []string{"attn_fwd", "softmax_bwd"} {
		if _, err := profiler.Lookup(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSchemaDefaults(t *testing.T) {
	cases := []struct {
		f     profiler.Family
		knobs map[string]int
		dims  map[string]int
	}{
		{attnfwd.AttnFwd{}, map[string]int{"BQ": 32, "BK": 16, "WM": 4, "WN": 1}, map[string]int{"B": 1, "H": 8, "Hkv": 8, "Lq": 256, "Lk": 256, "D": 64}},
		{softmaxbwd.SoftmaxBwd{}, map[string]int{"WG": 256}, map[string]int{"rows": 4096, "cols": 4096}},
	}
	for _, c := range cases {
		s := profiler.Spec{Kernel: c.f.Name()}.WithDefaults(c.f.Schema())
		for k, v := range c.knobs {
			if s.Knobs[k] != v {
				t.Errorf("%s knob %s default %d, want %d", c.f.Name(), k, s.Knobs[k], v)
			}
		}
		for k, v := range c.dims {
			if s.Dims[k] != v {
				t.Errorf("%s dim %s default %d, want %d", c.f.Name(), k, s.Dims[k], v)
			}
		}
		if len(s.Knobs) != len(c.knobs) || len(s.Dims) != len(c.dims) {
			t.Errorf("%s has knobs %v dims %v", c.f.Name(), s.Knobs, s.Dims)
		}
		if got := c.f.Schema().DTypes; len(got) != 3 || got[0] != profiler.F32 || got[1] != profiler.F16 || got[2] != profiler.BF16 {
			t.Errorf("%s dtypes %v", c.f.Name(), got)
		}
		for _, p := range append(c.f.Schema().Knobs, c.f.Schema().Dims...) {
			if p.Doc == "" || p.Check(p.Default) != nil {
				t.Errorf("%s param %s: doc %q, default %d invalid: %v", c.f.Name(), p.Name, p.Doc, p.Default, p.Check(p.Default))
			}
		}
		if err := c.f.Validate(s, kittest.CPU); err != nil {
			t.Errorf("%s defaults rejected on the CPU: %v", c.f.Name(), err)
		}
		if err := c.f.Validate(s, kittest.M2); err != nil {
			t.Errorf("%s defaults rejected on Metal: %v", c.f.Name(), err)
		}
	}
	if fl, ok := (attnfwd.AttnFwd{}).Schema().Flag("causal"); !ok || fl.Default {
		t.Errorf("attn_fwd causal flag %+v", fl)
	}
	if err := (profiler.Spec{Kernel: "attn_fwd", DType: profiler.BF16, Knobs: map[string]int{"BQ": 24}}).CheckSchema(attnfwd.AttnFwd{}.Schema()); err == nil || !strings.Contains(err.Error(), "BQ=24") {
		t.Errorf("BQ=24 passed the schema: %v", err)
	}
}

func TestValidate(t *testing.T) {
	a, sm := attnfwd.AttnFwd{}, softmaxbwd.SoftmaxBwd{}
	cases := []struct {
		name string
		f    profiler.Family
		dt   profiler.DType
		set  map[string]int
		dev  profiler.DeviceInfo
		want string // "" accepts; else a fragment of the error
	}{
		{"defaults", a, profiler.BF16, nil, kittest.CPU, ""},
		{"GQA H=8 Hkv=2", a, profiler.BF16, map[string]int{"H": 8, "Hkv": 2}, kittest.CPU, ""},
		{"H not a multiple of Hkv", a, profiler.BF16, map[string]int{"H": 8, "Hkv": 3}, kittest.CPU, "H=8 must be a multiple of Hkv=3"},
		{"BQ below 8·WM", a, profiler.F32, map[string]int{"BQ": 16, "WM": 4}, kittest.CPU, "BQ=16 must be a multiple of 8·WM=32"},
		{"BQ=8 WM=1", a, profiler.F32, map[string]int{"BQ": 8, "WM": 1}, kittest.M2, ""},
		{"CUDA bf16 needs 16·WM", a, profiler.BF16, map[string]int{"BQ": 32, "WM": 4}, kittest.H100, "BQ=32 must be a multiple of 16·WM=64"},
		{"CUDA f16 needs 16·WM", a, profiler.F16, map[string]int{"BQ": 16, "WM": 2}, kittest.H100, "BQ=16 must be a multiple of 16·WM=32"},
		{"CUDA bf16 BQ=64 WM=4", a, profiler.BF16, map[string]int{"BQ": 64, "WM": 4}, kittest.H100, ""},
		{"CUDA f32 keeps 8·WM", a, profiler.F32, map[string]int{"BQ": 32, "WM": 4}, kittest.H100, ""},
		{"Metal bf16 keeps 8·WM", a, profiler.BF16, map[string]int{"BQ": 32, "WM": 4}, kittest.M2, ""},
		{"BK below 8·WN", a, profiler.F32, map[string]int{"BK": 8, "WN": 2}, kittest.CPU, "BK=8 must be a multiple of 8·WN=16"},
		{"D not a multiple of 8·WN", a, profiler.F32, map[string]int{"D": 40, "BK": 16, "WN": 2}, kittest.CPU, "D=40 must be a multiple of 8·WN=16"},
		{"1024 threads ok", a, profiler.F32, map[string]int{"BQ": 64, "WM": 8, "BK": 32, "WN": 4}, kittest.CPU, ""},
		{"threads over device max", a, profiler.F32, map[string]int{"BQ": 64, "WM": 8, "BK": 32, "WN": 4}, kittest.Small, "1024 threads per group exceed the small limit of 512"},
		{"TGM over Metal 32 KiB", a, profiler.BF16, map[string]int{"D": 256, "BQ": 64, "BK": 32}, kittest.M2, "TGM 67584 B exceeds the M2 limit of 32768 B"},
		{"TGM fits CUDA opt-in", a, profiler.BF16, map[string]int{"D": 256, "BQ": 64, "BK": 32}, kittest.H100, ""},
		{"TGM over CUDA opt-in", a, profiler.F32, map[string]int{"D": 256, "BQ": 128, "BK": 128, "WM": 8, "WN": 4}, kittest.H100, "exceeds the H100 limit of 232448 B"},
		{"32-bit index range", a, profiler.F32, map[string]int{"B": 64, "H": 256, "Hkv": 256, "Lq": 65536, "D": 256}, kittest.H100, "32-bit indices"},
		{"zero dim", a, profiler.F32, map[string]int{"Lk": 0}, kittest.CPU, "dim Lk=0 must be positive"},
		{"softmax zero WG", sm, profiler.F32, map[string]int{"WG": 0}, kittest.CPU, "knob WG=0 must be positive"},
		{"softmax defaults", sm, profiler.BF16, nil, kittest.CPU, ""},
		{"softmax WG over device max", sm, profiler.F32, map[string]int{"WG": 1024}, kittest.Small, "1024 threads per group exceed the small limit of 512"},
		{"softmax 32-bit index range", sm, profiler.F32, map[string]int{"rows": 1 << 24, "cols": 1 << 20}, kittest.CPU, "32-bit indices"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := kittest.Spec(c.f, c.dt, c.set, false)
			err := c.f.Validate(s, c.dev)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			// Plan receives only validated specs (run.Prepare): it must
			// plan every one of them.
			if err == nil {
				if _, perr := c.f.Plan(s, c.dev); perr != nil {
					t.Fatalf("plan failed: %v", perr)
				}
			}
			if err != nil && !strings.Contains(err.Error(), ":") {
				t.Errorf("error %q gives no fix", err)
			}
		})
	}
}

func TestTGMItems(t *testing.T) {
	type item struct {
		name  string
		bytes int
	}
	cases := []struct {
		name string
		f    profiler.Family
		dt   profiler.DType
		set  map[string]int
		want []item
	}{
		{"bf16 D=128 BQ=32 BK=16 WN=1", attnfwd.AttnFwd{}, profiler.BF16, map[string]int{"D": 128, "BQ": 32, "BK": 16, "WN": 1},
			[]item{{"Q_smem", 8704}, {"K_smem", 4352}, {"V_smem", 4352}}},
		{"bf16 D=128 BQ=32 BK=16 WN=2", attnfwd.AttnFwd{}, profiler.BF16, map[string]int{"D": 128, "BQ": 32, "BK": 16, "WN": 2},
			[]item{{"Q_smem", 8704}, {"K_smem", 4352}, {"V_smem", 4352}, {"P_smem", 32 * 24 * 2}, {"red_smem", 2 * 2 * 32 * 4}}},
		{"f32 D=64 BQ=64 BK=32 WM=8 WN=4", attnfwd.AttnFwd{}, profiler.F32, map[string]int{"D": 64, "BQ": 64, "BK": 32, "WM": 8, "WN": 4},
			[]item{{"Q_smem", 64 * 72 * 4}, {"K_smem", 32 * 72 * 4}, {"V_smem", 32 * 72 * 4}, {"P_smem", 64 * 40 * 4}, {"red_smem", 2 * 4 * 64 * 4}}},
		{"f16 D=96 BQ=16 BK=8 WM=2", attnfwd.AttnFwd{}, profiler.F16, map[string]int{"D": 96, "BQ": 16, "BK": 8, "WM": 2},
			[]item{{"Q_smem", 16 * 104 * 2}, {"K_smem", 8 * 104 * 2}, {"V_smem", 8 * 104 * 2}}},
		{"softmax WG=256", softmaxbwd.SoftmaxBwd{}, profiler.BF16, map[string]int{"WG": 256}, []item{{"red_smem", 32}}},
		{"softmax WG=32", softmaxbwd.SoftmaxBwd{}, profiler.F32, map[string]int{"WG": 32}, []item{{"red_smem", 4}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.f.Plan(kittest.Spec(c.f, c.dt, c.set, false), kittest.CPU)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Dispatches[0]
			if len(d.TGM) != len(c.want) {
				t.Fatalf("items %+v, want %v", d.TGM, c.want)
			}
			sum := 0
			for i, w := range c.want {
				if d.TGM[i].Name != w.name || d.TGM[i].Bytes != w.bytes || d.TGM[i].Note == "" {
					t.Errorf("item %d = %+v, want %s %d B with a note", i, d.TGM[i], w.name, w.bytes)
				}
				sum += w.bytes
			}
			if d.TGMBytes() != sum {
				t.Errorf("total %d, want %d", d.TGMBytes(), sum)
			}
		})
	}
	if n := attnfwd.AttnFwdTGM(32, 16, 1, 128, profiler.BF16)[0].Note; n != "BQ×(D+8) bf16, 8-element pad" {
		t.Errorf("Q_smem note %q", n)
	}
}

func TestAttnPlanContract(t *testing.T) {
	s := kittest.Spec(attnfwd.AttnFwd{}, profiler.BF16, map[string]int{"B": 2, "H": 4, "Hkv": 2, "Lq": 100, "Lk": 70, "D": 96, "BQ": 32, "BK": 16, "WM": 2, "WN": 2}, true)
	p, err := attnfwd.AttnFwd{}.Plan(s, kittest.CPU)
	if err != nil {
		t.Fatal(err)
	}
	wantBufs := []struct {
		name  string
		role  profiler.Role
		dt    profiler.DType
		elems int64
		init  profiler.InitKind
	}{
		{"Q", profiler.In, profiler.BF16, 2 * 4 * 100 * 96, profiler.InitNormal},
		{"K", profiler.In, profiler.BF16, 2 * 2 * 70 * 96, profiler.InitNormal},
		{"V", profiler.In, profiler.BF16, 2 * 2 * 70 * 96, profiler.InitNormal},
		{"O", profiler.Out, profiler.BF16, 2 * 4 * 100 * 96, profiler.InitPoison},
		{"L", profiler.Out, profiler.F32, 2 * 4 * 100, profiler.InitPoison},
	}
	if len(p.Buffers) != len(wantBufs) {
		t.Fatalf("buffers %+v", p.Buffers)
	}
	for i, w := range wantBufs {
		b := p.Buffers[i]
		if b.Name != w.name || b.Role != w.role || b.Type != w.dt || b.Elems != w.elems || b.Init != w.init {
			t.Errorf("buffer %d = %+v, want %+v", i, b, w)
		}
	}
	d := p.Dispatches[0]
	if d.Name != "attn_fwd" || d.Program.Source != "attn_fwd" || d.Program.Entry != "attn_fwd" {
		t.Errorf("program %+v", d.Program)
	}
	if d.Grid != [3]int{4, 4, 2} || d.Group != [3]int{128, 1, 1} {
		t.Errorf("grid %v group %v, want [4 4 2] [128 1 1]", d.Grid, d.Group)
	}
	if strings.Join(d.Args, ",") != "Q,K,V,O,L" {
		t.Errorf("args %v", d.Args)
	}
	macros := map[string]string{}
	var order []string
	for _, m := range d.Program.Macros {
		macros[m.Name] = m.Value
		order = append(order, m.Name)
	}
	if strings.Join(order, ",") != "BQ,BK,WM,WN,D,DTYPE,CAUSAL" || macros["DTYPE"] != "2" || macros["CAUSAL"] != "1" || macros["D"] != "96" || macros["WN"] != "2" {
		t.Errorf("macros %v", d.Program.Macros)
	}
	wantSc := []profiler.Scalar{
		profiler.I32Param("B", 2), profiler.I32Param("H", 4), profiler.I32Param("Hkv", 2),
		profiler.I32Param("Lq", 100), profiler.I32Param("Lk", 70), profiler.F32Param("scale", 1/math.Sqrt(96)),
	}
	if len(d.Scalars) != len(wantSc) {
		t.Fatalf("scalars %+v", d.Scalars)
	}
	for i, w := range wantSc {
		if d.Scalars[i] != w {
			t.Errorf("scalar %d = %+v, want %+v", i, d.Scalars[i], w)
		}
	}
	sm, err := softmaxbwd.SoftmaxBwd{}.Plan(kittest.Spec(softmaxbwd.SoftmaxBwd{}, profiler.F16, map[string]int{"rows": 10, "cols": 300, "WG": 64}, false), kittest.CPU)
	if err != nil {
		t.Fatal(err)
	}
	sd := sm.Dispatches[0]
	if sd.Grid != [3]int{10, 1, 1} || sd.Group != [3]int{64, 1, 1} || strings.Join(sd.Args, ",") != "Y,dY,dX" ||
		len(sd.Scalars) != 2 || sd.Scalars[0] != profiler.I32Param("rows", 10) || sd.Scalars[1] != profiler.I32Param("cols", 300) ||
		len(sd.Program.Macros) != 2 || sd.Program.Macros[0] != (profiler.Macro{Name: "WG", Value: "64"}) || sd.Program.Macros[1] != (profiler.Macro{Name: "DTYPE", Value: "1"}) {
		t.Errorf("softmax_bwd dispatch %+v", sd)
	}
	if y := sm.Buffers[0]; y.Name != "Y" || y.Init != profiler.InitUniform || y.Lo != 0 || y.Hi != 1 {
		t.Errorf("Y buffer %+v", y)
	}
	if sm.FLOPs != 4*3000 || sm.Bytes != 3*3000*2 {
		t.Errorf("softmax FLOPs %g bytes %g", sm.FLOPs, sm.Bytes)
	}
}

func TestCausalPairs(t *testing.T) {
	cases := []struct {
		lq, lk int
		want   int64
	}{
		{4, 4, 10}, // 1+2+3+4
		{3, 5, 12}, // rows see 3, 4, 5 keys
		{5, 3, 6},  // rows see 0, 0, 1, 2, 3
		{1, 7, 7},  // one decode row sees everything
		{7, 1, 1},  // only the last row sees the single key
		{1024, 1024, 1024 * 1025 / 2},
	}
	for _, c := range cases {
		if got := attention.CausalPairs(c.lq, c.lk); got != c.want {
			t.Errorf("attention.CausalPairs(%d, %d) = %d, want %d", c.lq, c.lk, got, c.want)
		}
	}
	// Against the per-row definition for every small pair of lengths.
	for lq := 1; lq <= 40; lq++ {
		for lk := 1; lk <= 40; lk++ {
			var n int64
			for i := range lq {
				for j := range lk {
					if j <= i+lk-lq {
						n++
					}
				}
			}
			if got := attention.CausalPairs(lq, lk); got != n {
				t.Fatalf("attention.CausalPairs(%d, %d) = %d, counted %d", lq, lk, got, n)
			}
		}
	}
}

func TestAttnFLOPsAndBytes(t *testing.T) {
	cases := []struct {
		name      string
		set       map[string]int
		causal    bool
		dt        profiler.DType
		flops     float64
		bytes     float64
		noteMatch string
	}{
		{"dense square", map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 128, "Lk": 128, "D": 64}, false, profiler.BF16,
			4 * 64 * 128 * 128 * 2, (2*2*128*64+2*2*128*64)*2 + 2*128*4, ""},
		{"causal square", map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 128, "Lk": 128, "D": 64}, true, profiler.BF16,
			4 * 64 * (128 * 129 / 2) * 2, (2*2*128*64+2*2*128*64)*2 + 2*128*4, "16512 unmasked"},
		{"dense Lq != Lk, GQA", map[string]int{"B": 2, "H": 4, "Hkv": 1, "Lq": 10, "Lk": 30, "D": 128}, false, profiler.F32,
			4 * 128 * 10 * 30 * 8, (2*8*10*128+2*2*30*128)*4 + 8*10*4, ""},
		{"causal Lq < Lk", map[string]int{"B": 2, "H": 4, "Hkv": 1, "Lq": 10, "Lk": 30, "D": 128}, true, profiler.F16,
			// rows see 21..30 keys: 255 pairs per head
			4 * 128 * 255 * 8, (2*8*10*128+2*2*30*128)*2 + 8*10*4, "2040 unmasked"},
		{"causal Lq > Lk", map[string]int{"B": 1, "H": 1, "Hkv": 1, "Lq": 30, "Lk": 10, "D": 64}, true, profiler.F32,
			4 * 64 * 55, (2*30*64+2*10*64)*4 + 30*4, "first 20 query rows see no key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := attnfwd.AttnFwd{}.Plan(kittest.Spec(attnfwd.AttnFwd{}, c.dt, c.set, c.causal), kittest.CPU)
			if err != nil {
				t.Fatal(err)
			}
			if p.FLOPs != c.flops || p.Bytes != c.bytes {
				t.Errorf("FLOPs %g bytes %g, want %g and %g", p.FLOPs, p.Bytes, c.flops, c.bytes)
			}
			if c.noteMatch != "" && !strings.Contains(strings.Join(p.Notes, "\n"), c.noteMatch) {
				t.Errorf("notes %q lack %q", p.Notes, c.noteMatch)
			}
		})
	}
}

func TestAttnReferenceHandChecked(t *testing.T) {
	// D=64 (scale 1/8), one head, Lq=Lk=2. q0 = (8, 0…): s(q0,k0) = 0,
	// s(q0,k1) = 8·1/8 = 1. q1 = (0, 8, 0…): s = 0 and 0.
	// v0 = e0, v1 = e1.
	const D = 64
	q := make([]float32, 2*D)
	k := make([]float32, 2*D)
	v := make([]float32, 2*D)
	q[0], q[D+1] = 8, 8
	k[D] = 1 // k1 = e0
	v[0], v[D+1] = 1, 1
	e := math.E
	cases := []struct {
		causal bool
		o      [2][2]float64 // first two columns of O rows 0 and 1
		l      [2]float64
	}{
		// dense: row 0 p = (1, e)/(1+e); row 1 p = (1/2, 1/2)
		{false, [2][2]float64{{1 / (1 + e), e / (1 + e)}, {0.5, 0.5}}, [2]float64{math.Log(1 + e), math.Log(2)}},
		// causal (Lq = Lk): row 0 sees k0 only
		{true, [2][2]float64{{1, 0}, {0.5, 0.5}}, [2]float64{0, math.Log(2)}},
	}
	for _, c := range cases {
		s := kittest.Spec(attnfwd.AttnFwd{}, profiler.F32, map[string]int{"B": 1, "H": 1, "Hkv": 1, "Lq": 2, "Lk": 2, "D": D}, c.causal)
		ref, err := attnfwd.AttnFwd{}.Reference(s, profiler.Inputs{"Q": q, "K": k, "V": v}, 256, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ref.RowsChecked != 2 || ref.RowsTotal != 2 || ref.Rows != "all 2 rows" {
			t.Errorf("rows %d/%d %q", ref.RowsChecked, ref.RowsTotal, ref.Rows)
		}
		got := map[string]map[int]float64{}
		for _, ch := range ref.Checks {
			got[ch.Buffer] = map[int]float64{}
			for i, idx := range ch.Index {
				got[ch.Buffer][idx] = ch.Want[i]
			}
		}
		if len(got["O"]) != 2*D || len(got["L"]) != 2 {
			t.Fatalf("checks cover %d O and %d L elements", len(got["O"]), len(got["L"]))
		}
		for r := range 2 {
			for d := range 2 {
				if w := c.o[r][d]; math.Abs(got["O"][r*D+d]-w) > 1e-15 {
					t.Errorf("causal=%v O[%d][%d] = %.17g, want %.17g", c.causal, r, d, got["O"][r*D+d], w)
				}
			}
			for d := 2; d < D; d++ {
				if got["O"][r*D+d] != 0 {
					t.Errorf("O[%d][%d] = %g, want 0", r, d, got["O"][r*D+d])
				}
			}
			if math.Abs(got["L"][r]-c.l[r]) > 1e-15 {
				t.Errorf("causal=%v L[%d] = %.17g, want %.17g", c.causal, r, got["L"][r], c.l[r])
			}
		}
	}
}

func TestAttnReferenceLSEAndGQA(t *testing.T) {
	// Random inputs; L must equal log Σ exp(scale·q·k) computed directly,
	// query head h must read kv head h/(H/Hkv), and fully masked rows give
	// O = 0, L = -inf.
	a := attention.AttnShape{B: 2, H: 4, Hkv: 2, Lq: 9, Lk: 6, D: 64, Causal: true}
	rng := profiler.NewRNG(7)
	gen := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.Normal())
		}
		return x
	}
	q, k, v := gen(a.B*a.H*a.Lq*a.D), gen(a.B*a.Hkv*a.Lk*a.D), gen(a.B*a.Hkv*a.Lk*a.D)
	for r := range a.Rows() {
		b, h, i := a.RowBHI(r)
		o, lse := attention.AttnRowRef(a, q, k, v, b, h, i)
		n := i + a.Lk - a.Lq + 1 // causal keys seen
		if n <= 0 {
			if !math.IsInf(lse, -1) {
				t.Errorf("row %d (i=%d) sees no key but L = %g", r, i, lse)
			}
			for _, x := range o {
				if x != 0 {
					t.Fatalf("row %d sees no key but O has %g", r, x)
				}
			}
			continue
		}
		kvh := h / 2
		var sum float64
		num := make([]float64, a.D)
		for j := range n {
			var s float64
			for d := range a.D {
				s += float64(q[((b*a.H+h)*a.Lq+i)*a.D+d]) * float64(k[((b*a.Hkv+kvh)*a.Lk+j)*a.D+d])
			}
			w := math.Exp(s / 8)
			sum += w
			for d := range a.D {
				num[d] += w * float64(v[((b*a.Hkv+kvh)*a.Lk+j)*a.D+d])
			}
		}
		if math.Abs(lse-math.Log(sum)) > 1e-12 {
			t.Errorf("row %d: L = %.15g, direct log Σ exp = %.15g", r, lse, math.Log(sum))
		}
		for d := range a.D {
			if math.Abs(o[d]-num[d]/sum) > 1e-12 {
				t.Fatalf("row %d O[%d] = %g, direct %g", r, d, o[d], num[d]/sum)
			}
		}
	}
}

// simulateGPU computes attention the way the GPU kernels do in a 16-bit
// type: f32 scores, P rounded to dt before P·V, the row sum from the
// unrounded P, O rounded to dt. skipLast drops the last key of each row
// (an off-by-one) when set.
func simulateGPU(a attention.AttnShape, q, k, v []float32, dt profiler.DType, skipLast bool) (o, l []float32) {
	o = make([]float32, a.Rows()*a.D)
	l = make([]float32, a.Rows())
	scale := float32(a.Scale())
	for r := range a.Rows() {
		b, h, i := a.RowBHI(r)
		n := a.Visible(i)
		if skipLast {
			n--
		}
		kvh := a.KVHead(h)
		s := make([]float32, n)
		mx := float32(math.Inf(-1))
		for j := range n {
			var acc float32
			for d := range a.D {
				acc += q[a.QOffset(b, h, i)+d] * k[a.KVOffset(b, kvh, j)+d]
			}
			s[j] = acc * scale
			mx = max(mx, s[j])
		}
		var sum float32
		acc := make([]float32, a.D)
		for j := range n {
			p := float32(math.Exp(float64(s[j] - mx)))
			sum += p
			pr := dt.Round(p)
			for d := range a.D {
				acc[d] += pr * v[a.KVOffset(b, kvh, j)+d]
			}
		}
		for d := range a.D {
			o[r*a.D+d] = dt.Round(acc[d] / sum)
		}
		l[r] = mx + float32(math.Log(float64(sum)))
	}
	return o, l
}

func TestAttnToleranceSeparatesRightFromOffByOne(t *testing.T) {
	for _, dt := range profiler.FloatDTypes {
		for _, lk := range []int{16, 256} {
			s := kittest.Spec(attnfwd.AttnFwd{}, dt, map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": lk, "D": 64}, false)
			p, err := attnfwd.AttnFwd{}.Plan(s, kittest.CPU)
			if err != nil {
				t.Fatal(err)
			}
			in := profiler.Inputs{}
			for _, b := range p.Buffers[:3] {
				in[b.Name] = profiler.Fill(b, 3)
			}
			ref, err := attnfwd.AttnFwd{}.Reference(s, in, 1000, 3)
			if err != nil {
				t.Fatal(err)
			}
			a := attention.AttnShapeOf(s)
			for _, skip := range []bool{false, true} {
				o, l := simulateGPU(a, in["Q"], in["K"], in["V"], dt, skip)
				v := run.Verify(ref, map[string][]float32{"O": o, "L": l}, attnfwd.AttnFwd{}.Tolerance(dt))
				if v.Pass == skip {
					t.Errorf("%s Lk=%d skipLast=%v: pass=%v (max abs %.3g, rel %.3g, %d mismatches, tol %+v)", dt, lk, skip, v.Pass, v.MaxAbsErr, v.MaxRelErr, v.Mismatches, attnfwd.AttnFwd{}.Tolerance(dt))
				}
			}
		}
	}
}

// attn_fwd's defaults run everywhere, every dtype (f16/bf16 default to
// BQ=64, the 16·WM rows CUDA's tensor-core path needs at WM=4); BQ=32 set
// by hand is refused there with the fix in the message.
func TestAttnFwdDefaultsValid(t *testing.T) {
	for _, dev := range []profiler.DeviceInfo{kittest.CPU, kittest.M2, kittest.H100} {
		for _, dt := range profiler.FloatDTypes {
			s := profiler.Spec{Kernel: "attn_fwd", DType: dt}.WithDefaults(attnfwd.AttnFwd{}.Schema())
			if err := (attnfwd.AttnFwd{}).Validate(s, dev); err != nil {
				t.Errorf("%s %s defaults: %v", dev.Backend, dt, err)
			}
			s.Knobs["BQ"] = 32
			err := (attnfwd.AttnFwd{}).Validate(s, dev)
			tc := dev.Backend == "cuda" && dt != profiler.F32
			if !tc && err != nil {
				t.Errorf("%s %s BQ=32: %v", dev.Backend, dt, err)
			}
			if tc && (err == nil || !strings.Contains(err.Error(), "raise BQ or lower WM")) {
				t.Errorf("%s %s BQ=32: %v, want the tensor-core rule", dev.Backend, dt, err)
			}
		}
	}
}
