//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// Available says whether the backend can run here, and if not, why: the
// driver loads, it sees a device, and NVRTC loads.
func Available() (bool, string) {
	n, err := DeviceCount()
	if err != nil {
		return false, err.Error()
	}
	if n == 0 {
		return false, noGPU
	}
	nv, err := loadNVRTC()
	if err != nil {
		return false, err.Error()
	}
	ma, mi, _ := nv.version()
	return true, fmt.Sprintf("%d GPU(s), NVRTC %d.%d from %s", n, ma, mi, nv.path)
}

// DeviceCount is how many GPUs the driver shows this process (those that
// CUDA_VISIBLE_DEVICES lets through). It creates no context, so a parent
// can count the GPUs and leave them to its workers.
func DeviceCount() (int, error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	if err := d.call("cuInit", d.cuInit, 0); err != nil {
		return 0, fmt.Errorf("the NVIDIA driver does not start: %w", err)
	}
	var n int32
	if err := d.call("cuDeviceGetCount", d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, fmt.Errorf("%s: %w", noGPU, err)
	}
	return int(n), nil
}

const noGPU = "the NVIDIA driver sees no GPU"

// backend is the CUDA profiler.Backend. Every driver call runs on the
// goroutine started by Open, locked to its OS thread, where the context is
// current; callers hand it closures through cmds.
type backend struct {
	drv    *driver
	nv     *nvrtc
	cmds   chan func()
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once
	cache  *cubinCache

	info     profiler.DeviceInfo
	dev      int32
	ctx      uintptr
	stream   uintptr
	arch     string
	compiler string // "nvrtc-13.0"
	reserved int    // shared memory the driver reserves per block
	headers  map[string]string
	flush    *buffer // flushFactor × L2 of zeros, read (cold) or written (dirty) before each sample
	flushMu  sync.Mutex
	flushK   *kernel // mltop_l2_flush, compiled on the first cold sample
	clockK   *kernel // mltop_sm_clock, compiled on the first timing loop
	clockBuf *buffer // the clock probes' cycles and nanoseconds
	noClock  bool    // the probe did not compile: timings carry no clock
	events   []uintptr
	// kclock reads kernels' own GPU timestamps (CUPTI); nil: events only.
	kclock     *cuptiLib
	kclockWarn sync.Once
	compiles   int
	lost       error // set after a sticky error
	statsMu    sync.Mutex
	inflight   map[string]chan struct{} // compiles under way, by cache key
}

type buffer struct {
	ptr  uint64
	size int64
}

func (b *buffer) Size() int64 { return b.size }

type kernel struct {
	mod, fn uintptr
	name    string
	attrs   profiler.KernelAttrs
	maxDyn  int // current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
}

func (k *kernel) Attrs() profiler.KernelAttrs { return k.attrs }

// Open loads the driver and NVRTC, creates a context on device
// MLTOP_CUDA_DEVICE (default 0) and reads the device's limits.
func Open() (profiler.Backend, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	nv, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	hdrs, err := shaders.Headers("cuda")
	if err != nil {
		return nil, fmt.Errorf("reading the embedded CUDA headers: %w", err)
	}
	ordinal := 0
	if s := os.Getenv("MLTOP_CUDA_DEVICE"); s != "" {
		ordinal, err = strconv.Atoi(s)
		if err != nil || ordinal < 0 {
			return nil, fmt.Errorf("MLTOP_CUDA_DEVICE=%q is not a device number: use 0, 1, …", s)
		}
	}
	b := &backend{drv: drv, nv: nv, cmds: make(chan func()), quit: make(chan struct{}), exited: make(chan struct{}), cache: newCubinCache(DefaultCacheDir()), headers: hdrs}
	ready := make(chan error, 1)
	go b.loop(ordinal, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return b, nil
}

// loop is the CUDA thread: it sets up the context, then runs commands until
// Close.
func (b *backend) loop(ordinal int, ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.setup(ordinal); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for {
		select {
		case f := <-b.cmds:
			f()
		case <-b.quit:
			b.teardown()
			close(b.exited)
			return
		}
	}
}

// do runs f on the CUDA thread and waits. A panic in f becomes an error.
func (b *backend) do(f func() error) (err error) {
	errc := make(chan error, 1)
	run := func() {
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("panic on the CUDA thread: %v", p)
			}
		}()
		errc <- f()
	}
	select {
	case b.cmds <- run:
	case <-b.quit:
		return errors.New("the CUDA backend is closed")
	}
	return <-errc
}

