package user

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// blockSum is a GPU block reduce simulated on the CPU: 256 threads each
// sum a strided share of the row in float32, then a float32 tree. broken
// picks a twin: "drop" (thread 0 skips its last term), "offbyone" (the
// last tile of 256 starts one element early: x[N-257] twice, x[N-1]
// never), "scale" (the result times 1+2^-10).
func blockSum(x []float32, broken string) float32 {
	const threads = 256
	var part [threads]float32
	n := len(x)
	for t := range threads {
		for i := t; i < n; i += threads {
			if broken == "drop" && t == 0 && i+threads >= n {
				continue
			}
			j := i
			if broken == "offbyone" && i >= n-threads {
				j = i - 1
			}
			part[t] += x[j]
		}
	}
	for w := threads / 2; w > 0; w /= 2 {
		for t := range w {
			part[t] += part[t+w]
		}
	}
	if broken == "scale" {
		return part[0] * (1 + 0x1p-10)
	}
	return part[0]
}

// A correct reduction of 2^10…2^17 terms of f32, f16 or bf16 inputs,
// summed in f32 into an f32 output, always passes its bound with the
// growth of `terms: cols`; each broken twin is caught, except a single
// term missing from a sum of 2^14 or more positive terms (an error of
// 1/n, under f32's rtol). The test
// logs the smallest relative error the bound catches (docs' table).
func TestTermsGrowthBlockReduce(t *testing.T) {
	y := withBuffers(t, xLine, "  - {name: Y, dtype: f32, shape: [rows], out: true, terms: cols}")
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
	if err != nil {
		t.Fatal(err)
	}
	yb := f.bufs[1]
	var table []string
	for _, dt := range profiler.FloatDTypes {
		if tol := outTol(f, yb, dt); tol != profiler.DefaultTolerances[profiler.F32] {
			t.Fatalf("an f32 output of a %s spec is held to %+v, want f32's tolerance", dt, tol)
		}
		for _, inputs := range []string{"normal", "positive"} {
			row := []string{string(dt), inputs}
			for lg := 10; lg <= 17; lg++ {
				n := 1 << lg
				caught := growthCase(t, f, yb, dt, inputs, n)
				row = append(row, fmt.Sprintf("%.1e", caught))
			}
			table = append(table, "| "+strings.Join(row, " | ")+" |")
		}
	}
	t.Logf("smallest relative error caught (scale twin), N = 2^10 … 2^17:\n%s", strings.Join(table, "\n"))
}

// growthCase checks one dtype, input kind and length over several rows
// and returns the smallest relative error of the result the bound catches.
func growthCase(t *testing.T, f *Family, yb ubuf, dt profiler.DType, inputs string, n int) float64 {
	rows := max(8, (1<<18)/n)
	x := profiler.Fill(profiler.BufferSpec{Name: "X", Type: dt, Elems: int64(rows * n), Init: profiler.InitNormal, Scale: 1}, uint64(n))
	if inputs == "positive" {
		for i := range x {
			x[i] = dt.Round(float32(math.Abs(float64(x[i]))))
		}
	}
	ch := profiler.Check{Buffer: "Y"}
	squares := map[int]float64{}
	for r := range rows {
		var sum, sq float64
		for _, v := range x[r*n : (r+1)*n] {
			sum += float64(v)
			sq += float64(v) * float64(v)
		}
		ch.Index = append(ch.Index, r)
		ch.Want = append(ch.Want, sum)
		squares[r] = sq
	}
	e := map[string]any{"cols": n, "rows": rows}
	g, err := growthFor(yb, ch, dt, e, func(i int) float64 { return squares[i] })
	if err != nil {
		t.Fatal(err)
	}
	ch.Growth = g
	ref := &profiler.Reference{Checks: []profiler.Check{ch}, RowsChecked: rows, RowsTotal: rows}
	tol := outTol(f, yb, dt)
	caught := math.Inf(1)
	for k, w := range ch.Want {
		caught = min(caught, ch.Bound(k, tol)/math.Abs(w))
	}
	for _, broken := range []string{"", "drop", "offbyone", "scale"} {
		got := make([]float32, rows)
		for r := range rows {
			got[r] = blockSum(x[r*n:(r+1)*n], broken)
		}
		v := run.Verify(ref, map[string][]float32{"Y": got}, tol)
		if broken == "" && !v.Pass {
			t.Errorf("%s %s n=%d: a correct reduction fails: %s", dt, inputs, n, v.Worst)
		}
		// One term of a sum of n all-positive terms is 1/n of it: from
		// 2^14 terms on, at or below f32's rtol 1e-4 plus the growth term.
		hidden := inputs == "positive" && n >= 1<<14 && broken != "scale"
		if broken != "" && v.Pass && !hidden {
			t.Errorf("%s %s n=%d: the %s twin passes (worst %s)", dt, inputs, n, broken, v.Worst)
		}
	}
	return caught
}

// outTol is the tolerance output b is checked with at dt.
func outTol(f *Family, b ubuf, dt profiler.DType) profiler.Tolerance {
	if t := f.tolFor(b, dt); t != nil {
		return *t
	}
	return f.Tolerance(dt)
}
