package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// Runner executes specs on a backend in this process.
type Runner struct {
	backend profiler.Backend
	dev     profiler.DeviceInfo

	mu      sync.Mutex
	kernels map[string]profiler.Kernel
	refs    map[string]*profiler.Reference
	// refMaking holds the references being made ahead (prefetchHostWork),
	// closed when done; prefetching is true while shapes' host work is
	// being made ahead (one at a time, in the order of ahead).
	refMaking   map[string]chan struct{}
	prefetching bool
	ahead       []aheadShape
	closed      bool // Close was called: nothing more is made ahead
	inputs      inputCache
	spare       map[string]profiler.Buffer // the last spec's device buffers, by buffer name, for the next (see allocate)
	guards      map[profiler.Buffer]byte   // the byte each buffer's guard holds, where known (guard.go)
	queued      map[string]bool            // programs handed to the compile pool (see Prefetch)
	// loading holds the programs being loaded (ahead, or by the spec that
	// runs them), closed when done; aheadLoads how the loads ahead went,
	// until a spec takes them (see preload). loadMu makes the loads ahead
	// one at a time, in the order of the loader's queue; gate keeps them
	// out of timed launches.
	loader     compilePool
	loading    map[string]chan struct{}
	aheadLoads map[string]aheadLoad
	loadMu     sync.Mutex
	gate       loadGate
	pool       compilePool
	workers    int // compile pool size (CompileWorkers)
	plans      *PlanCache
	// hostBytes and hostVals keep the host slices of the output checks
	// (downloads, decoded values), layouts the last references' check
	// layouts (see checkLayout).
	hostBytes hostPool[byte]
	hostVals  hostPool[float32]
	layouts   []*checkLayout
	// pristine holds a device copy of the current input set's buffers, by
	// name, for backends that copy on the device (profiler.Copier): each
	// spec of a shape restores its inputs from them instead of uploading.
	pristine    map[string]profiler.Buffer
	pristineKey string
	// shared is the directory the workers of a multi-device sweep share
	// inputs and references through (see SharedCacheEnv); fillThreads
	// caps the goroutines that generate inputs (0: all cores).
	shared      *hostCache
	fillThreads int
	// inputBudget bounds the input cache (see inputBudget).
	inputBudget int64
	// measured is when the last measurement ended: a sweep's next spec
	// finds the GPU busy and its clocks up (see warmupFor).
	measured time.Time
}

// NewRunner wraps a backend. The device's measured ceilings come from its
// cached calibration when there is one (see Calibrate).
func NewRunner(b profiler.Backend) *Runner {
	dev := b.Info()
	if c, err := LoadCalibration(dev); err == nil {
		dev = ApplyCalibration(dev, c)
	}
	avail, _ := HostMemory()
	return &Runner{backend: b, dev: dev, kernels: map[string]profiler.Kernel{}, refs: map[string]*profiler.Reference{}, refMaking: map[string]chan struct{}{}, queued: map[string]bool{},
		loading: map[string]chan struct{}{}, aheadLoads: map[string]aheadLoad{}, workers: CompileWorkers(), plans: NewPlanCache(0),
		inputBudget: inputBudget(avail, 1)}
}

// Calibrate measures the device's ceilings with the backend's micro-kernels
// now (lazily: only when none are cached, unless force), caches them, and
// uses them for the Results that follow.
func (r *Runner) Calibrate(force bool) (*Calibration, error) {
	var c *Calibration
	var err error
	if force {
		cal, ok := r.backend.(Calibrator)
		if !ok {
			return nil, fmt.Errorf("the %s backend has no calibration micro-kernels", r.dev.Backend)
		}
		got, cerr := cal.Calibrate()
		if cerr != nil {
			return nil, cerr
		}
		c = &got
		_, err = SaveCalibration(r.dev, got)
	} else {
		c, err = EnsureCalibration(r.backend, r.dev)
	}
	if c != nil {
		r.mu.Lock()
		r.dev = ApplyCalibration(r.dev, c)
		r.mu.Unlock()
	}
	return c, err
}

// Device is the backend's device.
func (r *Runner) Device() profiler.DeviceInfo { return r.dev }

