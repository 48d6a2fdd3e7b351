package user

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	_ "github.com/mltop/mltop/kernels/all" // the built-in families `against:` names
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestTransposeExampleAgainst(t *testing.T) {
	f, err := Load("../../examples/transpose/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, w := 5, 7
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16, Dims: map[string]int{"height": h, "width": w}}.WithDefaults(f.Schema())
	if err := f.Validate(s, cudaDev); err != nil {
		t.Fatal(err)
	}
	src := make([]float32, h*w)
	for i := range src {
		src[i] = float32(i)
	}
	ref, err := f.Reference(s, profiler.Inputs{"src": src}, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Checks) != 1 || ref.Checks[0].Buffer != "dst" || ref.Checks[0].Tol == nil || ref.Checks[0].Tol.ATol != 0 {
		t.Fatalf("checks %+v", ref.Checks)
	}
	good := make([]float32, h*w)
	for r := range h {
		for c := range w {
			good[c*h+r] = src[r*w+c]
		}
	}
	v := run.Verify(ref, map[string][]float32{"dst": good}, f.Tolerance(s.DType))
	if !v.Pass || v.Checked != h*w {
		t.Errorf("a right transpose fails: %+v", v)
	}
	bad := append([]float32(nil), good...)
	bad[3] += 1
	if v := run.Verify(ref, map[string][]float32{"dst": bad}, f.Tolerance(s.DType)); v.Pass || v.Mismatches != 1 {
		t.Errorf("a broken transpose passes: %+v", v)
	}
}

func TestMatmulExample(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/matmul/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, n, k := 3, 4, 5
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Dims: map[string]int{"M": m, "N": n, "K": k}}.WithDefaults(f.Schema())
	for _, bad := range []map[string]int{{"BN": 128, "WG": 64}, {"BM": 128, "BN": 128, "WG": 128}} {
		b := s.Clone()
		for kk, v := range bad {
			b.Knobs[kk] = v
		}
		if err := f.Validate(b, cudaDev); err == nil {
			t.Errorf("%v: the rules let it through", bad)
		}
	}
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Dispatches[0]; d.Grid != [3]int{1, 1, 1} || d.TGMBytes() != (64*16+16*64)*4 || len(d.Scalars) != 3 {
		t.Errorf("dispatch %+v", d)
	}
	a, bm := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range bm {
		bm[i] = float32(i%5) - 2
	}
	ref, err := f.Reference(s, profiler.Inputs{"A": a, "B": bm}, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := ref.Checks[0]
	if c.Tol == nil || c.Tol.ATol != 1e-4 {
		t.Errorf("f32 tolerance %+v", c.Tol)
	}
	for j, idx := range c.Index {
		r, col := idx/n, idx%n
		want := 0.0
		for kk := range k {
			want += float64(a[r*k+kk]) * float64(bm[kk*n+col])
		}
		if math.Abs(c.Want[j]-want) > 1e-12 {
			t.Errorf("C[%d] = %g, want %g", idx, c.Want[j], want)
		}
	}
	// bf16 keeps the default tolerance (tol lists only f32)
	sb := s.Clone()
	sb.DType = profiler.BF16
	if tl := f.tolFor(f.bufs[2], profiler.BF16); *tl != profiler.DefaultTolerances[profiler.BF16] {
		t.Errorf("bf16 tolerance %+v", tl)
	}
}

// The examples of in-place buffers and reductions load and plan on the CPU
// backend, and their Python references tell a right result from the one
// their broken twin computes.
func TestInOutAndReductionExamples(t *testing.T) {
	cpuDev := profiler.DeviceInfo{Backend: "cpu", Name: "cpu", MaxThreadsPerGroup: 1024, TGMPerGroup: 64 << 10, MemoryBytes: 8 << 30}
	for _, c := range []struct {
		dir   string
		roles map[string]profiler.Role
	}{
		{"adamw_inplace", map[string]profiler.Role{"params": profiler.InOut, "grads": profiler.In, "m": profiler.InOut, "v": profiler.InOut}},
		{"adamw_inplace_broken", map[string]profiler.Role{"params": profiler.InOut, "m": profiler.InOut}},
		{"row_sum", map[string]profiler.Role{"X": profiler.In, "Y": profiler.Out}},
		{"row_sum_broken", map[string]profiler.Role{"Y": profiler.Out}},
	} {
		f, err := Load("../../examples/" + c.dir + "/kernel.yaml")
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
			p, err := f.Plan(s, cpuDev)
			if err != nil {
				t.Fatalf("%s %s: %v", c.dir, dt, err)
			}
			for name, role := range c.roles {
				if b, ok := p.Buffer(name); !ok || b.Role != role {
					t.Errorf("%s: buffer %s %+v, want role %s", c.dir, name, b, role)
				}
			}
		}
	}
}

