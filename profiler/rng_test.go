package profiler

import (
	"math"
	"testing"
)

// normal(0, 1, outliers=f, scale=k): about f of the elements are the
// plain draws times k, the same ones for the same seed, others for
// another seed; the rest are untouched.
func TestOutliers(t *testing.T) {
	n := 200000
	plain := BufferSpec{Name: "x", Type: F32, Elems: int64(n), Init: InitNormal, Scale: 1}
	spiky := plain
	spiky.Outliers, spiky.OutlierScale = 0.001, 50
	base, a, b := Fill(plain, 3), Fill(spiky, 3), Fill(spiky, 3)
	count := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("element %d differs between two fills of one seed", i)
		}
		switch {
		case a[i] == base[i]:
		case a[i] == base[i]*50:
			count++
		default:
			t.Fatalf("element %d = %v, neither %v nor 50× it", i, a[i], base[i])
		}
	}
	if count < n/1000/2 || count > n/1000*2 {
		t.Errorf("%d outliers of %d, want about %d", count, n, n/1000)
	}
	other := Fill(spiky, 4)
	otherBase := Fill(plain, 4)
	same := 0
	for i := range other {
		if other[i] != otherBase[i] && a[i] != base[i] {
			same++
		}
	}
	if same == count {
		t.Errorf("seed 4 picks the same %d outliers as seed 3", count)
	}
}

// InitData values are rounded to the buffer's dtype.
func TestFillData(t *testing.T) {
	b := BufferSpec{Name: "w", Type: BF16, Elems: 3, Init: InitData, Data: []float32{1, 1.00390625, float32(math.Pi)}}
	got := Fill(b, 1)
	want := []float32{1, 1, 3.140625}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d = %v, want %v (bf16)", i, got[i], want[i])
		}
	}
}

// BenchmarkFillNormal reports the cost of one bf16 normal input element
// (ns/element) on one core.
func BenchmarkFillNormal(b *testing.B) {
	buf := BufferSpec{Name: "q", Type: BF16, Elems: 1 << 20, Init: InitNormal, Scale: 1}
	for b.Loop() {
		Fill(buf, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(buf.Elems), "ns/element")
}

// A uniform init of one value is that constant, infinities included (an
// online softmax's running max starts at -inf): never NaN.
func TestFillConstantUniform(t *testing.T) {
	for _, v := range []float64{math.Inf(-1), math.Inf(1), 2.5, 0} {
		out := Fill(BufferSpec{Name: "m", Type: F32, Elems: 5, Init: InitUniform, Lo: v, Hi: v}, 1)
		for i, x := range out {
			if float64(x) != v {
				t.Fatalf("Lo = Hi = %g: element %d is %g", v, i, x)
			}
		}
	}
}

// randint on a float buffer (integer coordinates, so a reference's
// distances are exact): integers in [lo, hi), each rounded to the dtype
// as other inits are (f16 holds every integer only up to 2048).
func TestFillIntsIntoFloats(t *testing.T) {
	for _, c := range []struct {
		dt     DType
		lo, hi float64
	}{{F32, -12, 12}, {F16, 0, 5000}, {BF16, -300, 300}} {
		out := Fill(BufferSpec{Name: "xyz", Type: c.dt, Elems: 4000, Init: InitInts, Lo: c.lo, Hi: c.hi}, 1)
		for i, x := range out {
			if x != float32(math.Trunc(float64(x))) || x != c.dt.Round(x) || float64(x) < c.lo || float64(x) > c.hi {
				t.Fatalf("%s randint(%g, %g): element %d is %g", c.dt, c.lo, c.hi, i, x)
			}
		}
	}
}
