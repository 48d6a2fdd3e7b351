//go:build unix

package cli

import (
	"syscall"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// TestSIGTERMIsNotCtrlC: a SIGTERM cancels with a cause that results
// report as "terminated (SIGTERM)", not "cancelled by user".
func TestSIGTERMIsNotCtrlC(t *testing.T) {
	ctx, stop := signalContext()
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not cancel the context")
	}
	if got := run.CancelReason(ctx); got != "terminated (SIGTERM)" {
		t.Errorf("a result cut short by SIGTERM says %q", got)
	}
	if causeOf(syscall.SIGINT) != nil {
		t.Error("ctrl-C should cancel without a cause (cancelled by user)")
	}
}
