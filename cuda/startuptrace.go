package cuda

import (
	"fmt"
	"os"
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// StartupTraceEnv, when set, makes a process print how long each step of
// opening the CUDA backend took (to stderr, one line per step): the data
// behind `--phases`' start-up figure when several workers start at once.
const StartupTraceEnv = run.TraceStartupEnv

// startupTrace times the steps of one open; nil when tracing is off.
type startupTrace struct {
	t0, last time.Time
}

func newStartupTrace() *startupTrace {
	if os.Getenv(StartupTraceEnv) == "" {
		return nil
	}
	now := time.Now()
	return &startupTrace{t0: now, last: now}
}

// step prints the time since the previous step and since the open began.
func (t *startupTrace) step(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	// the clock time lines up the steps of workers that start together
	fmt.Fprintf(os.Stderr, "mltop cuda start-up: %-22s %7.1f ms (at %7.1f ms, %s, pid %d)\n", name, float64(now.Sub(t.last).Microseconds())/1e3, float64(now.Sub(t.t0).Microseconds())/1e3, now.Format("15:04:05.000"), os.Getpid())
	t.last = now
}
