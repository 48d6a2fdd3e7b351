package metal

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// worker runs every Metal call on one goroutine locked to its OS thread:
// autorelease pools are per thread, and Metal objects are created, used and
// released there. Calls arrive over a channel and are answered in order.
type worker struct {
	calls chan func()
	wrap  func(func() error) error // e.g. an autorelease pool around each call
}

func newWorker(wrap func(func() error) error) *worker {
	w := &worker{calls: make(chan func()), wrap: wrap}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(ready)
		for f := range w.calls {
			f()
		}
	}()
	<-ready
	return w
}

// do runs f on the worker thread and waits. A panic in f becomes an error
// so the thread keeps serving.
func (w *worker) do(f func() error) (err error) {
	done := make(chan error, 1)
	w.calls <- func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic on the Metal thread: %v\n%s", p, debug.Stack())
			}
		}()
		if w.wrap != nil {
			done <- w.wrap(f)
			return
		}
		done <- f()
	}
	return <-done
}

// stop ends the worker goroutine (the OS thread exits with it, since it
// stays locked).
func (w *worker) stop() { close(w.calls) }
