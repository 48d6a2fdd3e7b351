//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/mltop/mltop/metal/mtl"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
	"github.com/mltop/mltop/shaders"
)

// maxSamples is the counter sample buffer mltop asks for first (4096
// timestamps, 32 KB). A batch with more passes than half the buffer's
// samples is split over several command buffers.
const maxSamples = 4096

// Backend is the Metal profiler.Backend. All fields below are touched only
// on the worker thread.
type Backend struct {
	w    *worker
	raw  RawDevice
	mu   sync.Mutex // guards info, which Time updates when it falls back
	info profiler.DeviceInfo

	dev        mtl.Device
	queue      mtl.CommandQueue
	tsSet      mtl.CounterSet          // timestamp counter set (owned by the device)
	samples    mtl.CounterSampleBuffer // nil when counters are off
	nSamples   int                     // its size in samples
	flush      mtl.Buffer              // cache-flush buffer (cold reads it, dirty fills it), allocated on first use
	flushBytes int64
	flushK     *kernel // the cold flush kernel (l2flush.metal), compiled on first cold run

	timer  TimerState
	anchor [2]uint64 // (cpu ns, gpu ticks) read at Open: the calibration's first point

	cache map[string]*kernel

	// The last counter batch, for the self-test report.
	lastRaw []uint64
	lastCal Calibration
}

type kernel struct {
	p     *pipeline
	entry string
	slots []Slot // a user kernel's [[buffer(n)]] parameters (Bind); nil for built-ins
}

// Attrs reports the compiler's view of the pipeline.
func (k *kernel) Attrs() profiler.KernelAttrs {
	return profiler.KernelAttrs{StaticTGM: k.p.attrs.staticTGM, MaxThreads: k.p.attrs.maxThreads, ExecutionWidth: k.p.attrs.execWidth}
}

type buffer struct {
	id mtl.Buffer
	n  int64
}

func (b *buffer) Size() int64 { return b.n }

// Available says whether Metal can run here, and why not.
func Available() (bool, string) {
	b, err := Open()
	if err != nil {
		return false, err.Error()
	}
	name := b.Info().Name
	b.Close()
	return true, name
}

// Open finds the system default device and prepares the queue and, when
// the device supports stage-boundary sampling, the timestamp counters.
func Open() (profiler.Backend, error) {
	return open()
}

func open() (*Backend, error) {
	b := &Backend{cache: map[string]*kernel{}}
	loaded := false
	b.w = newWorker(func(f func() error) error {
		if !loaded {
			return f()
		}
		p := mtl.NewAutoreleasePool()
		defer p.Drain()
		return f()
	})
	err := b.w.do(func() error {
		if err := mtl.Load(); err != nil {
			return err
		}
		loaded = true
		p := mtl.NewAutoreleasePool()
		defer p.Drain()
		dev, err := mtl.CreateSystemDefaultDevice()
		if err != nil {
			return err
		}
		b.dev = dev
		b.raw, b.tsSet = rawDevice(dev)
		b.info = DeviceInfo(b.raw)
		b.flushBytes = FlushBytes(ParseChip(b.raw.Name, b.raw.Arch))
		if b.queue, err = dev.NewCommandQueue(); err != nil {
			return err
		}
		b.timer = NewTimerState(b.raw.HasTimestampSet, b.raw.StageBoundary)
		if b.timer.Counters {
			// The largest sample buffer a device accepts is not documented;
			// try smaller ones before giving up on counters.
			var err error
			for _, n := range []int{maxSamples, 1024, 256} {
				var sb mtl.CounterSampleBuffer
				if sb, err = newCounterSampleBuffer(dev, b.tsSet, n); err == nil {
					b.samples, b.nSamples = sb, n
					break
				}
			}
			if err != nil {
				b.timer.Fail(err)
			}
		}
		b.anchor[0], b.anchor[1] = dev.SampleTimestamps()
		b.info.Timer = b.timer.Name()
		return nil
	})
	if err != nil {
		b.w.stop()
		return nil, err
	}
	return b, nil
}

// do runs f on the Metal thread; after Close it fails instead.
func (b *Backend) do(f func() error) error {
	if b.w == nil {
		return errors.New("the Metal backend is closed")
	}
	return b.w.do(f)
}

// Info describes the device.
func (b *Backend) Info() profiler.DeviceInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.info
}

