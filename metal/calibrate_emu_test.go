package metal_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// The calibration micro-kernels' source, compiled with g++ against the MSL
// emulation (testdata/mslemu) and run on small grids: the fill writes the
// hash the Go side computes, the copy copies (its tail loop included), and
// every arithmetic kernel's per-thread result equals the value worked out
// here in Go — so the kernels do the iterations and accumulators the
// FLOP counts say. It cannot show the Metal compiler accepts the text or
// how fast the kernels run on a Mac.

func calLaunch(t *testing.T, eb *mslemu.Backend, entry string, groups int, scalars []profiler.Scalar, bufs ...profiler.Buffer) {
	t.Helper()
	k, err := eb.Compile(profiler.Program{Source: "calibrate", Entry: entry, Macros: metal.CalMacros()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range bufs {
		names = append(names, fmt.Sprint("b", i))
	}
	d := &profiler.Dispatch{Name: entry, Grid: [3]int{groups, 1, 1}, Group: [3]int{metal.CalThreads, 1, 1}, Args: names, Scalars: scalars}
	if err := eb.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: bufs}}); err != nil {
		t.Fatal(err)
	}
}

func download(t *testing.T, eb *mslemu.Backend, b profiler.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Size())
	if err := eb.Download(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// roundHalf rounds a float32 in half's normal range to the nearest half
// (ties to even), as the emulated and the real f16 arithmetic do.
func roundHalf(f float32) float32 {
	const drop = 23 - 10
	b := math.Float32bits(f)
	b += 1<<(drop-1) - 1 + (b>>drop)&1
	return math.Float32frombits(b &^ (1<<drop - 1))
}

func TestCalibrationOnEmulator(t *testing.T) {
	// One emulator for both halves: each kernel is compiled once.
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	t.Run("kernels", func(t *testing.T) { calKernels(t, eb) })
	t.Run("flow", func(t *testing.T) { calFlow(t, eb) })
}

func calKernels(t *testing.T, eb *mslemu.Backend) {

	t.Run("fill and copy", func(t *testing.T) {
		const groups, seed = 2, 0x5eed
		stride := groups * metal.CalThreads
		n := 4*stride*2 + 37 // two passes of the four-load loop, then a tail
		src, _ := eb.Alloc(int64(16 * n))
		dst, _ := eb.Alloc(int64(16 * n))
		sc := []profiler.Scalar{profiler.I32Param("n", n), profiler.I32Param("seed", seed)}
		calLaunch(t, eb, "cal_fill", groups, sc, src)
		calLaunch(t, eb, "cal_copy", groups, sc, src, dst)
		s, d := download(t, eb, src), download(t, eb, dst)
		for i := range n {
			h := (uint32(i) ^ seed) * 2654435761
			h ^= h >> 15
			h *= 0x2c1b3c6d
			h ^= h >> 12
			want := [4]uint32{h | 1, h*3 + 1, h ^ 0x9e3779b9, ^h}
			for w := range 4 {
				if got := binary.LittleEndian.Uint32(s[16*i+4*w:]); got != want[w] {
					t.Fatalf("cal_fill element %d word %d = %#x, want %#x", i, w, got, want[w])
				}
			}
		}
		if string(s) != string(d) {
			for i := 0; i < len(s); i += 16 {
				if string(s[i:i+16]) != string(d[i:i+16]) {
					t.Fatalf("cal_copy: element %d of %d differs (%x vs %x)", i/16, n, s[i:i+16], d[i:i+16])
				}
			}
		}
	})

	in := metal.CalInputBytes()
	inF := make([]float32, len(in)/4)
	for i := range inF {
		inF[i] = math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:]))
	}
	math1 := func(t *testing.T, entry string, groups, iters int) []float32 {
		t.Helper()
		ib, _ := eb.Alloc(int64(len(in)))
		if err := eb.Upload(ib, in); err != nil {
			t.Fatal(err)
		}
		ob, _ := eb.Alloc(int64(4 * groups * metal.CalThreads))
		calLaunch(t, eb, entry, groups,
			[]profiler.Scalar{profiler.I32Param("iters", iters), profiler.F32Param("m", metal.CalFMAM), profiler.F32Param("c", metal.CalFMAC)}, ib, ob)
		raw := download(t, eb, ob)
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out
	}
	for _, half := range []bool{false, true} {
		round := func(f float32) float32 { return f }
		dt := "f32"
		if half {
			round, dt = roundHalf, "f16"
		}
		t.Run("fma "+dt, func(t *testing.T) {
			const groups, iters = 2, 5
			out := math1(t, "cal_fma_"+dt, groups, iters)
			for gid, got := range out {
				var s float32
				for k := range metal.FMAChains {
					x := round(inF[(gid+k)&1023])
					for range iters {
						x = round(float32(math.FMA(float64(x), metal.CalFMAM, metal.CalFMAC)))
					}
					s += x
				}
				if got != s {
					t.Fatalf("cal_fma_%s thread %d: %v, want %v (%d chains × %d iterations of x = fma(x, %g, %g))", dt, gid, got, s, metal.FMAChains, iters, metal.CalFMAM, metal.CalFMAC)
				}
			}
		})
		t.Run("simdgroup "+dt, func(t *testing.T) {
			const groups, iters = 1, 3
			out := math1(t, "cal_simdgroup_"+dt, groups, iters)
			var want float32
			for k := range metal.SimdAcc {
				acc := round(0.125 * float32(k))
				a, b := round(inF[k]), round(inF[metal.SimdAcc])
				for range iters {
					acc = round(acc + 8*a*b) // a row of a times a column of b: 8 equal products
				}
				want += acc + acc
			}
			for tid, got := range out {
				if got != want {
					t.Fatalf("cal_simdgroup_%s thread %d: %v, want %v (%d accumulators × %d iterations)", dt, tid, got, want, metal.SimdAcc, iters)
				}
			}
		})
	}
}