// check records sticky errors: after one, every call fails with the first.
func (b *backend) check(err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Sticky() && b.lost == nil {
		b.lost = err
		if os.Getenv(ExitOnFaultEnv) != "" {
			// A worker process: die now so the parent records the spec as
			// crashed and the next spec gets a fresh process and context.
			fmt.Fprintf(os.Stderr, "mltop cuda: %v\nthe CUDA context is lost; the worker exits so that the next spec gets a fresh one\n", err)
			os.Exit(70)
		}
	}
	return err
}

func (b *backend) alive() error {
	if b.lost != nil {
		return fmt.Errorf("%w (first error: %v)", ErrContextLost, b.lost)
	}
	return nil
}

// Lost reports the sticky error that made the context unusable, or nil. The
// worker uses it to exit so that the next spec gets a fresh process.
func (b *backend) Lost() error {
	var err error
	b.do(func() error { err = b.lost; return nil })
	return err
}

func (b *backend) attr(a int) int {
	var v int32
	if err := b.drv.call("cuDeviceGetAttribute", b.drv.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(b.dev)); err != nil {
		return 0
	}
	return int(v)
}

func (b *backend) setup(ordinal int) error {
	d := b.drv
	if err := d.call("cuInit", d.cuInit, 0); err != nil {
		return fmt.Errorf("the NVIDIA driver does not start: %w", err)
	}
	var count int32
	if err := d.call("cuDeviceGetCount", d.cuDeviceGetCount, uintptr(unsafe.Pointer(&count))); err != nil {
		return err
	}
	if int(count) <= ordinal {
		return fmt.Errorf("CUDA device %d asked for but the driver sees %d GPU(s)", ordinal, count)
	}
	if err := d.call("cuDeviceGet", d.cuDeviceGet, uintptr(unsafe.Pointer(&b.dev)), uintptr(ordinal)); err != nil {
		return err
	}
	if err := d.call("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&b.ctx)), uintptr(b.dev)); err != nil {
		return err
	}
	if err := d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, b.ctx); err != nil {
		return err
	}
	if err := d.call("cuStreamCreate", d.cuStreamCreate, uintptr(unsafe.Pointer(&b.stream)), cuStreamNonBlocking); err != nil {
		return err
	}
	name := make([]byte, 256)
	if err := d.call("cuDeviceGetName", d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(b.dev)); err != nil {
		return err
	}
	var total uintptr
	if err := d.call("cuDeviceTotalMem_v2", d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(b.dev)); err != nil {
		return err
	}
	major, minor := b.attr(attrComputeCapMajor), b.attr(attrComputeCapMinor)
	b.arch = ArchName(major, minor)
	nvMa, nvMi, err := b.nv.version()
	if err != nil {
		return err
	}
	b.compiler = fmt.Sprintf("nvrtc-%d.%d", nvMa, nvMi)
	var drvVer int32
	d.call("cuDriverGetVersion", d.cuDriverGetVersion, uintptr(unsafe.Pointer(&drvVer)))
	b.reserved = b.attr(attrReservedSharedPerBlk)

	devName := strings.TrimRight(string(name[:clen(name)]), " ")
	peak, src := PeakFLOPS(devName, major)
	info := profiler.DeviceInfo{
		Backend:            "cuda",
		Name:               devName,
		Vendor:             "NVIDIA",
		Arch:               b.arch,
		Features:           Features(major, minor),
		MaxGrid:            MaxGrid,
		Units:              b.attr(attrMultiprocessorCount),
		UnitName:           "SM",
		TGMPerGroup:        b.attr(attrMaxSharedPerBlock),
		TGMPerGroupOptIn:   b.attr(attrMaxSharedPerBlockOpt),
		TGMPerUnit:         b.attr(attrMaxSharedPerSM),
		MaxThreadsPerGroup: b.attr(attrMaxThreadsPerBlock),
		MaxThreadsPerUnit:  b.attr(attrMaxThreadsPerSM),
		MaxGroupsPerUnit:   b.attr(attrMaxBlocksPerSM),
		RegistersPerUnit:   b.attr(attrMaxRegistersPerSM),
		SIMDWidth:          b.attr(attrWarpSize),
		MemoryBytes:        int64(total),
		CacheBytes:         int64(b.attr(attrL2CacheSize)),
		PeakFLOPS:          peak,
		PeakBandwidth:      PeakBandwidth(b.attr(attrMemoryClockRate), b.attr(attrGlobalMemoryBusWidth)),
		Timer:              TimerEvents,
		Notes: []string{
			fmt.Sprintf("compute capability %d.%d, target %s, %s (%s), driver %d.%d", major, minor, b.arch, b.compiler, b.nv.path, drvVer/1000, drvVer%1000/10),
		},
	}
	if src != "" {
		info.Notes = append(info.Notes, "peak FLOP/s: "+src+" (dense, f32 accumulate)")
	} else {
		info.Notes = append(info.Notes, "peak FLOP/s unknown for this GPU: % of peak is not shown")
	}
	if info.PeakBandwidth == 0 {
		info.Notes = append(info.Notes, "the driver reports no memory clock: % of peak bandwidth is not shown")
	}
	kc, why, err := openKernelClock()
	if err != nil {
		return err
	}
	b.kclock = kc
	if kc != nil {
		info.Timer = TimerKernel
		info.Notes = append(info.Notes, "timer: each kernel's own GPU start/end timestamps through CUPTI ("+kc.path+"); "+TimerEnv+"=events for CUDA events around each launch")
	} else {
		info.Notes = append(info.Notes, "timer: CUDA events around each launch, which include about 2-4 µs of launch per kernel ("+why+")")
	}
	b.info = info

	// The cold-cache scratch: flushFactor × the L2, zero-filled (the flush
	// kernel's store condition depends on it).
	if l2 := info.CacheBytes; l2 > 0 {
		f, err := b.alloc(flushFactor * l2)
		if err != nil {
			return fmt.Errorf("allocating the L2 flush buffer: %w", err)
		}
		b.flush = f
		if cb, err := b.alloc(32); err == nil {
			b.clockBuf = cb // else no probe: timings carry no clock
		}
		if err := d.call("cuMemsetD8Async", d.cuMemsetD8Async, uintptr(f.ptr), 0, uintptr(f.size), b.stream); err != nil {
			return err
		}
		if err := d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream); err != nil {
			return err
		}
	}
	return nil
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

