//go:build linux

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// TimerEnv picks the CUDA timer: "kernel" (each kernel's own GPU
// timestamps through CUPTI; an error when CUPTI cannot be loaded),
// "events" (CUDA events around each launch), or unset for the kernel clock
// when CUPTI loads and events otherwise.
const TimerEnv = "MLTOP_CUDA_TIMER"

// Timer names as results report them.
const (
	TimerKernel = "cupti-kernel" // the kernel's own start/end GPU timestamps
	TimerEvents = "cuda-event"   // an event pair around each launch
)

// cuptiLib is libcupti's activity API, loaded once per process: CUPTI's
// callbacks are process-wide.
type cuptiLib struct {
	path string

	activityEnable, activityFlushAll, activityGetNextRecord, activityRegisterCallbacks uintptr

	mu    sync.Mutex
	recs  []activity // records delivered since the last take
	spare [][]byte   // activity buffers CUPTI has handed back
	lent  map[uintptr][]byte
}

const cuptiBufferBytes = 8 << 20 // ~40 000 kernel records

var (
	cuptiOnce sync.Once
	cuptiInst *cuptiLib
	cuptiErr  error
	// the library found and bound (preloadCUPTI), not yet turned on
	cuptiLoadOnce sync.Once
	cuptiLoaded   *cuptiLib
	cuptiLoadErr  error
)

// cuptiCandidates lists where libcupti may be: MLTOP_CUPTI, the sonames the
// loader finds, then the toolkit and pip layouts (Nsight Compute's private
// copies are not used: they belong to its own CUDA version).
func cuptiCandidates() []string {
	return libCandidates("MLTOP_CUPTI", "libcupti", "extras/CUPTI/lib64", "cuda_cupti/lib")
}

// libCandidates lists where a CUDA library named base ("libnvrtc") may be:
// the path in env, the sonames of CUDA 13 and 12 the loader finds on its
// own, then the files in the toolkit's and pip wheels' folders (see
// toolkitLibs for extra and pipSub).
//
// With env set its path is the only candidate: the user's word is final,
// and a path that does not load is an error naming it (envLoadError), not
// a silent fall back to another copy of the library.
func libCandidates(env, base, extra, pipSub string) []string {
	if p := os.Getenv(env); p != "" {
		return []string{p}
	}
	out := []string{base + ".so.13", base + ".so.12", base + ".so"}
	return append(out, toolkitLibs(base+".so*", extra, pipSub)...)
}

// envLoadError is the error when env names a library that did not load
// (why: dlopen's or bind's words), nil when env is unset.
func envLoadError(env, lib, why string) error {
	p := os.Getenv(env)
	if p == "" {
		return nil
	}
	return fmt.Errorf("%s=%s: cannot load it as %s (%s): point %s at the library's file, or unset it to search the usual places", env, p, lib, why, env)
}

// loadCUPTI loads libcupti and turns on kernel and memset activity records.
// Turning them on hooks CUPTI into the driver, so it is done once cuInit
// has returned, never beside it on another thread (one worker crashed in
// native code before it said hello while that could happen; whether that
// was the cause is not known).
func loadCUPTI() (*cuptiLib, error) {
	cuptiOnce.Do(func() {
		l, err := preloadCUPTI()
		if err == nil {
			if err = l.start(); err != nil {
				l, err = nil, fmt.Errorf("%s: %w", l.path, err)
			}
		}
		cuptiInst, cuptiErr = l, err
	})
	return cuptiInst, cuptiErr
}

// preloadCUPTI finds and binds libcupti, once, without turning anything on:
// safe beside cuInit, it takes the library's load off the start-up's path.
func preloadCUPTI() (*cuptiLib, error) {
	cuptiLoadOnce.Do(func() { cuptiLoaded, cuptiLoadErr = openCUPTI() })
	return cuptiLoaded, cuptiLoadErr
}

