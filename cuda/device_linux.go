//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
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
	visible, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	// A container given some of the host's GPUs (NVIDIA_VISIBLE_DEVICES
	// other than all) may still list every GPU under /proc: count its list
	// instead (cuInit here took 45 ms before the workers could start).
	if c := os.Getenv("NVIDIA_VISIBLE_DEVICES"); c == "" || c == "all" {
		if n, ok := procDeviceCount(procGPUs, visible, set); ok {
			return n, nil
		}
	} else if n, ok := containerDeviceCount(c, visible, set, "/dev"); ok {
		return n, nil
	}
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
// nvrtcLoad is NVRTC as loaded beside the driver's start (Open).
type nvrtcLoad struct {
	nv  *nvrtc
	err error
}

type backend struct {
	drv    *driver
	nv     *nvrtc
	nvc    chan nvrtcLoad // NVRTC loading while the driver starts; setup takes it
	trace  *startupTrace  // nil unless MLTOP_TRACE_STARTUP is set
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
	// localReserve is the local memory per thread reserved at start-up
	// (reserveLocal).
	localReserve int
	headers      map[string]string
	flush        *buffer // flushFactor × L2 of zeros, read (cold) or written (dirty) before each sample
	flushMu      sync.Mutex
	flushK       *kernel // mltop_l2_flush, compiled on the first cold sample
	clockK       *kernel // mltop_sm_clock, compiled on the first timing loop
	clockBuf     *buffer // the clock probes' cycles and nanoseconds
	stage        *buffer // DownloadRanges' staging buffer, kept (see staging)
	gatherK      *kernel // mltop_gather, compiled on the first gather
	descs        *buffer // the gather's range descriptors, kept
	noGather     bool    // mltop_gather did not compile: one copy per range
	noClock      bool    // the probe did not compile: timings carry no clock
	events       []uintptr
	// kclock reads kernels' own GPU timestamps (CUPTI); nil: events only.
	kclock     *cuptiLib
	kclockWarn sync.Once
	compiles   int
	lost       error // set after a sticky error
	statsMu    sync.Mutex
	inflight   map[string]chan struct{} // compiles under way, by cache key
	// The loader thread (Preload), started on the first load ahead.
	loaderOnce sync.Once
	loaderMu   sync.Mutex
	ld         *loader
}

// Open loads the driver and NVRTC, creates a context on device
// MLTOP_CUDA_DEVICE (default 0) and reads the device's limits.
func Open() (profiler.Backend, error) {
	tr := newStartupTrace()
	// NVRTC and CUPTI are large libraries: load them while the driver
	// starts (cuInit is the longest step, and longer still when several
	// workers start at once). CUPTI is turned on after cuInit (loadCUPTI).
	nvc := make(chan nvrtcLoad, 1)
	go func() {
		nv, err := loadNVRTC()
		nvc <- nvrtcLoad{nv, err}
	}()
	go func() { // only loads it: setup turns it on after cuInit
		if wantsKernelClock(timerSetting()) {
			_, _ = preloadCUPTI()
		}
	}()
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	tr.step("load driver")
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
	b := &backend{drv: drv, nvc: nvc, trace: tr, cmds: make(chan func()), quit: make(chan struct{}), exited: make(chan struct{}), cache: newCubinCache(DefaultCacheDir()), headers: hdrs}
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
		err = fmt.Errorf("the NVIDIA driver does not start: %w", err)
		if cuInitMayPassAgain(err) {
			err = run.StartAgain(err)
		}
		return err
	}
	b.trace.step("cuInit")
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
	b.trace.step("primary context")
	if err := d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, b.ctx); err != nil {
		return err
	}
	var total uintptr
	if err := d.call("cuDeviceTotalMem_v2", d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(b.dev)); err != nil {
		return err
	}
	localNote := b.reserveLocal(int64(total))
	b.trace.step("local memory")
	if err := d.call("cuStreamCreate", d.cuStreamCreate, uintptr(unsafe.Pointer(&b.stream)), cuStreamNonBlocking); err != nil {
		return err
	}
	name := make([]byte, 256)
	if err := d.call("cuDeviceGetName", d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(b.dev)); err != nil {
		return err
	}
	major, minor := b.attr(attrComputeCapMajor), b.attr(attrComputeCapMinor)
	b.arch = ArchName(major, minor)
	b.trace.step("device attributes")
	if b.nvc != nil {
		l := <-b.nvc
		if l.err != nil {
			return l.err
		}
		b.nv, b.nvc = l.nv, nil
		b.trace.step("NVRTC loaded")
	}
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
	info.LocalReserve = b.localReserve
	info.Notes = append(info.Notes, localNote)
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
	b.trace.step("CUPTI")
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
	b.trace.step("flush buffer")
	return nil
}

// cuLimitStackSize is CU_LIMIT_STACK_SIZE: local memory per thread.
const cuLimitStackSize = 0

// reserveLocal grows the context's local memory to LocalReserve bytes per
// thread (of a device of total bytes) before anything else is allocated (see LocalReserveEnv), and says
// in a device note what it did. A failure costs only the reserve.
func (b *backend) reserveLocal(total int64) (note string) {
	d := b.drv
	threads := b.attr(attrMaxThreadsPerSM) * b.attr(attrMultiprocessorCount)
	want, err := LocalReserve(os.Getenv(LocalReserveEnv), total, threads)
	if err != nil {
		want, _ = LocalReserve("", total, threads)
		note = err.Error() + "; reserving the default. "
	}
	if want == 0 {
		return note + "local memory: none reserved at start-up (" + LocalReserveEnv + "): it grows at the first launch of a kernel that needs more"
	}
	if err := d.call("cuCtxSetLimit", d.cuCtxSetLimit, cuLimitStackSize, uintptr(want)); err != nil {
		return note + fmt.Sprintf("local memory: reserving %d B per thread failed (%v): it grows at the first launch of a kernel that needs more", want, err)
	}
	var got uintptr
	if err := d.call("cuCtxGetLimit", d.cuCtxGetLimit, uintptr(unsafe.Pointer(&got)), cuLimitStackSize); err != nil {
		got = uintptr(want)
	}
	b.localReserve = int(got)
	return note + fmt.Sprintf("local memory: %d B per thread reserved at start-up (%s), so spilling kernels find it at one place in every run", got, LocalReserveEnv)
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
	b.trace.step("serving (until stdin ended)")
	defer b.trace.step("teardown")
	b.stopLoader()
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
	if b.descs != nil {
		d.call("cuMemFree_v2", d.cuMemFree, uintptr(b.descs.ptr))
	}
	if b.stage != nil {
		d.call("cuMemFree_v2", d.cuMemFree, uintptr(b.stage.ptr))
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
