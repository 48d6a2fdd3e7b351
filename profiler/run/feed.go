package run

import (
	"context"
	"errors"

	"github.com/mltop/mltop/profiler"
)

// feed hands a sweep's jobs to the loop that runs them, one at a time,
// from a goroutine that makes them (from a slice, or a SweepSource that
// is never expanded): the loop holds only the jobs it looks ahead at.
type feed struct {
	ch     chan profiler.Job
	done   chan struct{}
	cancel context.CancelFunc
	// Set by the producer; read only after done is closed.
	total   int // jobs of the sweep (of the shard), skipped ones included
	skipped int // jobs in skip
	err     error
	// claims, when set, decide which jobs this shard runs (claim).
	claims *shardClaims
}

// jobSource walks a sweep's jobs; yield false stops it.
type jobSource func(ctx context.Context, yield func(profiler.Job) bool) error

func startFeed(ctx context.Context, src jobSource, skip map[string]bool) *feed {
	return startClaimFeed(ctx, src, skip, nil)
}

// startClaimFeed is startFeed for a shard with claims (nil: none): the
// other shards' specs src yields (othersTail, which skips those in skip
// itself) are not counted in total.
func startClaimFeed(ctx context.Context, src jobSource, skip map[string]bool, claims *shardClaims) *feed {
	ctx, cancel := context.WithCancel(ctx)
	f := &feed{ch: make(chan profiler.Job, Lookahead()+1), done: make(chan struct{}), cancel: cancel, claims: claims}
	go func() {
		defer close(f.done)
		defer close(f.ch)
		err := src(ctx, func(j profiler.Job) bool {
			if !claims.other(j) {
				f.total++
				if skip[j.Spec.Key()] {
					f.skipped++
					return true
				}
			}
			select {
			case f.ch <- j:
				return true
			case <-ctx.Done():
				return false
			}
		})
		if !errors.Is(err, context.Canceled) {
			f.err = err
		}
	}()
	return f
}

// sliceSource walks jobs.
func sliceSource(jobs []profiler.Job) jobSource {
	return func(ctx context.Context, yield func(profiler.Job) bool) error {
		for _, j := range jobs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !yield(j) {
				return nil
			}
		}
		return nil
	}
}

// streamSource walks the jobs of st that belong to shard (all when nil),
// with their options turned by opts (kept when nil).
func streamSource(st SweepSource, shard SweepShard, opts func(profiler.Options) profiler.Options) jobSource {
	return func(ctx context.Context, yield func(profiler.Job) bool) error {
		more := true
		err := st.Walk(ctx, func(i int, j profiler.Job) bool {
			if shard != nil && !shard.Owns(i) {
				return true
			}
			if opts != nil {
				j.Options = opts(j.Options)
			}
			more = yield(j)
			return more
		})
		if err == nil && !more {
			return ctx.Err()
		}
		return err
	}
}

// claim says whether the loop runs j (it always does without claims).
func (f *feed) claim(j profiler.Job) bool { return f.claims.run(j) }

// next is the next job to run; false when there is none left (or the
// sweep was cancelled).
func (f *feed) next() (profiler.Job, bool) {
	j, ok := <-f.ch
	return j, ok
}

// stop ends the producer and waits for it: its counts are final after.
func (f *feed) stop() {
	f.cancel()
	for range f.ch { // unblock a producer waiting to send
	}
	<-f.done
}

// finished says whether the producer walked the whole sweep (its total
// and skipped counts are the sweep's); valid after stop.
func (f *feed) finished(ctx context.Context) bool { return ctx.Err() == nil && f.err == nil }