func (b *backend) teardown() {
	d := b.drv
	for _, e := range b.events {
		d.call("cuEventDestroy", d.cuEventDestroy, e)
	}
	b.events = nil
	if b.flush != nil {
		d.call("cuMemFree_v2", d.cuMemFree, uintptr(b.flush.ptr))
	}
	if b.clockBuf != nil {
		d.call("cuMemFree_v2", d.cuMemFree, uintptr(b.clockBuf.ptr))
	}
	if b.stream != 0 {
		d.call("cuStreamDestroy", d.cuStreamDestroy, b.stream)
	}
	if b.ctx != 0 {
		d.call("cuDevicePrimaryCtxRelease", d.cuDevicePrimaryCtxRelease, uintptr(b.dev))
	}
}

func (b *backend) Info() profiler.DeviceInfo { return b.info }

// Close releases the context and stops the CUDA thread. Closing twice is
// harmless.
func (b *backend) Close() error {
	b.once.Do(func() {
		close(b.quit)
		<-b.exited // the loop tears down on its own thread
	})
	return nil
}

// ExtraOptionsEnv adds NVRTC options to every compile (space separated, e.g.
// "-DQ_IN_REGS=0 -maxrregcount=128"): for kernel experiments. They are part
// of the compile-cache key.
const ExtraOptionsEnv = "MLTOP_NVRTC_OPTIONS"

// CompileOptions are the NVRTC flags for a program on this device.
func CompileOptions(p profiler.Program, arch string) []string {
	opts := []string{"--gpu-architecture=" + arch, "-lineinfo", "--std=c++17", "-default-device"}
	for _, m := range p.Macros {
		opts = append(opts, "-D"+m.Name+"="+m.Value)
	}
	return append(opts, strings.Fields(os.Getenv(ExtraOptionsEnv))...)
}

// Compile builds p with NVRTC (or takes the cubin from the cache) and loads
// it. NVRTC runs on the caller's goroutine, so compiling the next spec can
// overlap timing the current one; loading runs on the CUDA thread.
func (b *backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	cubin, err := b.cubin(p)
	if err != nil {
		return nil, err
	}
	k := &kernel{name: p.Entry}
	err = b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		d := b.drv
		if err := b.check(d.call("cuModuleLoadData", d.cuModuleLoadData, uintptr(unsafe.Pointer(&k.mod)), uintptr(unsafe.Pointer(&cubin[0])))); err != nil {
			return err
		}
		if err := d.call("cuModuleGetFunction", d.cuModuleGetFunction, uintptr(unsafe.Pointer(&k.fn)), k.mod, uintptr(unsafe.Pointer(cString(p.Entry)))); err != nil {
			d.call("cuModuleUnload", d.cuModuleUnload, k.mod)
			file := p.Source + ".cu"
			if p.Code != "" {
				file = p.File
			}
			return fmt.Errorf("%s has no kernel %q (is it extern \"C\" __global__?): %w", file, p.Entry, err)
		}
		fa := func(a int) int {
			var v int32
			d.call("cuFuncGetAttribute", d.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), k.fn)
			return int(v)
		}
		k.attrs = profiler.KernelAttrs{
			StaticTGM:      fa(funcAttrSharedSizeBytes),
			MaxThreads:     fa(funcAttrMaxThreads),
			ExecutionWidth: 32,
			Registers:      fa(funcAttrNumRegs),
			SpillBytes:     fa(funcAttrLocalSizeBytes),
		}
		k.maxDyn = fa(funcAttrMaxDynamicShared)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// cubin compiles p with NVRTC or takes it from the cache. Two callers
