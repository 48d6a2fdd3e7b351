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
		{Name: "q", Type: profiler.BF16, Elems: n, Init: profiler.InitNormal, Scale: 0.5, Mean: 0.25},
		{Name: "k", Type: profiler.F32, Elems: n, Init: profiler.InitNormal},
		{Name: "u", Type: profiler.F16, Elems: n, Init: profiler.InitUniform, Lo: -2, Hi: 3},
		{Name: "ids", Type: profiler.I32, Elems: n, Init: profiler.InitInts, Lo: 0, Hi: 50257},
		{Name: "small", Type: profiler.F32, Elems: 1000, Init: profiler.InitNormal},
		{Name: "one", Type: profiler.F32, Elems: n, Init: profiler.InitOnes},
		{Name: "spiky", Type: profiler.BF16, Elems: n, Init: profiler.InitNormal, Scale: 1, Outliers: 0.01, OutlierScale: 50},
	} {
		want := profiler.Fill(b, 7)
		got := fill(b, 7, threads)
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
		b.Type.Encode(wb, want)
		encode(b.Type, gb, got, threads)
		for i := range wb {
			if wb[i] != gb[i] {
				t.Fatalf("%s: encoded byte %d = %d, want %d", b.Name, i, gb[i], wb[i])
			}
		}
	}
}
