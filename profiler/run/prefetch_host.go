package run

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// inputKey names the generated inputs of spec s (resolved) and seed: the
// specs of one shape share them.
func inputKey(s profiler.Spec, seed uint64) string {
	return fmt.Sprintf("%s|seed=%d|v=%s", s.ShapeKey(), seed, profiler.FamilyVersion(s.Kernel))
}

// refKey names the float64 reference of spec s (resolved) under opt.
func refKey(s profiler.Spec, opt profiler.Options) string {
	return fmt.Sprintf("%s|seed=%d|rows=%d|v=%s", s.ShapeKey(), opt.Seed, opt.MaxRows, profiler.FamilyVersion(s.Kernel))
}

// prefetchHostWork queues the making of the inputs and the float64
// reference of prep's shape, on a goroutine while the current spec is
// measured, so that a sweep moving to a new shape does not hold the GPU
// idle while the host generates, encodes and checks: the spec that needs
// them waits only for what is not done yet (allocate, verify). The shapes
// are made one after the other in the order asked (a device's next
// shapes), while the sets made ahead and not yet used stay within half of
// the input cache's budget; nothing when the shape's inputs are at hand
// or asked for already. A shape whose spec comes before its turn makes
// its inputs in place, and the queue then skips it.
func (r *Runner) prefetchHostWork(prep *Prepared, opt profiler.Options) {
	a := aheadShape{prep: prep, opt: opt, key: inputKey(prep.Spec, opt.Seed)}
	for _, b := range prep.Plan.Buffers {
		if b.Init.Generated() {
			a.gen = append(a.gen, b)
			a.size += 4*b.Elems + b.Bytes()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.size > r.inputBudget/2 || r.inputs.find(a.key) != nil ||
		slices.ContainsFunc(r.ahead, func(q aheadShape) bool { return q.key == a.key }) {
		return
	}
	r.ahead = append(r.ahead, a)
	if !r.prefetching {
		r.prefetching = true
		go r.makeAhead()
	}
}

// aheadShape is a shape whose host work waits its turn (prefetchHostWork).
type aheadShape struct {
	prep *Prepared
	opt  profiler.Options
	key  string
	gen  []profiler.BufferSpec // its generated buffers
	size int64                 // their values and bytes
}

// makeAhead makes the queued shapes' host work, oldest first, until the
// queue is empty.
func (r *Runner) makeAhead() {
	inBackground() // host work ahead of its spec: the device thread comes first
	for {
		r.mu.Lock()
		if len(r.ahead) == 0 {
			r.prefetching = false
			r.mu.Unlock()
			return
		}
		a := r.ahead[0]
		r.ahead = r.ahead[1:]
		if r.closed || r.inputs.find(a.key) != nil || r.inputs.aheadBytes()+a.size > r.inputBudget/2 {
			r.mu.Unlock()
			continue // made in place already, or no room: made in place
		}
		set := &inputSet{key: a.key, data: map[string][]float32{}, raw: map[string][]byte{}, ready: make(chan struct{}), ahead: a.size}
		r.inputs.sets = append(r.inputs.sets, set)
		// The reference is promised now, so that a spec of this shape that
		// reaches verify before it is made waits instead of making it too.
		refK := refKey(a.prep.Spec, a.opt)
		refDone := r.promiseRef(a.prep, refK)
		r.mu.Unlock()
		r.makeShapeAhead(a, set, refK, refDone)
	}
}

// makeShapeAhead makes a's inputs into set, then its reference when it
// was promised (refDone).
func (r *Runner) makeShapeAhead(a aheadShape, set *inputSet, refK string, refDone chan struct{}) {
	keepPromise := sync.OnceFunc(func() { // verify stops waiting, whatever happened
		if refDone != nil {
			r.mu.Lock()
			delete(r.refMaking, refK)
			r.mu.Unlock()
			close(refDone)
		}
	})
	// A family that panics here panics again, where it is reported, when
	// its spec runs.
	defer func() { _ = recover(); keepPromise() }()
	r.makeInputs(set, a.gen, a.opt.Seed)
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if refDone != nil && !closed { // closed: the inputs may be cut short
		r.makeReference(a.prep, set, a.opt, refK, keepPromise)
	}
}

// waitReady waits for ready, or for ctx's end (ctrl-C while a shape's
// inputs are made ahead stops at once, as it stops between buffers).
func waitReady(ctx context.Context, ready <-chan struct{}) error {
	if ctx == nil {
		<-ready
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// makeInputs generates and encodes the buffers gen of set, then marks the
// set ready. The set is filled however the generation ends.
func (r *Runner) makeInputs(set *inputSet, gen []profiler.BufferSpec, seed uint64) {
	defer close(set.ready)
	for _, b := range gen {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed { // the Runner is closing: a spec that still wants them makes them
			return
		}
		r.input(set, b, seed, nil)
	}
}

// promiseRef registers the float64 reference of prep's spec as being made
// ahead (verify then waits for it instead of making it again) and returns
// the channel to close when it is; nil when it is at hand, promised
// already, or made on the device. Caller holds r.mu.
func (r *Runner) promiseRef(prep *Prepared, key string) chan struct{} {
	if _, onDevice := prep.Family.(profiler.DeviceReference); onDevice {
		return nil // made with the device, on the device thread
	}
	if r.refs[key] != nil || r.refMaking[key] != nil {
		return nil
	}
	done := make(chan struct{})
	r.refMaking[key] = done
	return done
}

// makeReference computes the promised reference of prep's spec from set's
// inputs and keeps it where verify looks first, then calls done (a
// reference that fails is made again, and fails, in verify).
func (r *Runner) makeReference(prep *Prepared, set *inputSet, opt profiler.Options, key string, done func()) {
	r.mu.Lock()
	inputs := profiler.Inputs(set.data)
	r.mu.Unlock()
	defer done()
	ref, err := r.shared.reference(key, func() (*profiler.Reference, error) {
		return prep.Family.Reference(prep.Spec, inputs, opt.MaxRows, opt.Seed)
	})
	if err == nil {
		r.mu.Lock()
		r.keepRef(key, ref)
		r.mu.Unlock()
	}
}

// keepRef stores a reference; caller holds r.mu.
func (r *Runner) keepRef(key string, ref *profiler.Reference) {
	if len(r.refs) > 64 {
		clear(r.refs)
	}
	r.refs[key] = ref
}
