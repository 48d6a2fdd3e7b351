package run

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// wholeBackend downloads whole buffers only (no profiler.RangeDownloader).
type wholeBackend struct{ profiler.Backend }

func (wholeBackend) Download(buf profiler.Buffer, dst []byte) error {
	copy(dst, buf.(hostBuffer))
	return nil
}

// layoutIndexes are the orders checks list their elements in: rows (the
// families' sampled rows), all of a buffer, scattered single elements far
// apart and close together, out of order, repeated, and outside the
// buffer.
func layoutIndexes(n int) map[string][]int {
	rows := []int{}
	for _, r := range []int{0, 3, 40, 42, 200, n/64 - 1} {
		for d := range 64 {
			rows = append(rows, r*64+d)
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return map[string][]int{
		"rows":         rows,
		"all":          all,
		"scattered":    {5, 9000, 70_000, n - 1},
		"close":        {10, 12, 13, 14, 100, 101},
		"out of order": {900, 899, 898, 5, 6, 7, 40_000, 3},
		"repeated":     {7, 7, 8, 8, 7, 9},
		"outside":      {-1, 0, 1, n, n + 5, 2},
	}
}

// Every element a check lists is decoded from its place in the download,
// whether the ranges or the whole buffer are downloaded, in every order
// and dtype; elements outside the buffer are left to verify; a row is one
// run, not one per element.
func TestCheckLayoutDecodesEveryElement(t *testing.T) {
	const n = 1 << 17
	for _, dt := range []profiler.DType{profiler.F32, profiler.BF16, profiler.F16, profiler.I32, profiler.F64, profiler.U8, profiler.I16, profiler.U32, profiler.FP8E5M2} {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(i % 256) // exact in every dtype
		}
		raw := make([]byte, n*dt.Size())
		dt.Encode(raw, vals)
		plan := &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: dt, Elems: n}}}
		for name, idx := range layoutIndexes(n) {
			ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: idx, Want: make([]float64, len(idx))}}}
			for _, be := range []profiler.Backend{hostBackend{}, wholeBackend{}} {
				_, ranged := be.(profiler.RangeDownloader)
				r := &Runner{backend: be}
				chk, err := r.startCheck(ref, plan, map[string]profiler.Buffer{"o": hostBuffer(raw)}, profiler.Tolerance{})
				if err != nil {
					t.Fatal(err)
				}
				chk.compareFirst()()
				for k, i := range idx {
					if got := checkedValue(chk, 0, k); i >= 0 && i < n && got != float64(dt.Round(vals[i])) {
						t.Errorf("%s %s ranged %v: element %d (index %d) decoded %g, want %g", dt, name, ranged, k, i, got, dt.Round(vals[i]))
						break
					}
				}
				bl := chk.lay.bufs[0]
				if ranged && name == "rows" && (!bl.ranged || len(bl.checks[0].runs) != 6) {
					t.Errorf("%s rows: ranged %v, %d runs: want the ranges, one run per row", dt, bl.ranged, len(bl.checks[0].runs))
				}
				chk.release()
			}
		}
	}
}

// checkedValue is element k of check ci as the check decoded it.
func checkedValue(chk *outputCheck, ci, k int) float64 {
	if chk.vals64 != nil && chk.vals64[ci] != nil {
		return chk.vals64[ci][k]
	}
	return float64(chk.vals[ci][k])
}

// An f64 output is compared at f64 precision: a value float32 cannot
// hold matches its exact reference with a zero tolerance, and a
// difference float32 would round away is caught and reported.
func TestCheckComparesF64AtF64Precision(t *testing.T) {
	v := 1000 + 0x1p-30
	raw := make([]byte, 8*3)
	for i, x := range []float64{v, v, -v} {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	plan := &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: profiler.F64, Elems: 3}}}
	for _, c := range []struct {
		name  string
		want  []float64
		worst string // "" when it passes
	}{
		{"exact", []float64{v, v, -v}, ""},
		{"off by 2^-30", []float64{v, 1000, -v}, "o[1]=1000.0000000009313 want 1000 |Δ|=9.3e-10 > bound 0"},
	} {
		ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: []int{0, 1, 2}, Want: c.want}}}
		r := &Runner{backend: hostBackend{}}
		chk, err := r.startCheck(ref, plan, map[string]profiler.Buffer{"o": hostBuffer(raw)}, profiler.Tolerance{})
		if err != nil {
			t.Fatal(err)
		}
		v := chk.compareFirst()()
		chk.release()
		if v.Pass != (c.worst == "") || !strings.Contains(v.Worst, c.worst) {
			t.Errorf("%s: pass %v, worst %q; want %q", c.name, v.Pass, v.Worst, c.worst)
		}
	}
}