// Close stops the compile pool, frees the spare buffers and closes the
// backend.
func (r *Runner) Close() error {
	r.pool.close()
	r.loader.close()
	r.gate.close()
	r.mu.Lock()
	r.ahead, r.closed = nil, true // the shapes queued ahead are not made
	spare := r.spare
	r.spare = nil
	stale := r.dropPristine("")
	r.mu.Unlock()
	r.loadMu.Lock() // a load ahead in flight ends before the backend closes
	r.loadMu.Unlock()
	for _, b := range spare {
		r.freeBuffer(b)
	}
	for _, b := range stale {
		r.freeBuffer(b)
	}
	return r.backend.Close()
}

// Run measures one spec. It never panics: a panic in a family or backend
// becomes a crashed result.
func (r *Runner) Run(ctx context.Context, s profiler.Spec, opt profiler.Options, progress func(profiler.Progress)) (res profiler.Result) {
	start := time.Now()
	res = profiler.Result{Time: start.UTC(), Spec: s, Backend: r.dev.Backend, Device: r.dev.Name}
	defer func() {
		if p := recover(); p != nil {
			res.Status = profiler.StatusCrashed
			res.Error = fmt.Sprintf("panic: %v\n%s", p, lastLines(string(debug.Stack()), 12))
		}
		res.WallSeconds = time.Since(start).Seconds()
	}()
	if progress == nil {
		progress = func(profiler.Progress) {}
	}
	opt = opt.WithDefaults()
	res.Phases = &profiler.Phases{}
	if ib, ok := r.backend.(profiler.Interruptible); ok && ctx != nil {
		ib.SetContext(ctx)
		defer ib.SetContext(nil)
	}
	defer func() {
		// A backend cut short by ctrl-C (profiler.Interruptible) fails its
		// launch with context.Canceled: that is a cancellation, not an error.
		if ctx != nil && ctx.Err() != nil && res.Status == profiler.StatusError {
			res.Status, res.Error = profiler.StatusCancelled, CancelReason(ctx)
		}
	}()
	r.run(ctx, s, opt, progress, &res, newPhaseClock(res.Phases))
	return res
}

func (r *Runner) fail(res *profiler.Result, st profiler.Status, err error) {
	res.Status = st
	res.Error = err.Error()
}

