package profiler

import (
	"context"
	"fmt"
)

// Summary counts a sweep's outcomes.
type Summary struct {
	Total, Skipped int
	ByStatus       map[Status]int
	Failed         int // mismatch, compile_error, crashed, timeout, error, cancelled
	Invalid        int
}

// ExitCode maps a sweep's outcome to the process exit code: 1 if any spec
// failed, else 2 if any spec was invalid, else 0.
func (s Summary) ExitCode() int {
	switch {
	case s.Failed > 0:
		return 1
	case s.Invalid > 0:
		return 2
	}
	return 0
}

// String is the one-line summary printed at the end of a sweep.
func (s Summary) String() string {
	msg := fmt.Sprintf("%d specs: %d ok", s.Total, s.ByStatus[StatusOK])
	for _, st := range []Status{StatusMismatch, StatusCompileError, StatusCrashed, StatusTimeout, StatusError, StatusCancelled, StatusInvalid, StatusUnchecked} {
		if n := s.ByStatus[st]; n > 0 {
			msg += fmt.Sprintf(", %d %s", n, st)
		}
	}
	if s.Skipped > 0 {
		msg += fmt.Sprintf(" (%d skipped: already in the --resume file)", s.Skipped)
	}
	return msg
}

// SweepHooks let the CLI draw progress.
type SweepHooks struct {
	Start    func(i, n int, s Spec)
	Progress func(i, n int, s Spec, p Progress)
	Done     func(i, n int, r Result)
}

// RunJobs runs jobs in order on exec, skipping those whose Spec.Key is in
// skip, and hands each Result to every sink as soon as it is known.
func RunJobs(ctx context.Context, exec Executor, jobs []Job, skip map[string]bool, sinks []Sink, h SweepHooks) (Summary, error) {
	sum := Summary{ByStatus: map[Status]int{}}
	var todo []Job
	for _, j := range jobs {
		if skip[j.Spec.Key()] {
			sum.Skipped++
			continue
		}
		todo = append(todo, j)
	}
	sum.Total = len(jobs)
	for i, j := range todo {
		if ctx.Err() != nil {
			break
		}
		if h.Start != nil {
			h.Start(i, len(todo), j.Spec)
		}
		if pf, ok := exec.(Prefetcher); ok && i+1 < len(todo) {
			pf.Prefetch(todo[i+1].Spec)
		}
		res := exec.Run(ctx, j.Spec, j.Options, func(p Progress) {
			if h.Progress != nil {
				h.Progress(i, len(todo), j.Spec, p)
			}
		})
		sum.ByStatus[res.Status]++
		if res.Status == StatusInvalid {
			sum.Invalid++
		} else if res.Status.Failed() {
			sum.Failed++
		}
		for _, s := range sinks {
			if err := s.Write(res); err != nil {
				return sum, fmt.Errorf("writing result: %w", err)
			}
		}
		if h.Done != nil {
			h.Done(i, len(todo), res)
		}
	}
	return sum, ctx.Err()
}
