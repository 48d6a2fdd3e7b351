//go:build unix

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
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

const signalChildEnv = "MLTOP_TEST_SIGNAL_CHILD"

// TestSecondSignalKillsOnlyAfterTheWindow: in a process of its own with
// real signals and a fake clock, a ctrl-C cancels, its repeat 1 µs later
// is ignored, and a ctrl-C 1 s after the first kills the process by
// SIGINT (the shell's 130), as an uncaught ctrl-C does.
func TestSecondSignalKillsOnlyAfterTheWindow(t *testing.T) {
	if os.Getenv(signalChildEnv) == "1" {
		signalChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalKillsOnlyAfterTheWindow$")
	cmd.Env = append(os.Environ(), signalChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		t.Fatalf("the child did not start: %v", err)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("the child ended with %v, want killed by SIGINT:\n%s", cmd.ProcessState, out)
	}
	if !strings.Contains(string(out), "cancelled\nrepeat ignored\n") {
		t.Errorf("the child did not outlive the repeat:\n%s", out)
	}
}

// signalChild is the child of TestSecondSignalKillsOnlyAfterTheWindow. It
// waits for each signal to be read (the clock is read then) before it
// sends the next: two pending SIGINTs would merge into one.
func signalChild() {
	offsets := []time.Duration{0, time.Microsecond, time.Second}
	read := make(chan struct{}, len(offsets))
	n := 0
	clock := func() time.Time {
		d := offsets[n]
		n++
		read <- struct{}{}
		return time.Unix(1000, 0).Add(d)
	}
	ctx, stop := watchSignals(clock, dieBy)
	defer stop()
	interrupt := func() {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		<-read
	}
	interrupt()
	<-ctx.Done()
	fmt.Println("cancelled")
	interrupt()
	fmt.Println("repeat ignored")
	interrupt()
	time.Sleep(20 * time.Second) // dieBy ends the process long before
	fmt.Println("still running after a second ctrl-C")
	os.Exit(4)
}
