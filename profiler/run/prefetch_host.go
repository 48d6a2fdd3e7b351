package run

import (
	"context"
	"fmt"
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

// prefetchHostWork makes the inputs and the float64 reference of prep's
// shape on a goroutine while the current spec is measured, so that a sweep
// moving to a new shape does not hold the GPU idle while the host
// generates, encodes and checks: the spec that needs them waits only for
// what is not done yet (allocate, verify). One shape ahead at a time, and
// nothing when the shape's inputs are at hand or are too large for the
// input cache to keep beside the current set.
func (r *Runner) prefetchHostWork(prep *Prepared, opt profiler.Options) {
	key := inputKey(prep.Spec, opt.Seed)
	var gen []profiler.BufferSpec
	var size int64
	for _, b := range prep.Plan.Buffers {
		if b.Init.Generated() {
			gen = append(gen, b)
			size += 4*b.Elems + b.Bytes()
		}
	}
	if size > inputCacheBytes/2 {
		return
	}
	r.mu.Lock()
	if r.prefetching || r.inputs.find(key) != nil {
		r.mu.Unlock()
		return
	}
	set := &inputSet{key: key, data: map[string][]float32{}, raw: map[string][]byte{}, ready: make(chan struct{})}
	r.inputs.sets = append(r.inputs.sets, set)
	r.prefetching = true
	// The reference is promised now, so that a spec of this shape that
	// reaches verify before it is made waits instead of making it too.
	refK := refKey(prep.Spec, opt)
	refDone := r.promiseRef(prep, refK)
	r.mu.Unlock()
	keepPromise := sync.OnceFunc(func() { // verify stops waiting, whatever happened
		if refDone != nil {
			r.mu.Lock()
			delete(r.refMaking, refK)
			r.mu.Unlock()
			close(refDone)
		}
	})
	go func() {
		defer func() {
			// A family that panics here panics again, where it is
			// reported, when its spec runs.
			_ = recover()
			keepPromise()
			r.mu.Lock()
			r.prefetching = false
			r.mu.Unlock()
		}()
		r.makeInputs(set, gen, opt.Seed)
		if refDone != nil {
			r.makeReference(prep, set, opt, refK, keepPromise)
		}
	}()
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