// asking for one program at once share one compile.
func (b *backend) cubin(p profiler.Program) ([]byte, error) {
	src, name, hdrs, err := b.programSource(p)
	if err != nil {
		return nil, err
	}
	opts := CompileOptions(p, b.arch)
	key := CompileKey(src, hdrs, p.Macros, b.arch, b.compiler+" "+strings.Join(opts, " "))
	for {
		if c, ok := b.cache.get(key); ok {
			return c, nil
		}
		b.statsMu.Lock()
		wait, busy := b.inflight[key]
		if !busy {
			if b.inflight == nil {
				b.inflight = map[string]chan struct{}{}
			}
			done := make(chan struct{})
			b.inflight[key] = done
			b.statsMu.Unlock()
			c, _, err := b.nv.compile(src, name, hdrs, opts)
			if err == nil {
				b.cache.put(key, c)
			}
			b.statsMu.Lock()
			if err == nil {
				b.compiles++
			}
			delete(b.inflight, key)
			b.statsMu.Unlock()
			close(done)
			if err != nil {
				return nil, fmt.Errorf("NVRTC could not compile %s for %s: %w", name, b.arch, err)
			}
			return c, nil
		}
		b.statsMu.Unlock()
		<-wait // then take it from the cache, or compile it ourselves if that one failed
	}
}

// programSource is what NVRTC compiles for p: a built-in shader, or a
// user kernel's own source (named by its real path, so that NVRTC's log
// points at the user's file:line) with its includes beside the built-in
// headers.
func (b *backend) programSource(p profiler.Program) (src, name string, hdrs map[string]string, err error) {
	if p.Code == "" {
		src, err = shaders.Source("cuda", p.Source, ".cu")
		return src, p.Source + ".cu", b.headers, err
	}
	hdrs = make(map[string]string, len(b.headers)+len(p.Includes))
	maps.Copy(hdrs, b.headers)
	maps.Copy(hdrs, p.Includes)
	name = p.File
	if name == "" {
		name = p.Source + ".cu"
	}
	return p.Code, name, hdrs, nil
}

// Precompile compiles p into the compile cache and returns when done
// (NVRTC needs no context, and is thread-safe: the run package calls this
// from a bounded pool of goroutines for the specs ahead of the one being
// measured, and the later Compile finds the cubin in the cache). An error
// is dropped here: that Compile compiles again and reports it on its spec.
func (b *backend) Precompile(p profiler.Program) { _, _ = b.cubin(p) }

// Stats reports the compile cache's hits and NVRTC compiles so far.
func (b *backend) Stats() CacheStats {
	b.cache.mu.Lock()
	defer b.cache.mu.Unlock()
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	return CacheStats{MemoryHits: b.cache.hits, DiskHits: b.cache.disk, Compiles: b.compiles}
}

func (b *backend) alloc(n int64) (*buffer, error) {
	if n <= 0 {
		n = 1
	}
	buf := &buffer{size: n}
	if err := b.check(b.drv.call("cuMemAlloc_v2", b.drv.cuMemAlloc, uintptr(unsafe.Pointer(&buf.ptr)), uintptr(n))); err != nil {
		return nil, err
	}
	return buf, nil
}

func (b *backend) Alloc(n int64) (profiler.Buffer, error) {
	var buf *buffer
	err := b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		var err error
		buf, err = b.alloc(n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("allocating %s on the GPU: %w", profiler.FormatBytes(n), err)
	}
	return buf, nil
}

func (b *backend) Free(x profiler.Buffer) {
	buf, ok := x.(*buffer)
	if !ok || buf == nil || buf.ptr == 0 {
		return
	}
	b.do(func() error {
		b.drv.call("cuMemFree_v2", b.drv.cuMemFree, uintptr(buf.ptr))
		buf.ptr = 0
		return nil
	})
}

