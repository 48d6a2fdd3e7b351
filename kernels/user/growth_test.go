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

// A kernel that sums in its f16 output type (an mma with an f16
// accumulator) fails the default f32 bound while correct: the verdict
// says that a sum in f16 explains every mismatch and what to set, and
// with `accumulate: T` it passes. A kernel wrong by far gets no such hint.
func TestMismatchWithinAnF16SumSaysAccumulateT(t *testing.T) {
	const n, rows = 4096, 64
	dt := profiler.F16
	x := profiler.Fill(profiler.BufferSpec{Name: "X", Type: dt, Elems: n * rows, Init: profiler.InitNormal, Scale: 1}, 3)
	ch := profiler.Check{Buffer: "Y"}
	squares := map[int]float64{}
	sumF16, scaled := make([]float32, rows), make([]float32, rows)
	for r := range rows {
		var sum, sq float64
		var acc float32
		for _, v := range x[r*n : (r+1)*n] {
			sum += float64(v)
			sq += float64(v) * float64(v)
			acc = dt.Round(acc + v) // every partial sum rounded to f16
		}
		ch.Index = append(ch.Index, r)
		ch.Want = append(ch.Want, sum)
		squares[r] = sq
		sumF16[r] = acc
		scaled[r] = dt.Round(float32(2 * sum))
	}
	e := map[string]any{"cols": n, "rows": rows}
	for _, c := range []struct {
		yLine    string
		got      []float32
		pass     bool
		wantHint bool
	}{
		{"  - {name: Y, dtype: T, shape: [rows], out: true, terms: cols}", sumF16, false, true},
		{"  - {name: Y, dtype: T, shape: [rows], out: true, terms: cols, accumulate: T}", sumF16, true, false},
		{"  - {name: Y, dtype: T, shape: [rows], out: true, terms: cols}", scaled, false, false},
	} {
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": withBuffers(t, xLine, c.yLine), "k.cu": usertest.Source}))
		if err != nil {
			t.Fatal(err)
		}
		g, err := growthFor(f.bufs[1], ch, dt, e, func(i int) float64 { return squares[i] })
		if err != nil {
			t.Fatal(err)
		}
		chk := ch
		chk.Growth = g
		ref := &profiler.Reference{Checks: []profiler.Check{chk}, RowsChecked: rows, RowsTotal: rows}
		v := run.Verify(ref, map[string][]float32{"Y": c.got}, outTol(f, f.bufs[1], dt))
		hinted := strings.Contains(v.Hint, "set `accumulate: T` on buffer Y") && strings.Contains(v.Hint, "sum in f16")
		if v.Pass != c.pass || hinted != c.wantHint || (!c.wantHint && v.Hint != "") {
			t.Errorf("%s: pass %v (want %v), hint %q (want one: %v); worst %s", c.yLine, v.Pass, c.pass, v.Hint, c.wantHint, v.Worst)
		}
	}
}