func openCUPTI() (*cuptiLib, error) {
	var tried []string
	why := ""
	for _, c := range cuptiCandidates() {
		h, err := dlopen(c)
		if err != nil {
			tried, why = append(tried, c), err.Error()
			continue
		}
		l := &cuptiLib{path: c, lent: map[uintptr][]byte{}}
		if err := bind(h, c, []symbol{
			{&l.activityEnable, []string{"cuptiActivityEnable"}},
			{&l.activityFlushAll, []string{"cuptiActivityFlushAll"}},
			{&l.activityGetNextRecord, []string{"cuptiActivityGetNextRecord"}},
			{&l.activityRegisterCallbacks, []string{"cuptiActivityRegisterCallbacks"}},
		}); err != nil {
			tried, why = append(tried, c+" ("+err.Error()+")"), err.Error()
			continue
		}
		return l, nil
	}
	if err := envLoadError("MLTOP_CUPTI", "libcupti", why); err != nil {
		return nil, fmt.Errorf("cannot load libcupti: %w", err)
	}
	return nil, fmt.Errorf("cannot load libcupti (tried %s); install the CUDA toolkit's CUPTI or set MLTOP_CUPTI to the library's path", strings.Join(tried, ", "))
}

func (l *cuptiLib) call(op string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if code := int32(r); code != 0 {
		hint := ""
		if code == 39 || code == 14 || code == 17 {
			hint = " (another profiler, such as Nsight Compute, holds CUPTI)"
		}
		return fmt.Errorf("%s: CUPTI error %d%s", op, code, hint)
	}
	return nil
}

func (l *cuptiLib) start() error {
	requested := purego.NewCallback(func(buf *unsafe.Pointer, size *uint64, maxRecords *uint64) {
		b := l.buffer()
		*buf = unsafe.Pointer(&b[0])
		*size = uint64(len(b))
		*maxRecords = 0
	})
	completed := purego.NewCallback(func(ctx unsafe.Pointer, stream uint32, buf unsafe.Pointer, size uint64, valid uint64) {
		l.completed(buf, valid)
	})
	if err := l.call("cuptiActivityRegisterCallbacks", l.activityRegisterCallbacks, requested, completed); err != nil {
		return err
	}
	if err := l.call("cuptiActivityEnable(CONCURRENT_KERNEL)", l.activityEnable, activityConcurrentKernel); err != nil {
		return err
	}
	return l.call("cuptiActivityEnable(MEMSET)", l.activityEnable, activityMemset)
}

// buffer lends CUPTI a buffer outside the Go heap (CUPTI keeps it until it
// hands it back).
func (l *cuptiLib) buffer() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b []byte
	if n := len(l.spare); n > 0 {
		b, l.spare = l.spare[n-1], l.spare[:n-1]
	} else {
		var err error
		b, err = unix.Mmap(-1, 0, cuptiBufferBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			panic(fmt.Sprintf("mltop: mapping a %d-byte CUPTI buffer: %v", cuptiBufferBytes, err))
		}
	}
	l.lent[uintptr(unsafe.Pointer(&b[0]))] = b
	return b
}

// completed reads the records of a buffer CUPTI hands back.
func (l *cuptiLib) completed(buf unsafe.Pointer, valid uint64) {
	var got []activity
	var rec unsafe.Pointer
	for {
		r, _, _ := purego.SyscallN(l.activityGetNextRecord, uintptr(buf), uintptr(valid), uintptr(unsafe.Pointer(&rec)))
		if int32(r) != 0 { // CUPTI_ERROR_MAX_LIMIT_REACHED: no more
			break
		}
		// Longer than any prefix read: parseActivity looks at the kind first.
		n := min(uint64(uintptr(buf)+uintptr(valid)-uintptr(rec)), 256)
		if a, ok := parseActivity(unsafe.Slice((*byte)(rec), n)); ok {
			got = append(got, a)
		}
	}
	l.mu.Lock()
	if len(l.recs) > 1<<20 {
		// Nobody is taking them (a backend on events in a process that
		// loaded CUPTI for another): keep memory bounded.
		l.recs = append(l.recs[:0], l.recs[len(l.recs)/2:]...)
	}
	l.recs = append(l.recs, got...)
	if b, ok := l.lent[uintptr(buf)]; ok {
		delete(l.lent, uintptr(buf))
		l.spare = append(l.spare, b)
	}
	l.mu.Unlock()
}