func asBuffer(x profiler.Buffer) (*buffer, error) {
	buf, ok := x.(*buffer)
	if !ok || buf == nil || buf.ptr == 0 {
		return nil, fmt.Errorf("not a live CUDA buffer: %T", x)
	}
	return buf, nil
}

func (b *backend) Upload(x profiler.Buffer, src []byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if int64(len(src)) > buf.size {
		return fmt.Errorf("upload of %d B into a %d B buffer", len(src), buf.size)
	}
	if len(src) == 0 {
		return nil
	}
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		return b.check(b.drv.call("cuMemcpyHtoD_v2", b.drv.cuMemcpyHtoD, uintptr(buf.ptr), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src))))
	})
}

func (b *backend) Download(x profiler.Buffer, dst []byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if int64(len(dst)) > buf.size {
		return fmt.Errorf("download of %d B from a %d B buffer", len(dst), buf.size)
	}
	if len(dst) == 0 {
		return nil
	}
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		return b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(buf.ptr), uintptr(len(dst))))
	})
}

// Copy copies src into dst on the device (see profiler.Copier).
func (b *backend) Copy(dst, src profiler.Buffer) error {
	d, err := asBuffer(dst)
	if err != nil {
		return err
	}
	sb, err := asBuffer(src)
	if err != nil {
		return err
	}
	if d.size != sb.size {
		return fmt.Errorf("copy of a %d-byte buffer into a %d-byte one", sb.size, d.size)
	}
	return b.onStream(func() error {
		return b.check(b.drv.call("cuMemcpyDtoDAsync_v2", b.drv.cuMemcpyDtoDAsync, uintptr(d.ptr), uintptr(sb.ptr), uintptr(d.size), b.stream))
	})
}

// Fill sets every byte of a buffer on the device (see profiler.Filler).
func (b *backend) Fill(x profiler.Buffer, value byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	return b.onStream(func() error {
		return b.check(b.drv.call("cuMemsetD8Async", b.drv.cuMemsetD8Async, uintptr(buf.ptr), uintptr(value), uintptr(buf.size), b.stream))
	})
}

// DownloadRanges copies parts of a buffer (see profiler.RangeDownloader),
// all in one trip to the CUDA thread.
func (b *backend) DownloadRanges(x profiler.Buffer, offsets []int64, dsts [][]byte) error {
	buf, err := asBuffer(x)
	if err != nil {
		return err
	}
	if err := profiler.CheckRanges(buf.size, offsets, dsts); err != nil {
		return err
	}
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		for i, off := range offsets {
			if len(dsts[i]) == 0 {
				continue
			}
			if err := b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dsts[i][0])), uintptr(buf.ptr+uint64(off)), uintptr(len(dsts[i])))); err != nil {
				return err
			}
		}
		return nil
	})
}

// dynamicShared is the launch's dynamic shared memory: the plan's
// DynamicTGM, or, when the plan leaves it at 0, its TGM items beyond what
// the kernel declares statically.
func dynamicShared(d *profiler.Dispatch, k *kernel) int {
	if d.DynamicTGM > 0 {
		return d.DynamicTGM
	}
	return max(0, d.TGMBytes()-k.attrs.StaticTGM)
}

// prepare raises the kernel's dynamic shared memory limit where the launch
// needs more than the default 48 KiB. CUDA thread only.
func (b *backend) prepare(l *profiler.Launch) (*kernel, int, error) {
	k, ok := l.Kernel.(*kernel)
	if !ok || k == nil {
		return nil, 0, fmt.Errorf("dispatch %s has no compiled CUDA kernel", l.Dispatch.Name)
	}
	dyn := dynamicShared(l.Dispatch, k)
	if dyn > k.maxDyn {
		if err := b.drv.call("cuFuncSetAttribute", b.drv.cuFuncSetAttribute, k.fn, funcAttrMaxDynamicShared, uintptr(dyn)); err != nil {
			return nil, 0, fmt.Errorf("dispatch %s needs %d B of dynamic shared memory, more than %s allows (opt-in limit %d B): %w", l.Dispatch.Name, dyn, b.info.Name, b.info.TGMPerGroupOptIn, err)
		}
		k.maxDyn = dyn
	}
	return k, dyn, nil
}

