package user

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// thirdYAML is y = x/3 on f64 buffers: a third is not a float32, so a
// reference read through float32 is off by ~1e-8 relative, far past f64's
// tolerance (atol 1e-13, rtol 1e-12).
func thirdYAML(name, check string) string {
	return fmt.Sprintf(`name: %s
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  N: {default: 1000}
buffers:
  - {name: x, dtype: f64, shape: [N]}
  - {name: y, dtype: f64, shape: [N], out: true}
dispatches:
  - {entry: third, grid: ["cdiv(N, 64)"], threads: [64], args: [x, y, N]}
check: %s
`, name, check)
}

// thirdCU is the kernel's source; f64Backend reads the relative error it
// is to make from its "REL=" comment.
func thirdCU(rel string) string {
	return "// REL=" + rel + "\n" + `extern "C" __global__ void third(const double* x, double* y, int N) {}`
}

// f64Backend runs thirdCU kernels in Go: y = x/3·(1+REL) in float64.
type f64Backend struct{ enginetest.MemBackend }

type f64Kernel struct{ rel float64 }

func (f64Kernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{MaxThreads: 1024} }

type f64Buf struct{ b []byte }

func (m *f64Buf) Size() int64 { return int64(len(m.b)) }

func (b *f64Backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	_, after, _ := strings.Cut(p.Code, "REL=")
	rel, err := strconv.ParseFloat(strings.Fields(after)[0], 64)
	return f64Kernel{rel}, err
}
func (b *f64Backend) Alloc(n int64) (profiler.Buffer, error) { return &f64Buf{make([]byte, n)}, nil }
func (b *f64Backend) Free(profiler.Buffer)                   {}
func (b *f64Backend) Upload(buf profiler.Buffer, src []byte) error {
	copy(buf.(*f64Buf).b, src)
	return nil
}
func (b *f64Backend) Download(buf profiler.Buffer, dst []byte) error {
	copy(dst, buf.(*f64Buf).b)
	return nil
}
func (b *f64Backend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		rel := l.Kernel.(f64Kernel).rel
		x, y := l.Args[0].(*f64Buf), l.Args[1].(*f64Buf)
		for i := range int(l.Dispatch.Scalars[0].I) {
			v := math.Float64frombits(binary.LittleEndian.Uint64(x.b[8*i:]))
			binary.LittleEndian.PutUint64(y.b[8*i:], math.Float64bits(v/3*(1+rel)))
		}
	}
	return nil
}
func (b *f64Backend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if err := b.Run(ls); err != nil {
		return profiler.Timing{}, err
	}
	t := profiler.Timing{Timer: "fake", Cache: profiler.CacheFlush}
	for range reps {
		t.Samples = append(t.Samples, []float64{1000})
	}
	return t, nil
}

// An f64 output checked against another kernel is compared at f64
// precision and f64's tolerance (rtol 1e-12): 1e-13 relative apart passes
// (through float32 even equal outputs would be ~1e-8 apart), 1e-10 and
// 1e-6 apart are caught (f32's tolerance would let 1e-10 through).
func TestKernelCheckF64Precision(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "naive/kernel.yaml"), thirdYAML("k64_naive", "none"))
	writeFile(t, filepath.Join(dir, "naive/k.cu"), thirdCU("0"))
	for _, c := range []struct {
		name, rel string
		pass      bool
	}{
		{"k64_exact", "0", true},
		{"k64_close", "1e-13", true},
		{"k64_off10", "1e-10", false},
		{"k64_off6", "1e-6", false},
	} {
		writeFile(t, filepath.Join(dir, c.name, "kernel.yaml"), thirdYAML(c.name, "{kernel: ../naive/kernel.yaml}"))
		writeFile(t, filepath.Join(dir, c.name, "k.cu"), thirdCU(c.rel))
		if _, err := Register(filepath.Join(dir, c.name, "kernel.yaml")); err != nil {
			t.Fatal(err)
		}
		r := run.NewRunner(&f64Backend{})
		res := r.Run(context.Background(), profiler.Spec{Kernel: c.name, DType: profiler.F32, Dims: map[string]int{"N": 300}}, enginetest.QuickOptions(), nil)
		if c.pass && (res.Status != profiler.StatusOK || res.Verdict.Checked != 300) {
			t.Errorf("%s (%s apart): %s %s %+v", c.name, c.rel, res.Status, res.Error, res.Verdict)
		}
		if !c.pass && (res.Status != profiler.StatusMismatch || res.Verdict.Mismatches == 0) {
			t.Errorf("%s (%s apart) is not caught: %s %s %+v", c.name, c.rel, res.Status, res.Error, res.Verdict)
		}
	}
}