func TestRowSumExampleReference(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/row_sum/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rows, cols := 300, 1000
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16, Dims: map[string]int{"rows": rows, "cols": cols}}.WithDefaults(f.Schema())
	x := profiler.Fill(profiler.BufferSpec{Name: "X", Type: profiler.BF16, Elems: int64(rows * cols), Init: profiler.InitNormal, Scale: 1}, 1)
	ref, err := f.Reference(s, profiler.Inputs{"X": x}, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ref.RowsChecked != 16 || ref.RowsTotal != rows || ref.Checks[0].Growth == nil || ref.Checks[0].Growth.N != cols {
		t.Fatalf("ref: %d of %d rows, growth %+v", ref.RowsChecked, ref.RowsTotal, ref.Checks[0].Growth)
	}
	good, broken := make([]float32, rows), make([]float32, rows)
	for r := range rows {
		good[r] = blockSum(x[r*cols:(r+1)*cols], "")
		broken[r] = blockSum(x[r*cols:(r+1)*cols-1], "")
	}
	tol := f.Tolerance(s.DType)
	if v := run.Verify(ref, map[string][]float32{"Y": good}, tol); !v.Pass {
		t.Errorf("a right row sum fails: %s", v.Worst)
	}
	if v := run.Verify(ref, map[string][]float32{"Y": broken}, tol); v.Pass {
		t.Errorf("the broken twin (last column dropped) passes: %s", v.Worst)
	}
}

// TestArgsExamples: the examples of entries by C++ name and of
// signature-typed arguments load and plan, and their broken twins differ
// only in the source.
func TestArgsExamples(t *testing.T) {
	for _, c := range []struct {
		path  string
		dt    profiler.DType
		entry string
		check func(t *testing.T, d profiler.Dispatch)
	}{
		{"templated_entry", profiler.BF16, "scale_add<__nv_bfloat16, 4>", func(t *testing.T, d profiler.Dispatch) {
			if len(d.Scalars) != 2 || d.Scalars[0].Kind != profiler.ScalarF32 || d.Scalars[0].F != 0.75 || d.Scalars[1].Kind != profiler.ScalarU64 || d.Scalars[1].I != 1048577 {
				t.Errorf("scalars %+v", d.Scalars)
			}
			if d.Grid[0] != (1048577+511)/512 {
				t.Errorf("grid %v", d.Grid)
			}
		}},
		{"int_T", profiler.F32, "rms_forward", func(t *testing.T, d profiler.Dispatch) {
			if len(d.Scalars) != 3 || d.Scalars[1].Name != "T" || d.Scalars[1].I != 256 || d.Scalars[1].Kind != profiler.ScalarI32 {
				t.Errorf("scalars %+v", d.Scalars)
			}
			if c := d.Program.Code; strings.Contains(c, "#define T ") || strings.Contains(c, "using T ") {
				t.Errorf("T is the kernel's parameter, floatX the dtype; prepared source:\n%s", c)
			}
		}},
	} {
		for _, dir := range []string{c.path, c.path + "/broken"} {
			t.Run(dir, func(t *testing.T) {
				f, err := Load("../../examples/" + dir + "/kernel.yaml")
				if err != nil {
					t.Fatal(err)
				}
				s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
				for _, dev := range []profiler.DeviceInfo{cudaDev, {Backend: "cpu", Name: "cpu"}} {
					if err := f.Validate(s, dev); err != nil {
						t.Fatal(err)
					}
					p, err := f.Plan(s, dev)
					if err != nil {
						t.Fatal(err)
					}
					d := p.Dispatches[0]
					if d.Program.Entry != c.entry {
						t.Errorf("entry %q, want %q", d.Program.Entry, c.entry)
					}
					c.check(t, d)
				}
			})
		}
	}
}