func (r *Runner) run(ctx context.Context, s profiler.Spec, opt profiler.Options, progress func(profiler.Progress), res *profiler.Result, clk *phaseClock) {
	ph := clk.p
	defer clk.mark(&ph.Free) // what follows the last mark: freeing buffers
	progress(profiler.Progress{Phase: "plan"})
	dev := opt.Limits.Apply(r.dev)
	prep, err := Prepare(s, dev, PrepareOptions{Mode: opt.CacheMode(), Cache: r.plans})
	res.Spec = prep.Spec
	if prep.Plan != nil {
		res.FLOPs, res.Bytes, res.MemoryBytes = prep.Plan.FLOPs, prep.Plan.Bytes, prep.Plan.MemoryBytes()
		res.Notes = append(res.Notes, prep.Plan.Notes...)
	}
	if err != nil {
		r.fail(res, profiler.StatusInvalid, err)
		return
	}
	f, full, plan := prep.Family, prep.Spec, prep.Plan

	clk.mark(&ph.Plan)
	progress(profiler.Progress{Phase: "compile"})
	launches, setup, err := r.compile(plan, res)
	if err != nil {
		st := profiler.StatusCompileError
		if errors.Is(err, profiler.ErrCannotRun) {
			st = profiler.StatusInvalid
			// The budget needs no compiler: show it anyway.
			for i := range plan.Dispatches {
				res.Budget = append(res.Budget, BuildBudget(&plan.Dispatches[i], dev, profiler.KernelAttrs{}))
			}
		}
		r.fail(res, st, err)
		return
	}
	for i := range launches {
		l := launches[i]
		if l.Kernel == nil {
			continue
		}
		res.Budget = append(res.Budget, BuildBudget(l.Dispatch, dev, l.Kernel.Attrs()))
		occ := r.backend.Occupancy(l)
		if occ.Estimate && opt.Limits != nil {
			// The user's device_limits replace the table the estimate came from.
			occ = EstimateOccupancy(dev, l.Dispatch, l.Kernel.Attrs())
			occ.Source = "device_limits from the sweep file"
		}
		res.Occupancy = append(res.Occupancy, occ)
	}
	if err := overCompiledThreads(launches); err != nil {
		r.fail(res, profiler.StatusInvalid, err)
		return
	}

	clk.mark(&ph.Compile)
	bufs, err := r.allocate(ctx, plan, opt.Seed, full, clk)
	defer r.keep(bufs)
	if err != nil {
		r.fail(res, profiler.StatusError, err)
		return
	}
	bind(launches, plan, bufs)
	bind(setup, plan, bufs)
	if err := r.writeSymbols(plan, bufs, setup, launches); err != nil {
		r.fail(res, symbolStatus(err), err)
		return
	}

	progress(profiler.Progress{Phase: "verify"})
	if err := r.runSetup(setup, plan, bufs, ph); err != nil {
		r.fail(res, profiler.StatusError, err)
		return
	}
	if err := r.runVerification(launches, ph); err != nil {
		r.fail(res, profiler.StatusError, fmt.Errorf("run: %w", err))
		return
	}
	if err := r.checkGuards(plan, bufs); err != nil {
		r.fail(res, profiler.StatusMismatch, err)
		return
	}
	chk, err := r.checkOutputs(f, full, plan, bufs, opt, clk)
	clk.mark(&ph.Verify)
	if err != nil {
		r.fail(res, profiler.StatusError, err)
		return
	}
	defer chk.release()
	// The verdict is compared while the GPU warms up, and is in res before
	// the first timed launch (timing does not depend on it; a mismatch is
	// reported as before).
	verdict := chk.compareFirst()
	var judged bool
	judge := func() {
		if !judged {
			judged = true
			setVerdict(res, verdict())
			clk.mark(&ph.Verify)
		}
	}
	err = r.measure(ctx, launches, r.restorer(plan, bufs), opt, progress, res, clk, judge)
	judge()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			res.Status, res.Error = profiler.StatusCancelled, CancelReason(ctx)
			return
		}
		r.fail(res, profiler.StatusError, err)
		return
	}
	// Verify again after the timed launches: a kernel that keeps state
	// across launches (counters, lists, accumulators that are never reset)
	// can be right once and wrong on every timed launch after it.
	if res.Status == profiler.StatusOK {
		again, err := chk.again()
		clk.mark(&ph.VerifyAfter)
		if err != nil {
			r.fail(res, profiler.StatusError, fmt.Errorf("verification after timing: %w", err))
			return
		}
		if !again.Pass {
			res.Verdict = &again
			res.Status = profiler.StatusMismatch
			res.Error = "right on the first launch, wrong after the timed launches (state kept across launches?): " + mismatchText(again)
			if again.Hint != "" {
				res.Error += "; " + again.Hint
			}
		}
	}
	throughput(res, dev)
}

func programKey(p profiler.Program) string {
	k := p.Source + ":" + p.Entry
	for _, m := range p.Macros {
		k += "|" + m.Name + "=" + m.Value
	}
	if p.Code != "" {
		// A user kernel's source changes under the same name (live reload).
		k += "|" + p.SourceKey()
	}
	return k
}

// kernel is p's kernel: loaded already (ahead, see preload: its load time
// counts as res's Ahead phase), or compiled and loaded now. A load ahead
// in flight is waited for; one that failed is done again here, and its
// error noted on res when this one works.
func (r *Runner) kernel(p profiler.Program, res *profiler.Result) (profiler.Kernel, error) {
	key := programKey(p)
	r.mu.Lock()
	for r.loading[key] != nil {
		wait := r.loading[key]
		r.mu.Unlock()
		<-wait
		r.mu.Lock()
	}
	k, ok := r.kernels[key]
	ahead, wasAhead := r.aheadLoads[key]
	delete(r.aheadLoads, key)
	var loaded chan struct{}
	if !ok {
		loaded = make(chan struct{}) // no load ahead of it starts meanwhile
		r.loading[key] = loaded
	}
	r.mu.Unlock()
	if ok {
		if wasAhead && res.Phases != nil {
			res.Phases.Ahead += ahead.took.Seconds()
		}
		return k, nil
	}
	k, err := r.backend.Compile(p)
	r.mu.Lock()
	delete(r.loading, key)
	if err == nil {
		r.kernels[key] = k
	}
	r.mu.Unlock()
	close(loaded)
	if err != nil {
		return nil, err
	}
	if wasAhead && ahead.err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("loading %s ahead failed (%v); it was loaded in its turn", p.Entry, ahead.err))
	}
	return k, nil
}

