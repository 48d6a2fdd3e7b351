package run

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// The parallel fill and encode give exactly the sequential values and
// bytes, for every init that draws, odd sizes included, on every core or
// on the few a worker of several takes.
func TestFillMatchesSequential(t *testing.T) {
	for _, threads := range []int{0, 1, 3} {
		fillMatchesSequential(t, threads)
	}
}

func fillMatchesSequential(t *testing.T, threads int) {
	n := int64(5*fillChunk + 123)
	for _, b := range []profiler.BufferSpec{
		{Name: "odd", Type: profiler.F32, Elems: 2*fillChunk + 1, Init: profiler.InitNormal, Scale: 2},
		{Name: "edge", Type: profiler.F16, Elems: 2 * fillChunk, Init: profiler.InitNormal},
		{Name: "q", Type: profiler.BF16, Elems: n, Init: profiler.InitNormal, Scale: 0.5, Mean: 0.25},
		{Name: "k", Type: profiler.F32, Elems: n, Init: profiler.InitNormal},
		{Name: "u", Type: profiler.F16, Elems: n, Init: profiler.InitUniform, Lo: -2, Hi: 3},
		{Name: "ids", Type: profiler.I32, Elems: n, Init: profiler.InitInts, Lo: 0, Hi: 50257},
		// a constant (normal(m, 0)): -inf would be NaN as lo + (hi − lo)·u
		{Name: "running_max", Type: profiler.F32, Elems: n, Init: profiler.InitUniform, Lo: math.Inf(-1), Hi: math.Inf(-1)},
		{Name: "const", Type: profiler.BF16, Elems: n, Init: profiler.InitUniform, Lo: 0.3, Hi: 0.3},
		{Name: "small", Type: profiler.F32, Elems: 1000, Init: profiler.InitNormal},
		{Name: "one", Type: profiler.F32, Elems: n, Init: profiler.InitOnes},
		{Name: "spiky", Type: profiler.BF16, Elems: n, Init: profiler.InitNormal, Scale: 1, Outliers: 0.01, OutlierScale: 50},
		// integer patterns (IntBits): the full u32 and i32 spans, and i64's
		{Name: "hash", Type: profiler.U32, Elems: n, Init: profiler.InitInts, Lo: 0, Hi: 1 << 32, IntBits: true},
		{Name: "state", Type: profiler.I32, Elems: n, Init: profiler.InitInts, Lo: math.MinInt32, Hi: 1 << 31, IntBits: true},
		{Name: "offs", Type: profiler.I64, Elems: n, Init: profiler.InitInts, Lo: -1 << 31, Hi: 1<<31 - 5, IntBits: true},
		{Name: "words", Type: profiler.U64, Elems: n, Init: profiler.InitInts, Lo: 1<<24 + 1, Hi: 1 << 32, IntBits: true},
	} {
		want := profiler.Fill(b, 7)
		got := fill(b, 7, threads, threads%2 == 0)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", b.Name, len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s (%s): element %d = %v, want %v (sequential)", b.Name, b.Init, i, got[i], want[i])
			}
		}
		wb := make([]byte, b.Bytes())
		gb := make([]byte, b.Bytes())
		profiler.EncodeBuffer(b, wb, want)
		encode(b, gb, got, threads, threads%2 == 1)
		for i := range wb {
			if wb[i] != gb[i] {
				t.Fatalf("%s: encoded byte %d = %d, want %d", b.Name, i, gb[i], wb[i])
			}
		}
	}
}

// Any window of a normal buffer, at an odd or even start and of any
// length, is the same values as those elements of the whole fill: what
// lets chunks start anywhere.
func TestFillNormalAtWindows(t *testing.T) {
	b := profiler.BufferSpec{Name: "x", Type: profiler.F32, Elems: 41, Init: profiler.InitNormal, Mean: -1, Scale: 3}
	whole := profiler.Fill(b, 5)
	stream := profiler.SeedFor(5, b.Name)
	for first := 0; first < len(whole); first++ {
		for end := first; end <= len(whole); end++ {
			got := make([]float32, end-first)
			profiler.FillNormalAt(got, first, stream, b)
			for i, v := range got {
				if math.Float32bits(v) != math.Float32bits(whole[first+i]) {
					t.Fatalf("window [%d, %d): element %d = %v, want %v", first, end, first+i, v, whole[first+i])
				}
			}
		}
	}
}

// A uniform or ints chunk that starts at an odd element agrees too.
func TestFillRangeOddStart(t *testing.T) {
	for _, b := range []profiler.BufferSpec{
		{Name: "u", Type: profiler.F32, Elems: 17, Init: profiler.InitUniform, Lo: -1, Hi: 1},
		{Name: "i", Type: profiler.I32, Elems: 17, Init: profiler.InitInts, Lo: 0, Hi: 1000},
		{Name: "w", Type: profiler.U32, Elems: 17, Init: profiler.InitInts, Lo: 0, Hi: 1 << 32, IntBits: true},
		{Name: "n", Type: profiler.BF16, Elems: 17, Init: profiler.InitNormal},
	} {
		whole := profiler.Fill(b, 9)
		got := make([]float32, b.Elems)
		base := profiler.SeedFor(9, b.Name)
		for _, cut := range [][2]int{{0, 3}, {3, 8}, {8, 9}, {9, 17}} {
			fillRange(b, base, got, cut[0], cut[1])
		}
		for i := range whole {
			if math.Float32bits(got[i]) != math.Float32bits(whole[i]) {
				t.Fatalf("%s: element %d = %v, want %v", b.Init, i, got[i], whole[i])
			}
		}
	}
}
