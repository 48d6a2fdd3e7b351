package profiler

import (
	"hash/fnv"
	"math"
	"testing"
)

// logUnit agrees with math.Log to 1e−15 (relative, or absolute near
// u = 1) over the whole range of u a draw gives, ends and table cell
// edges included.
func TestLogUnit(t *testing.T) {
	us := []float64{0x1p-53, 0x1p-52, 0.5, 1 - 0x1p-53, 1, math.Sqrt2 / 2, 0.75, 1.0 / 3}
	for j := range 129 { // either side of each table cell's edge
		edge := (1 + (float64(j)+0.5)/128) / 2
		us = append(us, math.Nextafter(edge, 0), edge, math.Nextafter(edge, 1))
	}
	r := NewRNG(1)
	for range 200000 {
		us = append(us, float64(r.Uint64()>>11+1)*0x1p-53)
	}
	for _, u := range us {
		got, want := logUnit(u), math.Log(u)
		if d := math.Abs(got - want); d > 1e-15*math.Max(1, math.Abs(want)) {
			t.Fatalf("logUnit(%v) = %v, math.Log gives %v (off by %.3g)", u, got, want, d)
		}
	}
}

// turnCosSin agrees with math.Sincos to 2e−15 in every quadrant and at
// the quadrant edges (math.Sincos is given the angle rounded to float64,
// itself up to 7e−16 off).
func TestTurnCosSin(t *testing.T) {
	var ks []uint64
	for q := range uint64(4) {
		mid := q<<51 + 1<<50 // the edge between two quadrants of turnCosSin
		ks = append(ks, q<<51, mid-1, mid, mid+1)
	}
	ks = append(ks, 1<<53-1)
	r := NewRNG(2)
	for range 200000 {
		ks = append(ks, r.Uint64()>>11)
	}
	for _, k := range ks {
		c, s := turnCosSin(k)
		ws, wc := math.Sincos(2 * math.Pi * float64(k) * 0x1p-53)
		if math.Abs(c-wc) > 2e-15 || math.Abs(s-ws) > 2e-15 {
			t.Fatalf("turnCosSin(%d) = (%v, %v), math.Sincos gives (%v, %v)", k, c, s, wc, ws)
		}
	}
}

// NormalPair's outputs are standard normal and uncorrelated: mean,
// variance, the share within one and three sigma, and the correlation of
// a pair's two values, against their expectations to several standard
// errors.
func TestNormalPairDistribution(t *testing.T) {
	const pairs = 500000
	r := NewRNG(3)
	var sum, sq, cross, in1, in3 float64
	for range pairs {
		a, b := r.NormalPair()
		for _, z := range []float64{a, b} {
			sum += z
			sq += z * z
			if math.Abs(z) < 1 {
				in1++
			}
			if math.Abs(z) < 3 {
				in3++
			}
		}
		cross += a * b
	}
	n := 2.0 * pairs
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"mean", sum / n, 0, 5 / math.Sqrt(n)},
		{"variance", sq / n, 1, 5 * math.Sqrt(2/n)},
		{"within 1σ", in1 / n, 0.682689, 5 * math.Sqrt(0.2166/n)},
		{"within 3σ", in3 / n, 0.997300, 5 * math.Sqrt(0.0027/n)},
		{"pair correlation", cross / pairs, 0, 5 / math.Sqrt(pairs)},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %.5f, want %.5f ± %.5f", c.name, c.got, c.want, c.tol)
		}
	}
}

// The normal inputs are pinned: these bits are what every platform must
// make (the generator is plain IEEE arithmetic, no fused multiply-add).
// A change here changes every generated input and every float64
// reference made from them: make it on purpose, then update the hash.
func TestFillNormalPinned(t *testing.T) {
	h := fnv.New64a()
	for _, b := range []BufferSpec{
		{Name: "q", Type: F32, Elems: 4097, Init: InitNormal},
		{Name: "k", Type: BF16, Elems: 1000, Init: InitNormal, Mean: 0.5, Scale: 0.1},
	} {
		for _, v := range Fill(b, 42) {
			bits := math.Float32bits(v)
			h.Write([]byte{byte(bits), byte(bits >> 8), byte(bits >> 16), byte(bits >> 24)})
		}
	}
	if got, want := h.Sum64(), uint64(0x615d576968930d3e); got != want {
		t.Errorf("normal inputs hash to %#x, pinned %#x", got, want)
	}
}