// The whole calibration, driven through the emulation as it is through the
// Metal backend on a Mac: every kernel compiles, the copy is checked, every
// arithmetic result is finite, and the figures follow from the work counts
// (the emulation reports every launch as 1 ms).
func calFlow(t *testing.T, eb *mslemu.Backend) {
	if testing.Short() {
		t.Skip("the full calibration flow runs each emulated kernel again; skipped in -short")
	}
	const groups, copyBytes = 1, 64 << 10
	c, err := metal.RunCalibration(eb, metal.CalDevice(), metal.CalTestSizes(groups, copyBytes))
	if err != nil {
		t.Fatal(err)
	}
	const ms = 1e-3
	if want := 2 * copyBytes / ms; c.CopyBandwidth != want {
		t.Errorf("copy bandwidth %g, want %g (2 × %d B in 1 ms)", c.CopyBandwidth, want, copyBytes)
	}
	// 16 iterations (the test cap); the simdgroup path does more work per
	// iteration than the FMA one, so it sets both dtypes' figures.
	simd := metal.SimdFLOPs(groups, metal.CalThreads, 16) / ms
	if fma := metal.FMAFLOPs(groups, metal.CalThreads, 16) / ms; fma >= simd {
		t.Fatalf("test premise: fma %g ≥ simdgroup %g", fma, simd)
	}
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		if c.FLOPS[dt] != simd {
			t.Errorf("%s: %g FLOP/s, want %g", dt, c.FLOPS[dt], simd)
		}
	}
	if _, ok := c.FLOPS[profiler.BF16]; ok || len(c.FLOPS) != 2 {
		t.Errorf("FLOPS %v: want f32 and f16 only", c.FLOPS)
	}
	details := strings.Join(c.Details, "\n")
	for _, e := range []string{"cal_copy", "cal_fma_f32", "cal_fma_f16", "cal_simdgroup_f32", "cal_simdgroup_f16"} {
		if !strings.Contains(details, e) {
			t.Errorf("details do not mention %s:\n%s", e, details)
		}
	}
	if c.Backend != "metal" || c.Device != metal.TestDev.Name {
		t.Errorf("calibration of %s/%s", c.Backend, c.Device)
	}
	t.Log(details)
}