// The check's verdict is Verify's on the same values, element for
// element: counts, largest errors, the worst element and its message,
// with mismatches, NaN, a zero bound, indices outside the buffer and two
// checks of one buffer.
func TestCheckVerdictIsVerifys(t *testing.T) {
	const n = 300_000
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = profiler.BF16.Round(float32(math.Sin(float64(i))))
	}
	vals[1234] = float32(math.NaN())
	vals[250_000] += 0.5
	raw := make([]byte, n*2)
	profiler.BF16.Encode(raw, vals)
	decoded := make([]float32, n)
	profiler.BF16.Decode(raw, decoded)
	idx := layoutIndexes(n)
	rows := append(append([]int{}, idx["all"]...), idx["outside"]...)
	check := func(idx []int, growth bool) profiler.Check {
		want := make([]float64, len(idx))
		for k, i := range idx {
			if i >= 0 && i < n {
				want[k] = float64(decoded[i]) + 1e-3*math.Cos(float64(k))
			}
		}
		c := profiler.Check{Buffer: "o", Index: idx, Want: want, Dims: []int{n / 100, 100}}
		if growth {
			c.Growth = &profiler.Growth{Eps: 1e-7, N: 512, Mag: make([]float64, len(idx))}
			for k := range c.Growth.Mag {
				c.Growth.Mag[k] = float64(k % 7)
			}
		}
		return c
	}
	plan := &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: profiler.BF16, Elems: n}}}
	for _, tc := range []struct {
		name string
		ref  *profiler.Reference
		tol  profiler.Tolerance
	}{
		{"one check, growth", &profiler.Reference{Checks: []profiler.Check{check(rows, true)}}, profiler.Tolerance{ATol: 2e-3, RTol: 1e-2}},
		{"two checks, zero bound", &profiler.Reference{Checks: []profiler.Check{check(idx["rows"], false), check(idx["out of order"], true)}}, profiler.Tolerance{}},
	} {
		want := Verify(tc.ref, map[string][]float32{"o": decoded}, tc.tol)
		r := &Runner{backend: hostBackend{}}
		chk, err := r.startCheck(tc.ref, plan, map[string]profiler.Buffer{"o": hostBuffer(raw)}, tc.tol)
		if err != nil {
			t.Fatal(err)
		}
		got := chk.compareFirst()()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: verdict\n%+v\nwant Verify's\n%+v", tc.name, got, want)
		}
		if again, err := chk.again(); err != nil || !reflect.DeepEqual(again, want) {
			t.Errorf("%s: verdict after timing %+v (%v), want the same", tc.name, again, err)
		}
		chk.release()
	}
}

// The check after timing gives the first verdict when the outputs did not
// change, and compares again when they did: a changed checked element is
// caught, a changed byte between checked elements (downloaded with them)
// is not a mismatch.
func TestCheckAgainComparesChangedOutputs(t *testing.T) {
	const n = 1 << 16
	vals := make([]float32, n)
	idx := []int{}
	want := []float64{}
	for i := range vals {
		vals[i] = float32(i)
		if i%64 < 8 { // 8 checked of every 64: ranges with gaps in them
			idx = append(idx, i)
			want = append(want, float64(i))
		}
	}
	raw := make([]byte, 4*n)
	profiler.F32.Encode(raw, vals)
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: idx, Want: want}}}
	plan := &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: profiler.F32, Elems: n}}}
	tol := profiler.Tolerance{ATol: 0.5}
	r := &Runner{backend: hostBackend{}}
	chk, err := r.startCheck(ref, plan, map[string]profiler.Buffer{"o": hostBuffer(raw)}, tol)
	if err != nil {
		t.Fatal(err)
	}
	defer chk.release()
	first := chk.compareFirst()()
	if !first.Pass || first.Checked != len(idx) {
		t.Fatalf("first verdict %+v: want a pass over %d elements", first, len(idx))
	}
	for _, tc := range []struct {
		name string
		at   int // element changed
		pass bool
	}{
		{"unchanged", -1, true},
		{"an unchecked element between checked ones", 64*100 + 20, true},
		{"a checked element", 64*100 + 3, false},
	} {
		if tc.at >= 0 {
			profiler.F32.Encode(raw[4*tc.at:], []float32{-1})
		}
		got, err := chk.again()
		if err != nil {
			t.Fatal(err)
		}
		if got.Pass != tc.pass || (tc.pass && !reflect.DeepEqual(got, first)) {
			t.Errorf("%s: verdict %+v, want pass %v (the first verdict when passing)", tc.name, got, tc.pass)
		}
		if !tc.pass && !strings.HasPrefix(got.Worst, "o[6403]=-1 want 6403") {
			t.Errorf("%s: worst %q, want o[6403]", tc.name, got.Worst)
		}
		if tc.at >= 0 {
			profiler.F32.Encode(raw[4*tc.at:], vals[tc.at:tc.at+1])
		}
	}
}