// launch enqueues one dispatch on the stream. CUDA thread only.
func (b *backend) launch(l *profiler.Launch) error {
	d := l.Dispatch
	if d.Zero != "" {
		buf, err := asBuffer(l.Zero)
		if err != nil {
			return fmt.Errorf("zero-fill %s: %w", d.Name, err)
		}
		return b.check(b.drv.call("cuMemsetD8Async", b.drv.cuMemsetD8Async, uintptr(buf.ptr), 0, uintptr(buf.size), b.stream))
	}
	k, dyn, err := b.prepare(l)
	if err != nil {
		return err
	}
	if len(l.Args) != len(d.Args) {
		return fmt.Errorf("dispatch %s binds %d buffers but names %d", d.Name, len(l.Args), len(d.Args))
	}
	// Each parameter lives in its own 8-byte slot; the kernel reads 4 or 8
	// bytes from the slot's start (little endian).
	vals := make([]uint64, len(l.Args)+len(d.Scalars))
	params := make([]unsafe.Pointer, len(vals))
	for i, a := range l.Args {
		buf, err := asBuffer(a)
		if err != nil {
			return fmt.Errorf("dispatch %s argument %s: %w", d.Name, d.Args[i], err)
		}
		vals[i] = buf.ptr
	}
	for j, s := range d.Scalars {
		i := len(l.Args) + j
		switch s.Kind {
		case profiler.ScalarF32:
			vals[i] = uint64(math.Float32bits(float32(s.F)))
		default:
			vals[i] = uint64(uint32(int32(s.I)))
		}
	}
	for i := range vals {
		params[i] = unsafe.Pointer(&vals[i])
	}
	var pp uintptr
	if len(params) > 0 {
		pp = uintptr(unsafe.Pointer(&params[0]))
	}
	g, t := d.Grid, d.Group
	for i := range 3 {
		if g[i] <= 0 || t[i] <= 0 {
			return fmt.Errorf("dispatch %s has grid %v and group %v: every extent must be at least 1", d.Name, g, t)
		}
	}
	r, _, _ := purego.SyscallN(b.drv.cuLaunchKernel, k.fn, uintptr(g[0]), uintptr(g[1]), uintptr(g[2]),
		uintptr(t[0]), uintptr(t[1]), uintptr(t[2]), uintptr(dyn), b.stream, pp, 0)
	runtime.KeepAlive(vals)
	runtime.KeepAlive(params)
	if code := int32(r); code != 0 {
		return b.check(fmt.Errorf("launching %s (grid %v, group %v, %d B dynamic shared): %w", d.Name, g, t, dyn, b.drv.err("cuLaunchKernel", int(code))))
	}
	return nil
}

// Run executes the launches once, in order, and waits.
func (b *backend) Run(ls []profiler.Launch) error {
	return b.onStream(func() error {
		for i := range ls {
			if err := b.launch(&ls[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// onStream runs enqueue on the CUDA thread, on a live context, and waits
// for the stream to finish what it enqueued.
func (b *backend) onStream(enqueue func() error) error {
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		if err := enqueue(); err != nil {
			return err
		}
		return b.check(b.drv.call("cuStreamSynchronize", b.drv.cuStreamSynchronize, b.stream))
	})
}

func (b *backend) eventsFor(n int) error {
	for len(b.events) < n {
		var e uintptr
		if err := b.check(b.drv.call("cuEventCreate", b.drv.cuEventCreate, uintptr(unsafe.Pointer(&e)), cuEventDefault)); err != nil {
			return err
		}
		b.events = append(b.events, e)
	}
	return nil
}

// flushFactor is the cold flush's size in L2s. Reading 1× the L2 of new
// data evicts everything under LRU; the L2's replacement is not exactly
// LRU (and Hopper's L2 is two partitions that may both hold a line), so
// the flush reads 3×: ~150 MB, ~50 µs on an H100, outside the timed events.
// The dirty mode writes the first 2× (the old flush, unchanged).
const flushFactor = 3

var _ profiler.CacheTimer = (*backend)(nil)

// Time runs the launches reps times; cold flushes the L2 clean before each
// rep (see TimeCache).
func (b *backend) Time(ls []profiler.Launch, reps int, cold bool) (profiler.Timing, error) {
	mode := profiler.CacheHot
	if cold {
		mode = profiler.CacheCold
	}
	return b.TimeCache(ls, reps, mode)
}

// flushKernel compiles mltop_l2_flush once (NVRTC on this goroutine, the
// module load on the CUDA thread): never called from inside b.do.
func (b *backend) flushKernel() (*kernel, error) {
	return b.helperKernel("mltop_l2_flush", &b.flushK, "the cold-cache flush kernel")
}

// helperKernel compiles one of mltop's own kernels of shaders/l2flush once.
func (b *backend) helperKernel(entry string, dst **kernel, what string) (*kernel, error) {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	if *dst != nil {
		return *dst, nil
	}
	k, err := b.Compile(profiler.Program{Source: "l2flush", Entry: entry})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	*dst = k.(*kernel)
	return *dst, nil
}

// clockProbeNS is how long each SM clock probe counts cycles: 20 µs, a
// few parts per million of error once both ends sit on a timer tick.
const clockProbeNS = 20000

// clockProbe returns the probe kernel, or ok false when there is none (no
// probe buffer, or it did not compile): the timing then carries no clock.
// Not from inside b.do.
func (b *backend) clockProbe() (k *kernel, ok bool) {
	if b.noClock || b.clockBuf == nil {
		return nil, false
	}
	k, err := b.helperKernel("mltop_sm_clock", &b.clockK, "the SM clock probe")
	if err != nil {
		b.noClock = true
		fmt.Fprintf(os.Stderr, "mltop cuda: no SM clock in the results: %v\n", err)
		return nil, false
	}
	return k, true
}

func (b *backend) clockLaunch(k *kernel, slot int) profiler.Launch {
	d := &profiler.Dispatch{Name: "sm clock", Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1},
		Args: []string{"clock"}, Scalars: []profiler.Scalar{profiler.I32Param("slot", slot), profiler.I32Param("ns", clockProbeNS)}}
	return profiler.Launch{Dispatch: d, Kernel: k, Args: []profiler.Buffer{b.clockBuf}}
}

// smClockMHz reads the probes' counts (CUDA thread, after the stream is
// idle): the mean of the slots' cycles per nanosecond, in MHz.
func (b *backend) smClockMHz(slots int) (float64, error) {
	raw := make([]uint64, 2*slots)
	if err := b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&raw[0])), uintptr(b.clockBuf.ptr), uintptr(16*slots))); err != nil {
		return 0, err
	}
	return clockFromProbes(raw), nil
}

