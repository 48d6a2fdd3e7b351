// Package cpu is the CPU backend: it runs Go implementations of the kernel
// families, one goroutine per core pulling threadgroups, and times them with
// the monotonic wall clock. It never pretends to be a GPU: there is no
// occupancy and no peak FLOP/s, and "threadgroup memory" is a group's tile
// scratch.
package cpu

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// TGMPerGroup is the "threadgroup memory" the CPU backend offers a group.
// A CPU threadgroup is one goroutine's tile; its TGM is the tile scratch,
// which should fit in L1/L2 to be fast. 64 KiB keeps the families' rules
// meaningful without pretending to a GPU's limit.
const TGMPerGroup = 64 << 10

// MaxThreadsPerGroup mirrors the common GPU limit so that knob rules read
// the same on every backend.
const MaxThreadsPerGroup = 1024

// Backend runs Go kernels on the host CPU.
type Backend struct {
	info     profiler.DeviceInfo
	flush    []byte          // read (cold) or written (dirty) through before each sample
	flushSum byte            // what the cold flush read, so its reads are kept
	flushes  int             // flushes so far (tests)
	ctx      context.Context // SetContext: launches stop between groups once it is done
}

var _ profiler.Interruptible = (*Backend)(nil)

// SetContext makes later launches stop between threadgroups, and Run and
// Time return ctx.Err(), once ctx is done (ctrl-C during a long CPU run).
func (b *Backend) SetContext(ctx context.Context) { b.ctx = ctx }

// cancelled is the context's error, nil without one.
func (b *Backend) cancelled() error {
	if b.ctx == nil {
		return nil
	}
	return b.ctx.Err()
}

// New probes the host and returns the CPU backend.
func New() (profiler.Backend, error) {
	return &Backend{info: probe()}, nil
}

func probe() profiler.DeviceInfo {
	name, vendor := cpuModel()
	// No Features and no MaxGrid: the Go kernels need no device feature
	// (paths written only in CUDA are refused), and any grid runs.
	return profiler.DeviceInfo{
		Backend:            "cpu",
		Name:               name,
		Vendor:             vendor,
		Arch:               runtime.GOARCH,
		Units:              runtime.NumCPU(),
		UnitName:           "core",
		TGMPerGroup:        TGMPerGroup,
		MaxThreadsPerGroup: MaxThreadsPerGroup,
		SIMDWidth:          32, // emulated: knob rules use warps of 32
		MemoryBytes:        memTotal(),
		CacheBytes:         lastLevelCache(),
		Timer:              "wall-clock",
		Notes: []string{
			"a CPU threadgroup is one goroutine's tile; its TGM is tile scratch that should fit L1/L2 (limit set to 64 KiB)",
			"threads per group and SIMD width 32 are emulated so knob rules match the GPU backends",
			"no peak FLOP/s: % of peak is n/a",
		},
	}
}

// cpuModel reads "model name" (and the vendor) from /proc/cpuinfo.
func cpuModel() (name, vendor string) {
	name = runtime.GOARCH
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return name, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	gotName := false
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			if !gotName && v != "" {
				name, gotName = v, true
			}
		case "vendor_id":
			if vendor == "" {
				vendor = v
			}
		}
		if gotName && vendor != "" {
			break
		}
	}
	return name, vendor
}

// memTotal is MemTotal from /proc/meminfo, or 8 GiB.
func memTotal() int64 {
	const fallback = 8 << 30
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			if n, err := parseSize(strings.TrimSpace(rest)); err == nil && n > 0 {
				return n
			}
		}
	}
	return fallback
}

// lastLevelCache is the largest cache of cpu0 (the L3), or 32 MiB.
func lastLevelCache() int64 {
	const fallback = 32 << 20
	files, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*/size")
	var best int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := parseSize(strings.TrimSpace(string(data))); err == nil && n > best {
			best = n
		}
	}
	if best == 0 {
		return fallback
	}
	return best
}

// parseSize reads "32768K", "512 kB", "1M" or a plain byte count.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(s, "B"), "b"))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n * mul, err
}

// Info describes the host.
func (b *Backend) Info() profiler.DeviceInfo { return b.info }