// noteFallback records a switch to command-buffer timing in the device info.
func (b *Backend) noteFallback() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.info.Timer = TimerCmdBuf
	b.info.Notes = append(b.info.Notes, b.timer.Reason)
}

// Timer says which timer Time currently uses and, after a fallback, why.
func (b *Backend) Timer() TimerState {
	var t TimerState
	_ = b.do(func() error { t = b.timer; return nil })
	return t
}

// Compile builds a program: mltop_common.h is pasted in front of the
// kernel source (newLibraryWithSource: has no include path), the Plan's
// macros become preprocessorMacros, and pipelines are cached by source
// hash and macros for the life of the backend.
func (b *Backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	if p.Code != "" { // a user kernel's own source: its includes pasted, #line kept
		macros, err := MacroPairs(p.Macros)
		if err != nil {
			return nil, err
		}
		src, err := AssembleUserSource(p)
		if err != nil {
			return nil, err
		}
		consts, err := ResolveConstants(src, p.Constants)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		// a template entry (scale_rows<float>) launches its host name
		src, entry, err := InstantiateEntry(src, p.Entry)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		sig, _, err := EntrySignature(src, entry)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		slots, err := Slots(sig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		if slots == nil {
			slots = []Slot{}
		}
		k, err := b.compileSource(src, entry, CompileOptions{Macros: macros, MathMode: DefaultMathMode, Constants: consts})
		if err != nil {
			return nil, err
		}
		// The pipeline is shared through the cache; the slots are this
		// program's (the same source and entry give the same ones).
		return &kernel{p: k.p, entry: k.entry, slots: slots}, nil
	}
	src, err := shaders.Source("metal", p.Source, ".metal")
	if err != nil {
		return nil, err
	}
	hdrs, err := shaders.Headers("metal")
	if err != nil {
		return nil, fmt.Errorf("reading Metal headers: %w", err)
	}
	macros, err := MacroPairs(p.Macros)
	if err != nil {
		return nil, err
	}
	consts, err := ResolveConstants(src, p.Constants)
	if err != nil {
		return nil, fmt.Errorf("%s.metal: %w", p.Source, err)
	}
	return b.compileSource(AssembleSource(hdrs[CommonHeader], src), p.Entry, CompileOptions{Macros: macros, MathMode: DefaultMathMode, Constants: consts})
}

func (b *Backend) compileSource(src, entry string, opt CompileOptions) (*kernel, error) {
	key := CacheKey(src, entry, opt)
	var k *kernel
	err := b.do(func() error {
		if c, ok := b.cache[key]; ok {
			k = c
			return nil
		}
		p, err := newPipeline(b.dev, src, entry, opt)
		if err != nil {
			return err
		}
		k = &kernel{p: p, entry: entry}
		b.cache[key] = k
		return nil
	})
	return k, err
}

// Alloc makes a shared-storage buffer.
func (b *Backend) Alloc(n int64) (profiler.Buffer, error) {
	var out *buffer
	err := b.do(func() error {
		id, err := newBuffer(b.dev, n)
		if err != nil {
			return err
		}
		out = &buffer{id: id, n: n}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Free releases a buffer.
func (b *Backend) Free(buf profiler.Buffer) {
	mb, ok := buf.(*buffer)
	if !ok || mb == nil {
		return
	}
	_ = b.do(func() error { mb.id.Release(); mb.id = mtl.Buffer{}; return nil })
}

func asBuffer(buf profiler.Buffer) (*buffer, error) {
	mb, ok := buf.(*buffer)
	if !ok || mb == nil || mb.id.Nil() {
		return nil, fmt.Errorf("buffer %T is not a live Metal buffer", buf)
	}
	return mb, nil
}

// Upload copies src into a buffer. Shared storage needs no synchronisation
// beyond the GPU being idle, which Run and Time guarantee by waiting.
func (b *Backend) Upload(buf profiler.Buffer, src []byte) error {
	mb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if int64(len(src)) > mb.n {
		return fmt.Errorf("upload of %d bytes into a %d-byte buffer", len(src), mb.n)
	}
	return b.do(func() error {
		copy(unsafe.Slice((*byte)(mb.id.Contents()), mb.n), src)
		return nil
	})
}

// Download copies a buffer into dst.
func (b *Backend) Download(buf profiler.Buffer, dst []byte) error {
	mb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if int64(len(dst)) > mb.n {
		return fmt.Errorf("download of %d bytes from a %d-byte buffer", len(dst), mb.n)
	}
	return b.do(func() error {
		copy(dst, unsafe.Slice((*byte)(mb.id.Contents()), mb.n))
		return nil
	})
}

// DownloadRanges copies parts of a buffer (see profiler.RangeDownloader);
// buffers are in shared storage, so each part is a copy from Contents.
func (b *Backend) DownloadRanges(buf profiler.Buffer, offsets []int64, dsts [][]byte) error {
	mb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if err := profiler.CheckRanges(mb.n, offsets, dsts); err != nil {
		return err
	}
	return b.do(func() error {
		all := unsafe.Slice((*byte)(mb.id.Contents()), mb.n)
		for i, off := range offsets {
			copy(dsts[i], all[off:])
		}
		return nil
	})
}

// prepared is a launch resolved to Metal objects.
type prepared struct {
	zero   *buffer
	k      *kernel
	bufs   []mtl.Buffer
	bind   Binding
	dynTGM int
	grid   MTLSize
	group  MTLSize
}

func prepare(ls []profiler.Launch) ([]prepared, error) {
	out := make([]prepared, len(ls))
	for i, l := range ls {
		d := l.Dispatch
		if d == nil {
			return nil, fmt.Errorf("launch %d has no dispatch", i)
		}
		if d.Zero != "" {
			zb, err := asBuffer(l.Zero)
			if err != nil {
				return nil, fmt.Errorf("zero-fill %s: %w", d.Name, err)
			}
			out[i].zero = zb
			continue
		}
		k, ok := l.Kernel.(*kernel)
		if !ok || k == nil {
			return nil, fmt.Errorf("dispatch %s: kernel %T was not compiled by the Metal backend", d.Name, l.Kernel)
		}
		if d.Threads() > k.p.attrs.maxThreads && k.p.attrs.maxThreads > 0 {
			return nil, fmt.Errorf("dispatch %s asks for %d threads per group but the pipeline allows %d (register pressure): lower WM/WN or WG", d.Name, d.Threads(), k.p.attrs.maxThreads)
		}
		out[i].k = k
		for j, a := range l.Args {
			mb, err := asBuffer(a)
			if err != nil {
				return nil, fmt.Errorf("dispatch %s argument %d (%s): %w", d.Name, j, d.Args[j], err)
			}
			out[i].bufs = append(out[i].bufs, mb.id)
		}
		bind, err := Bind(k.slots, len(l.Args), d.Scalars)
		if err != nil {
			return nil, fmt.Errorf("dispatch %s: %w", d.Name, err)
		}
		out[i].bind = bind
		out[i].dynTGM = d.DynamicTGM
		out[i].grid = MTLSize{Width: uint64(d.Grid[0]), Height: uint64(d.Grid[1]), Depth: uint64(d.Grid[2])}
		out[i].group = MTLSize{Width: uint64(d.Group[0]), Height: uint64(d.Group[1]), Depth: uint64(d.Group[2])}
	}
	return out, nil
}

// encode records one launch as its own pass, sampled as span says (an
// unsampled pass when span has no buffer).
func (b *Backend) encode(cb mtl.CommandBuffer, p *prepared, span mtl.SampleSpan) {
	if p.zero != nil {
		enc := cb.BlitCommandEncoder(span)
		enc.FillBuffer(p.zero.id, NSRange{Location: 0, Length: uint64(p.zero.n)}, 0)
		enc.EndEncoding()
		return
	}
	enc := cb.ComputeCommandEncoder(span)
	encodeDispatch(enc, p.k.p, p.bufs, p.bind, p.dynTGM, p.grid, p.group)
	enc.EndEncoding()
}

// flushBuffer allocates the zero-filled flush buffer (twice the SLC) on
// first use. Worker thread only.
func (b *Backend) flushBuffer() error {
	if !b.flush.Nil() {
		return nil
	}
	id, err := newBuffer(b.dev, b.flushBytes)
	if err != nil {
		return fmt.Errorf("allocating the %s cache-flush buffer: %w", units.Bytes(b.flushBytes), err)
	}
	clear(unsafe.Slice((*byte)(id.Contents()), b.flushBytes)) // the cold kernel's never relies on one byte value throughout
	b.flush = id
	return nil
}

// coldFlush prepares the cold flush launch: mltop_slc_flush reading the
// whole flush buffer. Not on the worker thread (Compile enters it).
func (b *Backend) coldFlush() (*prepared, error) {
	if b.flushK == nil {
		k, err := b.Compile(FlushProgram)
		if err != nil {
			return nil, fmt.Errorf("the cold-cache flush kernel: %w", err)
		}
		b.flushK = k.(*kernel)
	}
	var p *prepared
	err := b.do(func() error {
		if err := b.flushBuffer(); err != nil {
			return err
		}
		d := FlushDispatch(b.flushBytes, FlushGroups(b.info.Units))
		ps, err := prepare([]profiler.Launch{{Dispatch: d, Kernel: b.flushK, Args: []profiler.Buffer{&buffer{id: b.flush, n: b.flushBytes}}}})
		if err != nil {
			return err
		}
		p = &ps[0]
		return nil
	})
	return p, err
}

// encodeFlush prepares the caches for the next dispatch as mode says, in
// a pass of its own with no samples (untimed): cold runs the flush kernel
// (cold, non-nil), which reads twice the SLC and leaves only clean lines;
// dirty blit-fills the flush buffer, leaving dirty lines the next kernel
// must write back; hot does nothing.
func (b *Backend) encodeFlush(cb mtl.CommandBuffer, mode profiler.CacheMode, cold *prepared) error {
	switch mode {
	case profiler.CacheCold:
		b.encode(cb, cold, mtl.SampleSpan{})
	case profiler.CacheDirty:
		if err := b.flushBuffer(); err != nil {
			return err
		}
		enc := cb.BlitCommandEncoder(mtl.SampleSpan{})
		enc.FillBuffer(b.flush, NSRange{Location: 0, Length: uint64(b.flushBytes)}, 1)
		enc.EndEncoding()
	}
	return nil
}

// Run executes the launches once, in order, in one command buffer.
func (b *Backend) Run(ls []profiler.Launch) error {
	_, err := b.RunTimed(ls)
	return err
}

// Time runs the launches reps times. With counters, every launch is
// its own pass with start/end samples, many passes per command buffer;
// samples that are unusable switch the backend to command-buffer timing
// for good and the batch is measured again that way. Cold and dirty
// prepare the caches before EACH dispatch (see encodeFlush), as the CUDA
// backend and Nsight Compute's --cache-control all do, so each dispatch's
// time is that of the kernel alone on cold caches.
func (b *Backend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if reps < 1 {
		return profiler.Timing{}, fmt.Errorf("reps = %d: need at least 1", reps)
	}
	ps, err := prepare(ls)
	if err != nil {
		return profiler.Timing{}, err
	}
	var cold *prepared
	if mode == profiler.CacheCold {
		if cold, err = b.coldFlush(); err != nil {
			return profiler.Timing{}, err
		}
	}
	var t profiler.Timing
	err = b.do(func() error {
		if b.timer.Counters {
			s, err := b.timeCounters(ps, reps, mode, cold)
			if err == nil {
				t = profiler.Timing{Samples: s, Timer: TimerCounters}
				return nil
			}
			var gpuErr *gpuError
			if errors.As(err, &gpuErr) {
				return err // the kernel failed; a different timer will not help
			}
			// A calibration problem is not the counters' fault: this batch
			// uses command buffers, the next tries counters again. Bad
			// samples turn counters off for good.
			if !errors.Is(err, ErrCalibration) {
				b.timer.Fail(err)
				b.noteFallback()
			}
		}
		s, err := b.timeCmdBuf(ps, reps, mode, cold)
		if err != nil {
			return err
		}
		t = profiler.Timing{Samples: s, Timer: TimerCmdBuf}
		return nil
	})
	return t, err
}

// gpuError is a command buffer that failed on the GPU.
type gpuError struct{ err error }

func (e *gpuError) Error() string { return e.err.Error() }
func (e *gpuError) Unwrap() error { return e.err }

func (b *Backend) timeCounters(ps []prepared, reps int, mode profiler.CacheMode, cold *prepared) ([][]float64, error) {
	n := len(ps)
	if n == 0 {
		return make([][]float64, reps), nil
	}
	if 2*n > b.nSamples {
		return nil, fmt.Errorf("%d dispatches need %d samples per rep, more than the sample buffer holds (%d)", n, 2*n, b.nSamples)
	}
	perChunk := b.nSamples / (2 * n) // reps per command buffer
	out := make([][]float64, 0, reps)
	for done := 0; done < reps; {
		m := min(perChunk, reps-done)
		cb := b.queue.CommandBuffer()
		k := uint64(0)
		for range m {
			for i := range ps {
				if err := b.encodeFlush(cb, mode, cold); err != nil {
					return nil, &gpuError{err}
				}
				b.encode(cb, &ps[i], mtl.SampleSpan{Buffer: b.samples, Start: 2 * k, End: 2*k + 1})
				k++
			}
		}
		cpu0, gpu0 := b.dev.SampleTimestamps()
		if err := commitWait(cb); err != nil {
			return nil, &gpuError{err}
		}
		cpu1, gpu1 := b.dev.SampleTimestamps()
		raw, err := resolveTimestamps(b.samples, int(2*k))
		if err != nil {
			return nil, err
		}
		b.lastRaw, b.lastCal = raw, Calibration{CPU0: b.anchor[0], GPU0: b.anchor[1], CPU1: cpu1, GPU1: gpu1}
		pairs, err := Pairs(raw)
		if err != nil {
			return nil, err
		}
		// The anchor from Open gives a long, stable slope; if the GPU clock
		// restarted since (sleep), the readings around this batch alone are
		// tried, and become the new anchor when they work.
		ns, err := CounterDurations(pairs, Calibration{CPU0: b.anchor[0], GPU0: b.anchor[1], CPU1: cpu1, GPU1: gpu1}, gpu0, gpu1)
		if err != nil && errors.Is(err, ErrCalibration) {
			// Re-anchor (the GPU clock may have restarted after sleep) and
			// try the readings around this batch alone.
			b.anchor = [2]uint64{cpu0, gpu0}
			var err2 error
			if ns, err2 = CounterDurations(pairs, Calibration{CPU0: cpu0, GPU0: gpu0, CPU1: cpu1, GPU1: gpu1}, gpu0, gpu1); err2 == nil {
				err = nil
			}
		}
		if err != nil {
			return nil, err
		}
		for r := range m {
			out = append(out, ns[r*n:(r+1)*n])
		}
		done += m
	}
	return out, nil
}

func (b *Backend) timeCmdBuf(ps []prepared, reps int, mode profiler.CacheMode, cold *prepared) ([][]float64, error) {
	out := make([][]float64, reps)
	for r := range reps {
		out[r] = make([]float64, len(ps))
		for i := range ps {
			if mode != profiler.CacheHot {
				// Same queue, so the flush completes before the next buffer
				// starts; it is a buffer of its own so its time is not counted.
				fcb := b.queue.CommandBuffer()
				if err := b.encodeFlush(fcb, mode, cold); err != nil {
					return nil, err
				}
				fcb.Commit()
			}
			cb := b.queue.CommandBuffer()
			b.encode(cb, &ps[i], mtl.SampleSpan{})
			if err := commitWait(cb); err != nil {
				return nil, err
			}
			ns, err := CmdBufDuration(cb.GPUStartTime(), cb.GPUEndTime())
			if err != nil {
				return nil, err
			}
			out[r][i] = ns
		}
	}
	return out, nil
}

// Occupancy estimates groups per core from the generation table.
func (b *Backend) Occupancy(l profiler.Launch) profiler.Occupancy {
	var attrs profiler.KernelAttrs
	if l.Kernel != nil {
		attrs = l.Kernel.Attrs()
	}
	return Occupancy(b.info, l.Dispatch, attrs)
}

// Close releases every Metal object and stops the worker thread.
func (b *Backend) Close() error {
	if b.w == nil {
		return nil
	}
	err := b.w.do(func() error {
		for k, kn := range b.cache {
			kn.p.state.Release()
			delete(b.cache, k)
		}
		b.flush.Release()
		b.samples.Release()
		b.queue.Release()
		b.dev.Release()
		b.flush, b.samples, b.queue, b.dev = mtl.Buffer{}, mtl.CounterSampleBuffer{}, mtl.CommandQueue{}, mtl.Device{}
		return nil
	})
	b.w.stop()
	b.w = nil
	return err
}

// wallTime runs f on the worker and measures it with the monotonic clock.
func (b *Backend) wallTime(f func() error) (time.Duration, error) {
	var d time.Duration
	err := b.do(func() error {
		t0 := time.Now()
		err := f()
		d = time.Since(t0)
		return err
	})
	return d, err
}
