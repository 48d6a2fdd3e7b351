package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// Calibrate measures the host's ceilings the way the CPU kernels use it:
// a parallel memory copy over a buffer far larger than the last-level cache
// (bytes read + written), and float32 multiply-adds on all cores. The Go
// kernels compute in float32 whatever the storage dtype, so f16 and bf16
// get the float32 figure.
func (b *Backend) Calibrate() (run.Calibration, error) {
	c := run.Calibration{Backend: "cpu", Device: b.info.Name, Time: time.Now().UTC(), FLOPS: map[profiler.DType]float64{}}
	size := max(8*b.info.CacheBytes, 256<<20)
	size = min(size, 1<<30)
	bw, dt := copyBandwidth(int(size), runtime.NumCPU())
	c.CopyBandwidth = bw
	c.Details = append(c.Details, fmt.Sprintf("copy: %s each way on %d goroutines, best of 5 in %v", units.Bytes(size), runtime.NumCPU(), dt.Round(time.Millisecond)))
	fl, dt := fmaRate(runtime.NumCPU())
	for _, d := range profiler.FloatDTypes {
		c.FLOPS[d] = fl
	}
	c.Details = append(c.Details, fmt.Sprintf("f32 multiply-add: 8 independent chains per goroutine, best of 5 in %v; f16/bf16 compute in f32 here", dt.Round(time.Millisecond)))
	return c, nil
}

// copyBandwidth returns the best of five parallel copies, in bytes/s
// counting bytes read plus bytes written.
func copyBandwidth(size, workers int) (float64, time.Duration) {
	src := make([]byte, size)
	dst := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	chunk := (size + workers - 1) / workers
	best := time.Duration(1 << 62)
	start := time.Now()
	for rep := 0; rep < 5; rep++ {
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			lo := w * chunk
			hi := min(lo+chunk, size)
			if lo >= hi {
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst[lo:hi], src[lo:hi])
			}()
		}
		wg.Wait()
		best = min(best, time.Since(t0))
	}
	return CopyRate(int64(size), best), time.Since(start)
}

// CopyRate is bytes/s for a copy of n bytes (read n, write n) in d.
func CopyRate(n int64, d time.Duration) float64 { return 2 * float64(n) / d.Seconds() }

const fmaIters = 1 << 22

// fmaRate is the best of five runs of independent multiply-add chains on
// every core, in FLOP/s (2 per multiply-add).
func fmaRate(workers int) (float64, time.Duration) {
	best := time.Duration(1 << 62)
	start := time.Now()
	sink := make([]float32, workers)
	for rep := 0; rep < 5; rep++ {
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sink[w] = fmaChains(fmaIters)
			}()
		}
		wg.Wait()
		best = min(best, time.Since(t0))
	}
	return FMARate(workers, fmaIters, best), time.Since(start)
}

// FMARate is FLOP/s for workers goroutines each running iters steps of 8
// multiply-adds in d.
func FMARate(workers, iters int, d time.Duration) float64 {
	return float64(workers) * float64(iters) * 8 * 2 / d.Seconds()
}

func fmaChains(iters int) float32 {
	a0, a1, a2, a3, a4, a5, a6, a7 := float32(1), float32(2), float32(3), float32(4), float32(5), float32(6), float32(7), float32(8)
	const m, c = float32(0.999999), float32(1e-6)
	for i := 0; i < iters; i++ {
		a0 = a0*m + c
		a1 = a1*m + c
		a2 = a2*m + c
		a3 = a3*m + c
		a4 = a4*m + c
		a5 = a5*m + c
		a6 = a6*m + c
		a7 = a7*m + c
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}
