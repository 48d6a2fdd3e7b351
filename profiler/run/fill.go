package run

import (
	"runtime"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// fillChunk is the elements one goroutine generates or encodes at a time.
const fillChunk = 1 << 18

// fill is profiler.Fill on all cores, value for value: every init that
// draws takes one draw per element (uniform and ints) or two per pair of
// elements (normal, see profiler.FillNormalAt), so each chunk seeds its
// generator at the state the sequential fill reaches there. Other inits
// (no draws) and small buffers go to profiler.Fill directly. background:
// made ahead of its spec, on threads of lowered priority (see parallel).
func fill(b profiler.BufferSpec, seed uint64, threads int, background bool) []float32 {
	if !drawsPerElement(b.Init) || b.Elems < 2*fillChunk || fillThreads(threads) == 1 {
		return profiler.Fill(b, seed)
	}
	out := make([]float32, b.Elems)
	base := profiler.SeedFor(seed, b.Name)
	parallel(int(b.Elems), threads, background, func(lo, hi int) {
		fillRange(b, base, out, lo, hi)
	})
	if b.Init == profiler.InitNormal && b.Outliers > 0 {
		parallel(len(out), threads, background, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if profiler.IsOutlier(b, seed, i) {
					out[i] = b.Type.Round(float32(float64(out[i]) * b.OutlierScale))
				}
			}
		})
	}
	return out
}

// drawsPerElement says whether init draws from the buffer's stream at a
// fixed rate, so that any range can be generated on its own.
func drawsPerElement(init profiler.InitKind) bool {
	return init == profiler.InitNormal || init == profiler.InitUniform || init == profiler.InitInts
}

// fillRange generates elements lo … hi−1 of b (a drawsPerElement init)
// into out, from the stream seeded base, as profiler.Fill does.
func fillRange(b profiler.BufferSpec, base uint64, out []float32, lo, hi int) {
	profiler.FillAt(out[lo:hi], lo, base, b)
}

// encode is profiler.EncodeBuffer(b, dst, vals) on threads goroutines
// (each element is encoded on its own), in the background like fill.
func encode(b profiler.BufferSpec, dst []byte, vals []float32, threads int, background bool) {
	size := b.Type.Size()
	if len(vals) < 2*fillChunk {
		profiler.EncodeBuffer(b, dst, vals)
		return
	}
	parallel(len(vals), threads, background, func(lo, hi int) { profiler.EncodeBuffer(b, dst[lo*size:hi*size], vals[lo:hi]) })
}

// fillThreads is the goroutines fill and encode use: threads, or
// GOMAXPROCS when threads is 0 (and never more).
func fillThreads(threads int) int {
	if threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return min(threads, runtime.GOMAXPROCS(0))
}

// parallel calls f over [0, n) in chunks of fillChunk on fillThreads(threads)
// goroutines. background (inputs made ahead of their spec) runs them at
// lowered priority (see inBackground), so the device threads of this and
// other workers on the host come first; inputs a spec waits for are made
// at normal priority.
func parallel(n, threads int, background bool, f func(lo, hi int)) {
	parallelChunks(n, fillChunk, threads, background, f)
}

// parallelChunks is parallel in chunks of chunk elements: f's lo is a
// multiple of chunk. background lowers the goroutines' threads'
// priority (each is a fresh thread, ended with its goroutine).
func parallelChunks(n, chunk, threads int, background bool, f func(lo, hi int)) {
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(fillThreads(threads), (n+chunk-1)/chunk) {
		wg.Go(func() {
			if background {
				inBackground()
			}
			for {
				mu.Lock()
				lo := next
				next += chunk
				mu.Unlock()
				if lo >= n {
					return
				}
				f(lo, min(lo+chunk, n))
			}
		})
	}
	wg.Wait()
}