func (r *Runner) compile(plan *profiler.Plan, res *profiler.Result) (timed, setup []profiler.Launch, err error) {
	mk := func(ds []profiler.Dispatch) ([]profiler.Launch, error) {
		out := make([]profiler.Launch, len(ds))
		for i := range ds {
			out[i].Dispatch = &ds[i]
			if ds[i].Zero != "" {
				if _, ok := plan.Buffer(ds[i].Zero); !ok {
					return nil, fmt.Errorf("dispatch %s zero-fills unknown buffer %s", ds[i].Name, ds[i].Zero)
				}
				continue
			}
			k, err := r.kernel(ds[i].Program, res)
			if err != nil {
				return nil, fmt.Errorf("compiling %s (%s): %w", ds[i].Name, ds[i].Program.Entry, err)
			}
			out[i].Kernel = k
		}
		return out, nil
	}
	if setup, err = mk(plan.Setup); err != nil {
		return nil, nil, err
	}
	if timed, err = mk(plan.Dispatches); err != nil {
		return nil, nil, err
	}
	return timed, setup, nil
}

func bind(ls []profiler.Launch, plan *profiler.Plan, bufs map[string]profiler.Buffer) {
	for i := range ls {
		d := ls[i].Dispatch
		if d.Zero != "" {
			ls[i].Zero = bufs[d.Zero]
			continue
		}
		ls[i].Args = make([]profiler.Buffer, len(d.Args))
		for j, name := range d.Args {
			ls[i].Args[j] = bufs[name]
		}
	}
}

// allocate creates and fills every buffer. Inputs are generated once per
// (shape, seed) and reused while a sweep varies only knobs (see
// inputCache). Device buffers are reused from the previous spec where the
// sizes match (see keep): every buffer is filled again here whatever it
// held, inputs from the cached bytes, outputs with poison, scratch with
// zeros, so what a previous spec left in it cannot leak into this one.
func (r *Runner) allocate(ctx context.Context, plan *profiler.Plan, seed uint64, s profiler.Spec, clk *phaseClock) (map[string]profiler.Buffer, error) {
	defer clk.mark(&clk.p.Alloc)
	bufs := map[string]profiler.Buffer{}
	key := inputKey(s, seed)
	r.mu.Lock()
	set := r.inputs.use(key, r.inputBudget)
	if set.ready != nil { // made ahead: wait for what is not done yet
		r.mu.Unlock()
		clk.mark(&clk.p.Alloc)
		err := waitReady(ctx, set.ready)
		clk.mark(&clk.p.Inputs)
		if err != nil {
			return bufs, err
		}
		r.mu.Lock()
	}
	// Take the previous spec's buffers of the sizes wanted, and free the
	// others before allocating, so two specs' buffers are never held at once.
	r.reuseSpare(plan, bufs)
	unused := r.spare
	r.spare = nil
	stale := r.dropPristine(key)
	r.mu.Unlock()
	for _, b := range unused {
		r.freeBuffer(b)
	}
	for _, b := range stale {
		r.freeBuffer(b)
	}
	for _, b := range plan.Buffers {
		// Generating a large shape's inputs takes seconds per buffer:
		// ctrl-C stops between buffers.
		if ctx != nil && ctx.Err() != nil {
			return bufs, ctx.Err()
		}
		buf := bufs[b.Name]
		if buf == nil {
			var err error
			if buf, err = r.backend.Alloc(allocBytes(b)); err != nil {
				return bufs, fmt.Errorf("allocating %s (%s): %w", b.Name, units.Bytes(b.Bytes()), err)
			}
			bufs[b.Name] = buf
		}
		switch {
		case b.Init.Generated():
		case b.Init == profiler.InitPoison:
			if err := r.fillWhole(buf, 0xff, &r.inputs.poison); err != nil { // NaN in f32, f16 and bf16
				return bufs, err
			}
			continue
		default: // zero
			if err := r.fillWhole(buf, 0, &r.inputs.zero); err != nil {
				return bufs, err
			}
			continue
		}
		raw := r.input(set, b, seed, clk)
		if r.restore(b, buf) {
			continue
		}
		if _, known := r.guardOf(buf); !known {
			// the upload leaves the guard as it is: poison it first
			if err := r.fillWhole(buf, 0xff, &r.inputs.poison); err != nil {
				return bufs, err
			}
		}
		if err := r.backend.Upload(buf, raw); err != nil {
			return bufs, fmt.Errorf("uploading %s: %w", b.Name, err)
		}
		r.keepPristine(key, b, buf, plan)
	}
	return bufs, nil
}