// A reference whose values do not pair with its indices, or that checks a
// buffer the plan lacks, is refused with what to fix, before any compare
// could index past its slices.
func TestCheckLayoutRefusesBadReference(t *testing.T) {
	plan := &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: profiler.F32, Elems: 4}}}
	for _, tc := range []struct {
		name string
		c    profiler.Check
		msg  string
	}{
		{"fewer values", profiler.Check{Buffer: "o", Index: []int{0, 1}, Want: []float64{0}}, "check of o: 2 indices but 1 wanted values"},
		{"fewer magnitudes", profiler.Check{Buffer: "o", Index: []int{0, 1}, Want: []float64{0, 1}, Growth: &profiler.Growth{Mag: []float64{1}}}, "check of o: 2 indices but 1 growth magnitudes"},
		{"unknown buffer", profiler.Check{Buffer: "x", Index: []int{0}, Want: []float64{0}}, "reference checks unknown buffer x"},
	} {
		_, err := newCheckLayout(&profiler.Reference{Checks: []profiler.Check{tc.c}}, plan, true)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.msg)
		}
	}
}

// A runner lays out a reference once for the specs that share it, and
// again for buffers of another size.
func TestRunnerKeepsLayouts(t *testing.T) {
	r := &Runner{backend: hostBackend{}}
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: []int{0, 1}, Want: []float64{0, 1}}}}
	plan := func(n int64) *profiler.Plan {
		return &profiler.Plan{Buffers: []profiler.BufferSpec{{Name: "o", Role: profiler.Out, Type: profiler.F32, Elems: n}}}
	}
	a, _ := r.layout(ref, plan(8))
	b, _ := r.layout(ref, plan(8))
	c, _ := r.layout(ref, plan(16))
	if a != b || a == c || c.bufs[0].spec.Elems != 16 {
		t.Errorf("layouts %p %p %p: want the first two the same, the third new", a, b, c)
	}
	for range 2 * keptLayouts {
		r.layout(&profiler.Reference{Checks: ref.Checks}, plan(8))
	}
	if len(r.layouts) != keptLayouts {
		t.Errorf("%d layouts kept, want at most %d", len(r.layouts), keptLayouts)
	}
}

// The pool hands back a kept slice that is large enough, keeps at most
// poolSlices, and never one over maxScratchBytes.
func TestHostPool(t *testing.T) {
	var p hostPool[float32]
	s := p.get(100)
	if len(s) != 100 {
		t.Fatalf("len %d, want 100", len(s))
	}
	p.put(s)
	if u := p.get(50); len(u) != 50 || &u[0] != &s[0] {
		t.Error("a kept slice large enough was not reused")
	}
	if u := p.get(10); len(u) != 10 || cap(u) != 10 {
		t.Errorf("len %d cap %d from an empty pool, want a new slice of 10", len(u), cap(u))
	}
	p.put(make([]float32, maxScratchBytes/4+1))
	for range poolSlices + 3 {
		p.put(make([]float32, 8))
	}
	if len(p.free) != poolSlices {
		t.Errorf("%d slices kept, want %d", len(p.free), poolSlices)
	}
	for _, f := range p.free {
		if cap(f) != 8 {
			t.Errorf("kept a slice of %d elements: over maxScratchBytes", cap(f))
		}
	}
}