// exampleKernels are the examples of whole programs, cooperative groups,
// cub and bf16 casts, each with its broken twin (expected: mismatch).
var exampleKernels = []string{
	"whole_program", "whole_program/broken",
	"coop_groups", "coop_groups/broken", "coop_groups/cub",
	"bf16_casts", "bf16_casts/broken",
}

// They load, and plan at each of their dtypes on the CPU backend (which
// then refuses to run them), with the names injected as the sources need.
func TestCXXExamplesLoadAndPlan(t *testing.T) {
	cpu := profiler.DeviceInfo{Backend: "cpu", Name: "test CPU", MaxThreadsPerGroup: 1024, MemoryBytes: 16 << 30}
	for _, ex := range exampleKernels {
		t.Run(ex, func(t *testing.T) {
			f, err := Load("../../examples/" + ex + "/kernel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(ex, "broken") != strings.Contains(f.Doc(), "expected status mismatch") {
				t.Errorf("a broken twin says it is expected to mismatch, and only it: %s", f.Doc())
			}
			for _, dt := range f.Schema().DTypes {
				s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
				if err := f.Validate(s, cpu); err != nil {
					t.Fatalf("%s: %v", dt, err)
				}
				p, err := f.Plan(s, cpu)
				if err != nil {
					t.Fatalf("%s: %v", dt, err)
				}
				code := p.Dispatches[0].Program.Code
				if strings.Contains(code, "int main(") || strings.Contains(code, "<<<") || strings.Contains(code, "push_macro") {
					t.Errorf("%s: host code or push_macro in the prepared code", dt)
				}
			}
		})
	}
	f, err := Load("../../examples/whole_program/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cpu)
	if err != nil {
		t.Fatal(err)
	}
	if code := p.Dispatches[0].Program.Code; strings.Contains(code, "#define ENABLE_BF16") || !strings.Contains(code, "constexpr int T = 1024;") {
		t.Errorf("f32 whole program: ENABLE_BF16 defined or T not declared:\n%s", code)
	}
	if b := p.Buffers[0]; b.Name != "out" || b.Type != profiler.F32 || b.Elems != 8*1024*768 {
		t.Errorf("the floatX buffer: %+v", b)
	}
}

// TestCXXExamplesCompileWithNVRTC compiles every example's prepared code
// with NVRTC where NVRTC and the CUDA toolkit's headers are found (no GPU
// needed); it skips elsewhere.
func TestCXXExamplesCompileWithNVRTC(t *testing.T) {
	for _, ex := range exampleKernels {
		f, err := Load("../../examples/" + ex + "/kernel.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
			p, err := f.Plan(s, cudaDev)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cuda.CheckCompile(p.Dispatches[0].Program, "")
			if err != nil && r.Compiler == "" {
				t.Skipf("NVRTC not found: %v", err)
			}
			if err != nil {
				t.Errorf("%s at %s: %v\n%s", ex, dt, err, r.Log)
				continue
			}
			t.Logf("%s at %s: %s, %d registers", ex, dt, r.Lowered, r.Registers)
		}
	}
}

// Every example that is not meant to be broken loads and its default spec
// validates on each platform it has a source for: its buffers bind to its
// entries' parameters (a stricter binding must not leave an example behind).
func TestExamplesValidate(t *testing.T) {
	paths, err := filepath.Glob("../../examples/*/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := filepath.Glob("../../examples/*/*/kernel.yaml")
	paths = append(paths, nested...)
	if len(paths) < 10 {
		t.Fatalf("found %d examples: %v", len(paths), paths)
	}
	for _, path := range paths {
		if strings.Contains(path, "broken") {
			continue
		}
		f, err := Load(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		s := profiler.Spec{Kernel: f.Name(), DType: f.Schema().DTypes[0]}.WithDefaults(f.Schema())
		for lang, dev := range map[string]profiler.DeviceInfo{"cuda": cudaDev, "metal": metalDev} {
			if f.SourcePath(lang) == "" {
				continue
			}
			if err := f.Validate(s, dev); err != nil {
				t.Errorf("%s (%s): %v", path, lang, err)
			}
		}
	}
}