// input returns buffer b's generated values of set, encoded in its
// dtype, making what the set lacks: the values (generation counts as the
// inputs phase of clk, when there is one) and their bytes, cached with
// them (a sweep over knobs uploads the same bytes for every spec of a
// shape). allocate calls it, and prefetchHostWork ahead of the spec
// (clk nil: made in the background, see parallel).
func (r *Runner) input(set *inputSet, b profiler.BufferSpec, seed uint64, clk *phaseClock) []byte {
	r.mu.Lock()
	vals := set.data[b.Name]
	raw := set.raw[b.Name]
	r.mu.Unlock()
	if int64(len(vals)) != b.Elems {
		if clk != nil {
			clk.mark(&clk.p.Alloc)
		}
		vals = fill(b, seed, r.fillThreads, clk == nil)
		raw = nil
		if clk != nil {
			clk.mark(&clk.p.Inputs)
		}
		r.mu.Lock()
		set.data[b.Name] = vals
		set.bytes += 4 * int64(len(vals))
		r.mu.Unlock()
	}
	if int64(len(raw)) != b.Bytes() {
		raw = make([]byte, b.Bytes())
		encode(b, raw, vals, r.fillThreads, clk == nil)
		r.mu.Lock()
		set.raw[b.Name] = raw
		set.bytes += int64(len(raw))
		r.mu.Unlock()
	}
	return raw
}

// dropPristine forgets the device copies of another input set than key
// and returns them to be freed (before this spec allocates). Caller holds
// r.mu.
func (r *Runner) dropPristine(key string) []profiler.Buffer {
	if r.pristineKey == key {
		return nil
	}
	var out []profiler.Buffer
	for _, b := range r.pristine {
		out = append(out, b)
	}
	r.pristine, r.pristineKey = nil, key
	return out
}

// restore copies input b's device copy into buf, if there is one of its
// size; false: upload instead.
func (r *Runner) restore(b profiler.BufferSpec, buf profiler.Buffer) bool {
	cp, ok := r.backend.(profiler.Copier)
	if !ok {
		return false
	}
	r.mu.Lock()
	src := r.pristine[b.Name]
	r.mu.Unlock()
	if src == nil || src.Size() != buf.Size() {
		return false
	}
	if cp.Copy(buf, src) != nil {
		return false
	}
	if v, known := r.guardOf(src); known { // the copy is whole: the guard too
		r.setGuard(buf, v)
	} else {
		r.forgetGuard(buf)
	}
	return true
}

// keepPristine makes a device copy of input b, just uploaded into buf,
// while the plan's buffers plus the copies stay within half of the
// device's memory (the copies are a cache: never worth running short).
func (r *Runner) keepPristine(key string, b profiler.BufferSpec, buf profiler.Buffer, plan *profiler.Plan) {
	cp, ok := r.backend.(profiler.Copier)
	if !ok || r.dev.MemoryBytes <= 0 {
		return
	}
	r.mu.Lock()
	held := int64(0)
	for _, p := range r.pristine {
		held += p.Size()
	}
	fits := r.pristineKey == key && r.pristine[b.Name] == nil && plan.MemoryBytes()+held+b.Bytes() <= r.dev.MemoryBytes/2
	r.mu.Unlock()
	if !fits {
		return
	}
	p, err := r.backend.Alloc(allocBytes(b))
	if err != nil {
		return
	}
	if err := cp.Copy(p, buf); err != nil {
		r.backend.Free(p)
		return
	}
	if v, known := r.guardOf(buf); known {
		r.setGuard(p, v)
	}
	r.mu.Lock()
	if r.pristine == nil {
		r.pristine = map[string]profiler.Buffer{}
	}
	r.pristine[b.Name] = p
	r.mu.Unlock()
}