// kernel is a "compiled" CPU kernel: the Go function and its parsed macros.
type kernel struct {
	name   string
	fn     host.KernelFunc
	macros map[string]int
}

func (k *kernel) Attrs() profiler.KernelAttrs {
	return profiler.KernelAttrs{MaxThreads: MaxThreadsPerGroup}
}

// Compile finds the Go kernel named by p.Source and parses its macros.
func (b *Backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	if p.Code != "" {
		return nil, fmt.Errorf("%s (list, rules, plan and the TGM budget work here): %w", profiler.CPUCannotRunUser(p.Source), profiler.ErrCannotRun)
	}
	fn, ok := host.Lookup(p.Source)
	if !ok {
		return nil, fmt.Errorf("the CPU backend has no Go kernel %q: known CPU kernels are %s", p.Source, strings.Join(host.Kernels(), ", "))
	}
	macros := make(map[string]int, len(p.Macros))
	for _, m := range p.Macros {
		v, err := strconv.Atoi(m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: macro %s=%q is not an integer: the CPU kernels take integer macros only", p.Source, m.Name, m.Value)
		}
		macros[m.Name] = v
	}
	return &kernel{name: p.Source, fn: fn, macros: macros}, nil
}

// Buffer is host memory standing in for device memory.
type Buffer struct{ data []byte }

// Size is the buffer's length in bytes.
func (b *Buffer) Size() int64 { return int64(len(b.data)) }

// Bytes exposes the memory (tests and kernels read it directly).
func (b *Buffer) Bytes() []byte { return b.data }

// Alloc refuses sizes larger than the host memory before allocating.
func (b *Backend) Alloc(n int64) (profiler.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cannot allocate %d bytes: the size must not be negative", n)
	}
	if n > b.info.MemoryBytes {
		return nil, fmt.Errorf("cannot allocate %s: the host has %s of memory; reduce the dims", units.Bytes(n), units.Bytes(b.info.MemoryBytes))
	}
	return &Buffer{data: make([]byte, n)}, nil
}

// Free drops the buffer (the Go collector reclaims it).
func (b *Backend) Free(buf profiler.Buffer) {
	if cb, ok := buf.(*Buffer); ok {
		cb.data = nil
	}
}

func asBuffer(buf profiler.Buffer) (*Buffer, error) {
	cb, ok := buf.(*Buffer)
	if !ok || cb == nil {
		return nil, fmt.Errorf("buffer %T was not allocated by the CPU backend", buf)
	}
	return cb, nil
}

// Upload copies src into the buffer.
func (b *Backend) Upload(buf profiler.Buffer, src []byte) error {
	cb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if len(src) > len(cb.data) {
		return fmt.Errorf("upload of %d bytes into a %d-byte buffer", len(src), len(cb.data))
	}
	copy(cb.data, src)
	return nil
}

// Download copies the buffer into dst.
func (b *Backend) Download(buf profiler.Buffer, dst []byte) error {
	cb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if len(dst) > len(cb.data) {
		return fmt.Errorf("download of %d bytes from a %d-byte buffer", len(dst), len(cb.data))
	}
	copy(dst, cb.data)
	return nil
}

// Fill sets every byte of the buffer (see profiler.Filler).
func (b *Backend) Fill(buf profiler.Buffer, value byte) error {
	cb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	for i := range cb.data {
		cb.data[i] = value
	}
	return nil
}

// Copy copies src into dst, of the same size (see profiler.Copier).
func (b *Backend) Copy(dst, src profiler.Buffer) error {
	d, err := asBuffer(dst)
	if err != nil {
		return err
	}
	s, err := asBuffer(src)
	if err != nil {
		return err
	}
	if len(d.data) != len(s.data) {
		return fmt.Errorf("copy of a %d-byte buffer into a %d-byte one", len(s.data), len(d.data))
	}
	copy(d.data, s.data)
	return nil
}

// DownloadRanges copies parts of the buffer (see profiler.RangeDownloader).
func (b *Backend) DownloadRanges(buf profiler.Buffer, offsets []int64, dsts [][]byte) error {
	cb, err := asBuffer(buf)
	if err != nil {
		return err
	}
	if err := profiler.CheckRanges(int64(len(cb.data)), offsets, dsts); err != nil {
		return err
	}
	for i, off := range offsets {
		copy(dsts[i], cb.data[off:])
	}
	return nil
}

