package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/mltop/mltop/cuda"
)

// processStart is close to when the process started (package init).
var processStart = time.Now()

// traceStep prints, when MLTOP_TRACE_STARTUP is set, how long after the
// process started a step of a sweep was reached: with the workers' own
// start-up lines it shows where a multi-GPU sweep's time outside the
// devices' wall goes (before the first worker, after the last result).
func traceStep(what string) {
	if os.Getenv(cuda.StartupTraceEnv) == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "mltop trace: %8.1f ms  %s\n", float64(time.Since(processStart).Microseconds())/1e3, what)
}
