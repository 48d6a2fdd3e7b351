//go:build linux

package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

// A signal whose handler is Go's but whose flags were dropped (as NVRTC
// leaves SIGINT and SIGTERM) gets Go's flags back; others are untouched.
func TestRepairGoSignalFlags(t *testing.T) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGXFSZ) // Go's handler on SIGXFSZ
	defer signal.Reset(syscall.SIGXFSZ)
	ref, ok := getSigaction(sigURG)
	if !ok || ref.flags&saOnStack == 0 {
		t.Skip("no Go handler on SIGURG to compare with")
	}
	a, _ := getSigaction(int(syscall.SIGXFSZ))
	if a.handler != ref.handler {
		t.Fatalf("SIGXFSZ's handler %#x is not Go's %#x after signal.Notify", a.handler, ref.handler)
	}
	broken := a
	broken.flags &^= saOnStack | saSigInfo
	if !setSigaction(int(syscall.SIGXFSZ), broken) {
		t.Fatal("rt_sigaction refused")
	}
	fixed := repairGoSignalFlags()
	got, _ := getSigaction(int(syscall.SIGXFSZ))
	if got.flags != ref.flags || len(fixed) == 0 {
		t.Errorf("after the repair SIGXFSZ's flags are %#x, want Go's %#x (repaired %v)", got.flags, ref.flags, fixed)
	}
	if again := repairGoSignalFlags(); len(again) != 0 {
		t.Errorf("a second repair changed %v", again)
	}
}

const signalAfterCompileChild = "MLTOP_TEST_SIGNAL_AFTER_COMPILE"

// After an NVRTC compile, SIGINT and SIGTERM keep Go's handler with Go's
// flags, and a SIGTERM reaches os/signal: the process does not die in the
// runtime ("handler not on signal stack"), which without the flags it may,
// depending on which thread the signal lands on.
func TestSIGTERMAfterNVRTCCompile(t *testing.T) {
	if os.Getenv(signalAfterCompileChild) == "1" {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		if _, err := CheckCompile(profiler.Program{Code: "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1; }", File: "k.cu", Entry: "k"}, ""); err != nil {
			os.Stdout.WriteString("no compile: " + err.Error() + "\n")
			return
		}
		ref, _ := getSigaction(sigURG)
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			signal.Notify(make(chan os.Signal, 1), sig)
			if a, _ := getSigaction(int(sig)); a.handler == ref.handler && a.flags != ref.flags {
				fmt.Printf("%v: Go's handler with flags %#x, not Go's %#x\n", sig, a.flags, ref.flags)
			}
		}
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		select {
		case <-ch:
			os.Stdout.WriteString("caught SIGTERM\n")
		case <-time.After(10 * time.Second):
			os.Stdout.WriteString("no SIGTERM\n")
		}
		return
	}
	if _, err := loadNVRTC(); err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGTERMAfterNVRTCCompile$")
	cmd.Env = append(os.Environ(), signalAfterCompileChild+"=1")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "no compile:") {
		t.Skipf("%s", out)
	}
	if err != nil || !strings.Contains(string(out), "caught SIGTERM") || strings.Contains(string(out), "not Go's") {
		t.Errorf("the child: %v\n%s", err, out)
	}
}