// Run executes the launches once, in order.
func (b *Backend) Run(launches []profiler.Launch) error {
	for i := range launches {
		if err := b.cancelled(); err != nil {
			return err
		}
		if err := b.launch(&launches[i]); err != nil {
			return err
		}
	}
	return nil
}

// RunTimed runs the launches as Run does and returns the wall time of
// their Go run (profiler.RunTimer): on this backend the CPU is the device,
// so that is the device's time in the verification run.
func (b *Backend) RunTimed(launches []profiler.Launch) (float64, error) {
	start := time.Now()
	err := b.Run(launches)
	return time.Since(start).Seconds(), err
}

// Time measures each dispatch of each rep with the monotonic wall
// clock. Before each dispatch (not timed), as the CUDA backend and ncu's
// --cache-control all do: cold reads one word per 64-byte line of a
// buffer twice the last-level cache, on all cores, so the caches hold only
// clean lines of it; dirty writes one byte per line of it instead, so they
// hold dirty lines the kernel's loads must write back as they evict them;
// hot does nothing. Per dispatch, not per rep: a multi-dispatch spec's
// second kernel then finds cold caches too, instead of the first one's
// output.
func (b *Backend) Time(launches []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	t := profiler.Timing{Timer: "wall-clock", Samples: make([][]float64, reps)}
	for r := range reps {
		if err := b.cancelled(); err != nil {
			return t, err
		}
		t.Samples[r] = make([]float64, len(launches))
		for i := range launches {
			if mode != profiler.CacheHot {
				b.flushCache(mode == profiler.CacheDirty)
			}
			start := time.Now()
			if err := b.launch(&launches[i]); err != nil {
				return t, err
			}
			t.Samples[r][i] = float64(time.Since(start).Nanoseconds())
		}
	}
	return t, nil
}

// flushCache touches one byte per 64-byte line of a buffer twice the size
// of the last-level cache, split over all cores so that each core's
// private caches are evicted too: reading (clean) or writing (dirty).
// Returns what it read, so the reads are not dead code.
func (b *Backend) flushCache(dirty bool) byte {
	if b.flush == nil {
		// Twice the last-level cache, within reason on many-core hosts.
		b.flush = make([]byte, min(2*b.info.CacheBytes, 1<<30, max(b.info.MemoryBytes/8, 64<<20)))
		// Fresh pages all map the kernel's one zero page until written:
		// reading them would flush nothing.
		for i := 0; i < len(b.flush); i += 4096 {
			b.flush[i] = 1
		}
	}
	b.flushes++
	n := runtime.NumCPU()
	part := (len(b.flush)/n + 63) &^ 63
	var wg sync.WaitGroup
	sums := make([]byte, n)
	for w := range n {
		lo := min(w*part, len(b.flush))
		hi := min(lo+part, len(b.flush))
		buf := b.flush[lo:hi]
		wg.Go(func() {
			var x byte
			for i := 0; i < len(buf); i += 64 {
				if dirty {
					buf[i]++
				} else {
					x ^= buf[i]
				}
			}
			sums[w] = x
		})
	}
	wg.Wait()
	var x byte
	for _, s := range sums {
		x ^= s
	}
	b.flushSum ^= x
	return x
}

// Occupancy has no meaning for goroutines.
func (b *Backend) Occupancy(l profiler.Launch) profiler.Occupancy {
	name := ""
	if l.Dispatch != nil {
		name = l.Dispatch.Name
	}
	return profiler.Occupancy{Dispatch: name, Available: false, Reason: "n/a on the CPU backend: goroutines, not resident threadgroups"}
}

// Close releases the flush buffer.
func (b *Backend) Close() error {
	b.flush = nil
	return nil
}

// KernelPanic is what Run and Time panic with when a kernel panicked in a
// worker goroutine: the original value, where, and the worker's stack.
type KernelPanic struct {
	Kernel string
	Group  [3]int
	Value  any
	Stack  string
}