// keep holds a finished spec's device buffers for the next spec (see
// allocate), instead of freeing and allocating them again: a sweep over
// knobs needs the same sizes spec after spec, and device allocation costs
// milliseconds.
func (r *Runner) keep(bufs map[string]profiler.Buffer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spare == nil {
		r.spare = map[string]profiler.Buffer{}
	}
	for name, b := range bufs {
		if b != nil {
			r.spare[name] = b
		}
	}
}

// reuseSpare puts the previous spec's buffers into bufs, taking them out
// of r.spare (held with r.mu): each buffer name gets the device buffer it
// had before when the size matches, the others a buffer of their size in
// name order. The same names thus get the same device memory spec after
// spec: a kernel's time depends on where its buffers lie (the relative
// placement of, say, K and V moved an attention kernel's median by up to
// 5% when Go's map order shuffled them), so every spec of a sweep's shape
// runs with one placement, and a spec run again runs with the same one.
func (r *Runner) reuseSpare(plan *profiler.Plan, bufs map[string]profiler.Buffer) {
	var rest []profiler.BufferSpec
	for _, b := range plan.Buffers {
		if old := r.spare[b.Name]; old != nil && old.Size() == allocBytes(b) {
			bufs[b.Name] = old
			delete(r.spare, b.Name)
			continue
		}
		rest = append(rest, b)
	}
	names := slices.Sorted(maps.Keys(r.spare))
	for _, b := range rest {
		for _, name := range names {
			if old := r.spare[name]; old != nil && old.Size() == allocBytes(b) {
				bufs[b.Name] = old
				delete(r.spare, name)
				break
			}
		}
	}
}

// setVerdict puts the verdict before timing in res, with the status it
// gives.
func setVerdict(res *profiler.Result, verdict profiler.Verdict) {
	res.Verdict = &verdict
	res.Status = profiler.StatusOK
	if verdict.Unchecked {
		res.Status = profiler.StatusUnchecked
	}
	if !verdict.Pass {
		res.Status = profiler.StatusMismatch
		res.Error = mismatchText(verdict)
		if verdict.Hint != "" {
			res.Error += "; " + verdict.Hint
		}
	}
}

// checkOutputs finds (or makes) the spec's reference and downloads what it
// checks of the outputs.
func (r *Runner) checkOutputs(f profiler.Family, s profiler.Spec, plan *profiler.Plan, bufs map[string]profiler.Buffer, opt profiler.Options, clk *phaseClock) (*outputCheck, error) {
	ref, err := r.reference(f, s, opt, clk)
	if err != nil {
		return nil, err
	}
	return r.startCheck(ref, plan, bufs, f.Tolerance(s.DType))
}

// reference is the spec's reference: kept, being made ahead (waited for),
// or made now.
func (r *Runner) reference(f profiler.Family, s profiler.Spec, opt profiler.Options, clk *phaseClock) (*profiler.Reference, error) {
	key := refKey(s, opt)
	r.mu.Lock()
	if making := r.refMaking[key]; making != nil { // made ahead: wait for it
		r.mu.Unlock()
		clk.mark(&clk.p.Verify)
		<-making
		clk.mark(&clk.p.Reference)
		r.mu.Lock()
	}
	ref := r.refs[key]
	inputs := profiler.Inputs(r.inputs.cur.data)
	r.mu.Unlock()
	if ref != nil {
		return ref, nil
	}
	var err error
	clk.mark(&clk.p.Verify) // the run before this call counts as verification
	if dr, ok := f.(profiler.DeviceReference); ok {
		ref, err = dr.DeviceReference(s, inputs, opt.MaxRows, opt.Seed, r.onDevice(opt.Limits.Apply(r.dev), opt.Seed))
	} else {
		ref, err = r.shared.reference(key, func() (*profiler.Reference, error) {
			return f.Reference(s, inputs, opt.MaxRows, opt.Seed)
		})
	}
	clk.mark(&clk.p.Reference)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	r.mu.Lock()
	r.keepRef(key, ref)
	r.mu.Unlock()
	return ref, nil
}
