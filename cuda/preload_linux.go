//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/mltop/mltop/profiler"
)

// loader is a second OS thread with the context current, that loads the
// modules of the specs ahead (Preload) while the CUDA thread measures:
// loading a module took the CUDA thread about a millisecond per spec
// (cuModuleLoadData, and the kernel's load at cuModuleGetFunction under
// lazy loading), with the GPU idle meanwhile. Started on the first
// Preload; it ends before the context is released.
type loader struct {
	cmds chan func()
	err  error         // the loader thread could not make the context current
	done chan struct{} // closed when the loader thread has ended
}

// Preload loads p's cubin, compiled already (Precompile), as a module on
// the loader thread, and returns its kernel for the CUDA thread to launch
// (see run.Preloader). A program not in the compile cache (its compile
// failed) is not compiled again here: the error says so, and Compile,
// called on the spec's turn, compiles it and reports its error there. The
// caller keeps loads out of timed launches: under lazy loading a
// kernel's load may synchronize the context.
func (b *backend) Preload(p profiler.Program) (profiler.Kernel, error) {
	src, _, hdrs, err := programSource(p, b.headers)
	if err != nil {
		return nil, err
	}
	_, _, key := b.compileKey(p, src, hdrs)
	ce, ok := b.cache.get(key)
	if !ok {
		return nil, fmt.Errorf("%s is not in the compile cache (its compile failed, or did not run)", p.Entry)
	}
	var k *kernel
	err = b.onLoader(func() error {
		var err error
		k, err = b.loadKernel(p, ce)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// errLoaderClosed: the backend closed before a load ahead could run.
var errLoaderClosed = errors.New("the CUDA backend is closed")

// onLoader runs f on the loader thread (starting it) and waits.
func (b *backend) onLoader(f func() error) error {
	b.loaderOnce.Do(func() {
		l := &loader{cmds: make(chan func()), done: make(chan struct{})}
		b.loaderMu.Lock()
		b.ld = l // before it starts: teardown waits for it from now on
		b.loaderMu.Unlock()
		ready := make(chan error, 1)
		go b.loaderLoop(l, ready)
		l.err = <-ready
	})
	b.loaderMu.Lock()
	l := b.ld
	b.loaderMu.Unlock()
	if l.err != nil {
		return l.err
	}
	errc := make(chan error, 1)
	run := func() {
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("panic on the CUDA loader thread: %v", p)
			}
		}()
		errc <- f()
	}
	select {
	case l.cmds <- run:
	case <-b.quit:
		return errLoaderClosed
	}
	return <-errc
}

// loaderLoop is the loader thread: the context made current, then loads
// until the backend closes.
func (b *backend) loaderLoop(l *loader, ready chan<- error) {
	defer close(l.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := b.drv
	if err := d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, b.ctx); err != nil {
		ready <- fmt.Errorf("the CUDA loader thread: %w", err)
		return
	}
	ready <- nil
	for {
		select {
		case f := <-l.cmds:
			f()
		case <-b.quit:
			d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, 0)
			return
		}
	}
}

// stopLoader waits for the loader thread to end (the backend is closing:
// quit is closed), so that no load runs as the context is released. CUDA
// thread.
func (b *backend) stopLoader() {
	b.loaderMu.Lock()
	l := b.ld
	b.loaderMu.Unlock()
	if l != nil {
		<-l.done
	}
}