// flushLaunch is the cold flush: read the whole zero-filled flush buffer,
// 4 blocks of 256 threads per SM, never = 1 (the XOR of zeros is 0).
func (b *backend) flushLaunch(k *kernel) profiler.Launch {
	words := b.flush.size / 16
	d := &profiler.Dispatch{Name: "l2 flush", Grid: [3]int{max(b.info.Units, 1) * 4, 1, 1}, Group: [3]int{256, 1, 1},
		Args: []string{"flush"}, Scalars: []profiler.Scalar{profiler.I32Param("n", int(words)), profiler.I32Param("never", 1)}}
	return profiler.Launch{Dispatch: d, Kernel: k, Args: []profiler.Buffer{b.flush}}
}

// TimeCache runs the launches reps times. Hot: one event before the first
// launch and one after each, back to back. Cold and dirty: the cache is
// prepared before EACH dispatch, as Nsight Compute's --cache-control all
// does, so that every dispatch's time is comparable with ncu's
// gpu__time_duration of that kernel; each dispatch then has its own event
// pair, and the flush runs between pairs on the same stream (the start
// event is recorded only once the flush has finished, and is not timed).
// Cold reads flushFactor × L2 with mltop_l2_flush, leaving the L2 clean;
// dirty memsets 2 × L2 (a new byte value each time), leaving it dirty.
// A zero fill's dirty lines are thus written back by the next flush, not
// by the kernel after it. Samples are nanoseconds per dispatch.
func (b *backend) TimeCache(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if reps < 1 {
		reps = 1
	}
	var flush profiler.Launch
	if mode == profiler.CacheCold && b.flush != nil {
		k, err := b.flushKernel()
		if err != nil {
			return profiler.Timing{}, err
		}
		flush = b.flushLaunch(k)
	}
	// The SM clock is probed just before the loop and just after it, outside
	// every timed window.
	var probes [2]profiler.Launch
	probeK, probing := b.clockProbe()
	if probing {
		probes = [2]profiler.Launch{b.clockLaunch(probeK, 0), b.clockLaunch(probeK, 1)}
	}
	n := len(ls)
	steps, spans, nev := timingLoop(n, reps, mode, b.flush != nil, probing)
	out := profiler.Timing{Timer: TimerEvents}
	err := b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		d := b.drv
		if err := b.eventsFor(nev); err != nil {
			return err
		}
		// The kernel clock's records are matched to this loop's work in
		// stream order (see matchActivities): nothing else may be pending.
		var want []expected
		if b.kclock != nil {
			if err := b.check(d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream)); err != nil {
				return err
			}
			if err := b.kclock.discard(); err != nil {
				b.kernelClockFailed(err)
			}
			want = make([]expected, 0, len(steps))
		}
		expect := func(e expected) {
			if b.kclock != nil {
				want = append(want, e)
			}
		}
		flushes := 0
		for _, st := range steps {
			var err error
			switch st.Kind {
			case stepProbe:
				expect(expectedOf(probes[st.Index].Dispatch, -1))
				err = b.launch(&probes[st.Index])
			case stepFlush:
				expect(expectedOf(flush.Dispatch, -1))
				err = b.launch(&flush)
			case stepDirty:
				// A new byte value each time, so that every line is written.
				flushes++
				expect(expected{Memset: true, Slot: -1})
				size := min(b.flush.size, 2*b.info.CacheBytes)
				err = b.check(d.call("cuMemsetD8Async", d.cuMemsetD8Async, uintptr(b.flush.ptr), uintptr(flushes&0xff|1), uintptr(size), b.stream))
			case stepRecord:
				err = b.check(d.call("cuEventRecord", d.cuEventRecord, b.events[st.Index], b.stream))
			case stepLaunch:
				expect(expectedOf(ls[st.Index].Dispatch, st.Slot))
				err = b.launch(&ls[st.Index])
			}
			if err != nil {
				return err
			}
		}
		if err := b.check(d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream)); err != nil {
			return err
		}
		if probing {
			mhz, err := b.smClockMHz(len(probes))
			if err != nil {
				return err
			}
			out.SMClockMHz = mhz
		}
		out.Samples = make([][]float64, reps)
		for r := range reps {
			row := make([]float64, n)
			for i := range n {
				span := spans[r*n+i]
				var ms float32
				if err := b.check(d.call("cuEventElapsedTime", d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), b.events[span[0]], b.events[span[1]])); err != nil {
					return err
				}
				row[i] = float64(ms) * 1e6
			}
			out.Samples[r] = row
		}
		if b.kclock != nil {
			if durs, err := b.kernelTimes(want, reps*n); err != nil {
				b.kernelClockFailed(err)
			} else {
				for r := range reps {
					copy(out.Samples[r], durs[r*n:(r+1)*n])
				}
				out.Timer = TimerKernel
			}
		}
		return nil
	})
	return out, err
}

