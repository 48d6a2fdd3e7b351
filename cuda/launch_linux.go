//go:build linux

package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/mltop/mltop/profiler"
)

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
	// Each parameter's bytes, as C lays out its type, in the kernel's
	// parameter order: the driver copies the parameter's size from each.
	ptrs := make([]uint64, len(l.Args))
	for i, a := range l.Args {
		buf, err := asBuffer(a)
		if err != nil {
			return fmt.Errorf("dispatch %s argument %s: %w", d.Name, d.Args[i], err)
		}
		ptrs[i] = buf.ptr
	}
	vals, err := paramBytes(d, ptrs)
	if err != nil {
		return err
	}
	params := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		params[i] = unsafe.Pointer(&vals[i][0])
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
	fn, op := b.drv.cuLaunchKernel, "cuLaunchKernel"
	if d.Cooperative {
		if err := b.fitsCoresident(d, k, dyn); err != nil {
			return err
		}
		fn, op = b.drv.cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel"
	}
	var r uintptr
	if d.Cooperative { // no extra: argument
		r, _, _ = purego.SyscallN(fn, k.fn, uintptr(g[0]), uintptr(g[1]), uintptr(g[2]),
			uintptr(t[0]), uintptr(t[1]), uintptr(t[2]), uintptr(dyn), b.stream, pp)
	} else {
		r, _, _ = purego.SyscallN(fn, k.fn, uintptr(g[0]), uintptr(g[1]), uintptr(g[2]),
			uintptr(t[0]), uintptr(t[1]), uintptr(t[2]), uintptr(dyn), b.stream, pp, 0)
	}
	runtime.KeepAlive(vals)
	runtime.KeepAlive(params)
	if code := int32(r); code != 0 {
		return b.check(fmt.Errorf("launching %s (grid %v, group %v, %d B dynamic shared): %w", d.Name, g, t, dyn, b.drv.err(op, int(code))))
	}
	return nil
}

// fitsCoresident refuses a cooperative launch whose blocks are not all
// resident at once (coresidentError), asking the driver once per kernel,
// threads and dynamic shared memory: no query runs between the events of
// a timed launch. CUDA thread only.
func (b *backend) fitsCoresident(d *profiler.Dispatch, k *kernel, dyn int) error {
	key := coresidentKey{threads: d.Threads(), dyn: dyn, grid: d.Grid}
	if err, known := k.coresident[key]; known {
		return err
	}
	var n int32
	if err := b.drv.call("cuOccupancyMaxActiveBlocksPerMultiprocessor", b.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), k.fn, uintptr(key.threads), uintptr(dyn)); err != nil {
		return fmt.Errorf("dispatch %s is cooperative: cannot ask the driver how many of its blocks fit at once: %w", d.Name, err)
	}
	limiter := limiterFor(b.info, occupancyInput{Threads: key.threads, Registers: k.attrs.Registers, SharedBytes: k.attrs.StaticTGM + dyn, ReservedShared: b.reserved, DriverBlocks: int(n)})
	err := coresidentError(d.Name, b.info.Name, d.Grid, key.threads, int(n), b.info.Units, limiter)
	if k.coresident == nil {
		k.coresident = map[coresidentKey]error{}
	}
	k.coresident[key] = err
	return err
}

// Run executes the launches once, in order, and waits.
func (b *backend) Run(ls []profiler.Launch) error {
	return b.onStream(func() error { return b.launchAll(ls) })
}

// launchAll enqueues the launches in order. CUDA thread only.
func (b *backend) launchAll(ls []profiler.Launch) error {
	for i := range ls {
		if err := b.launch(&ls[i]); err != nil {
			return err
		}
	}
	return nil
}

// onStream runs enqueue on the CUDA thread, on a live context, and waits
// for the stream to finish what it enqueued.
func (b *backend) onStream(enqueue func() error) error {
	return b.onStreamThen(enqueue, nil)
}

// onStreamThen is onStream, then reads what the finished work left (when
// read is not nil) on the CUDA thread, before anything else runs there.
func (b *backend) onStreamThen(enqueue, read func() error) error {
	return b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		if err := enqueue(); err != nil {
			return err
		}
		if err := b.check(b.drv.call("cuStreamSynchronize", b.drv.cuStreamSynchronize, b.stream)); err != nil || read == nil {
			return err
		}
		return read()
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