// flush asks CUPTI for every record so far (the GPU work must be finished).
func (l *cuptiLib) flush() error {
	return l.call("cuptiActivityFlushAll", l.activityFlushAll, 1) // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
}

// discard drops the records delivered so far (work before a timing loop).
func (l *cuptiLib) discard() error {
	err := l.flush()
	l.mu.Lock()
	l.recs = l.recs[:0]
	l.mu.Unlock()
	return err
}

// take flushes and returns device dev's records, waiting up to wait for
// at least n of them (CUPTI may deliver from its own thread).
func (l *cuptiLib) take(dev uint32, n int, wait time.Duration) ([]activity, error) {
	if err := l.flush(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	l.mu.Lock()
	defer l.mu.Unlock()
	for countDevice(l.recs, dev) < n && time.Now().Before(deadline) {
		l.mu.Unlock()
		time.Sleep(time.Millisecond)
		l.mu.Lock()
	}
	var out []activity
	for _, a := range l.recs {
		if a.Device == dev {
			out = append(out, a)
		}
	}
	l.recs = l.recs[:0]
	return out, nil
}

func countDevice(rs []activity, dev uint32) int {
	n := 0
	for _, a := range rs {
		if a.Device == dev {
			n++
		}
	}
	return n
}

// timerSetting is MLTOP_CUDA_TIMER, trimmed and in lower case.
func timerSetting() string { return strings.ToLower(strings.TrimSpace(os.Getenv(TimerEnv))) }

// wantsKernelClock says whether timer setting v asks for the kernel clock
// (CUPTI), or leaves it to be used when it loads.
func wantsKernelClock(v string) bool {
	return v == "" || v == "auto" || v == "kernel" || v == TimerKernel
}

// openKernelClock decides the timer from MLTOP_CUDA_TIMER. The second
// result says why events are used when they are.
func openKernelClock() (*cuptiLib, string, error) {
	v := timerSetting()
	switch {
	case v == "events" || v == "event" || v == TimerEvents:
		return nil, TimerEnv + "=" + v, nil
	case wantsKernelClock(v):
		l, err := loadCUPTI()
		if err != nil {
			if v == "" || v == "auto" {
				return nil, err.Error(), nil
			}
			return nil, "", fmt.Errorf("%s=%s: %w", TimerEnv, v, err)
		}
		return l, "", nil
	default:
		return nil, "", fmt.Errorf("%s=%q: use kernel (each kernel's own GPU timestamps, through CUPTI), events (CUDA events around each launch) or leave it unset (kernel when CUPTI loads)", TimerEnv, v)
	}
}

// toolkitLibs lists files matching pattern in the CUDA toolkit's and pip
// wheels' library folders (newest name first within a folder); extra names
// folders relative to a toolkit root and pipSub a folder under a pip
// wheel's nvidia/ directory.
func toolkitLibs(pattern, extra, pipSub string) []string {
	dirs := []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/targets/sbsa-linux/lib"}
	pats := []string{
		"/usr/local/cuda-*/lib64",
		"/usr/local/cuda-*/targets/*/lib",
		"/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib",
		"/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
		"/usr/lib/python3*/dist-packages/nvidia/*/lib",
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib",
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
		"/opt/*/lib/python3*/site-packages/nvidia/*/lib",
		os.Getenv("HOME") + "/.local/lib/python3*/site-packages/nvidia/*/lib",
		// a distribution's runtime package alone (Debian's libnvrtc11.2:
		// libnvrtc.so.11.2, no unversioned link for the loader to find)
		"/usr/lib/*-linux-gnu*",
	}
	if extra != "" {
		dirs = append(dirs, "/usr/local/cuda/"+extra)
		pats = append(pats, "/usr/local/cuda-*/"+extra)
	}
	if pipSub != "" {
		pats = append(pats, "/usr/local/lib/python3*/dist-packages/nvidia/"+pipSub, "/opt/*/.venv/lib/python3*/site-packages/nvidia/"+pipSub)
	}
	for _, pat := range pats {
		m, _ := filepath.Glob(pat)
		dirs = append(dirs, m...)
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		libs, _ := filepath.Glob(filepath.Join(d, pattern))
		slices.Sort(libs)
		slices.Reverse(libs)
		for _, l := range libs {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}