// kernelTimes collects the kernel clock's records of a timing loop and
// gives each timed slot its kernel's own duration. CUDA thread only, after
// the loop's work has finished.
func (b *backend) kernelTimes(want []expected, slots int) ([]float64, error) {
	recs, err := b.kclock.take(uint32(b.dev), len(want), 2*time.Second)
	if err != nil {
		return nil, err
	}
	return matchActivities(want, recs, slots)
}

// kernelClockFailed reports, once per process, that a timing loop fell
// back to its event timings; the results of that loop say timer cuda-event.
func (b *backend) kernelClockFailed(err error) {
	b.kclockWarn.Do(func() {
		fmt.Fprintf(os.Stderr, "mltop cuda: the kernel clock (CUPTI) did not account for a timing loop's launches, so its samples are CUDA event times (timer %s): %v\n", TimerEvents, err)
	})
}

// Occupancy asks the driver how many blocks of the launch fit on one SM
// with its dynamic shared memory, and names the resource that binds.
func (b *backend) Occupancy(l profiler.Launch) profiler.Occupancy {
	o := profiler.Occupancy{Dispatch: l.Dispatch.Name, Source: "driver"}
	err := b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		k, dyn, err := b.prepare(&l)
		if err != nil {
			return err
		}
		o.Registers, o.SpillBytes = k.attrs.Registers, k.attrs.SpillBytes
		threads := l.Dispatch.Threads()
		var n int32
		if err := b.drv.call("cuOccupancyMaxActiveBlocksPerMultiprocessor", b.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.fn, uintptr(threads), uintptr(dyn)); err != nil {
			return err
		}
		o.Available = true
		o.GroupsPerUnit = int(n)
		o.Limiter = limiterFor(b.info, occupancyInput{Threads: threads, Registers: k.attrs.Registers, SharedBytes: k.attrs.StaticTGM + dyn, ReservedShared: b.reserved, DriverBlocks: int(n)})
		if n == 0 {
			o.Limiter = "does not fit"
		}
		if b.info.MaxThreadsPerUnit > 0 {
			o.ThreadsPct = 100 * float64(int(n)*threads) / float64(b.info.MaxThreadsPerUnit)
		}
		return nil
	})
	if err != nil {
		o.Available = false
		o.Reason = err.Error()
	}
	return o
}