func (p *KernelPanic) Error() string {
	msg := fmt.Sprintf("cpu kernel %s, group (%d,%d,%d): %v", p.Kernel, p.Group[0], p.Group[1], p.Group[2], p.Value)
	if at := panicSite(p.Stack); at != "" {
		msg += " (at " + at + ")"
	}
	return msg
}

// isAccessor says whether a stack frame is one of the Tensor or Group
// helpers, which are never the kernel's own mistake.
func isAccessor(fn string) bool {
	for _, p := range []string{"github.com/mltop/mltop/kernels/kit/host.Tensor.", "github.com/mltop/mltop/kernels/kit/host.(*Group).", "github.com/mltop/mltop/kernels/kit/host.boundsPanic"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// panicSite finds the file:line that panicked in a goroutine stack: the
// first frame after the panic call that is not in the runtime.
func panicSite(stack string) string {
	lines := strings.Split(stack, "\n")
	seenPanic := false
	for i := 0; i+1 < len(lines); i++ {
		fn := lines[i]
		if strings.HasPrefix(fn, "panic(") {
			seenPanic = true
			continue
		}
		if !seenPanic || strings.HasPrefix(fn, "\t") || strings.HasPrefix(fn, "runtime.") || isAccessor(fn) {
			continue
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +0x"); j > 0 {
			loc = loc[:j]
		}
		return filepath.Base(loc)
	}
	return ""
}

func (p *KernelPanic) String() string { return p.Error() }

// launch runs one dispatch: all groups over runtime.NumCPU() goroutines.
func (b *Backend) launch(l *profiler.Launch) error {
	if l.Dispatch == nil {
		return fmt.Errorf("launch has no dispatch")
	}
	if l.Dispatch.Zero != "" || l.Kernel == nil {
		if l.Zero == nil {
			return fmt.Errorf("dispatch has neither a kernel nor a buffer to zero-fill")
		}
		cb, err := asBuffer(l.Zero)
		if err != nil {
			return err
		}
		clear(cb.data)
		return nil
	}
	k, ok := l.Kernel.(*kernel)
	if !ok {
		return fmt.Errorf("kernel %T was not compiled by the CPU backend", l.Kernel)
	}
	d := l.Dispatch
	args := make([][]byte, len(l.Args))
	for i, a := range l.Args {
		cb, err := asBuffer(a)
		if err != nil {
			return fmt.Errorf("%s argument %d: %w", d.Name, i, err)
		}
		args[i] = cb.data
	}
	grid := d.Grid
	for i := range grid {
		grid[i] = max(grid[i], 1)
	}
	total := int64(grid[0]) * int64(grid[1]) * int64(grid[2])
	workers := int64(runtime.NumCPU())
	workers = min(workers, total)
	// Chunks of groups keep the shared counter cold while still balancing
	// the uneven causal tiles.
	chunk := max(1, total/(workers*16))

	var next atomic.Int64
	var failed atomic.Pointer[KernelPanic]
	var wg sync.WaitGroup
	// stop is set once b.ctx is done: each worker checks it before every
	// group, so ctrl-C ends even a minutes-long launch within one group.
	var stop atomic.Bool
	ctx := b.ctx
	if ctx != nil && ctx.Done() != nil {
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-ctx.Done():
				stop.Store(true)
			case <-finished:
			}
		}()
	}
	work := func() {
		g := host.NewGroup(grid, d.Threads(), k.macros, d.Scalars, args)
		defer func() {
			if p := recover(); p != nil {
				failed.CompareAndSwap(nil, &KernelPanic{Kernel: k.name, Group: g.ID, Value: p, Stack: string(debug.Stack())})
			}
		}()
		for failed.Load() == nil && !stop.Load() {
			start := next.Add(chunk) - chunk
			if start >= total {
				return
			}
			for n := start; n < min(start+chunk, total) && !stop.Load(); n++ {
				x := int(n % int64(grid[0]))
				y := int(n / int64(grid[0]) % int64(grid[1]))
				z := int(n / (int64(grid[0]) * int64(grid[1])))
				g.ID = [3]int{x, y, z}
				g.Reset()
				k.fn(g)
			}
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if p := failed.Load(); p != nil {
		panic(p)
	}
	if stop.Load() {
		return ctx.Err()
	}
	return nil
}
